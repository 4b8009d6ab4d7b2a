package io.flashvec.cluster.transport;

import com.google.protobuf.ByteString;
import io.flashvec.cluster.transport.grpc.CollectionConfigMsg;
import io.flashvec.cluster.transport.grpc.Id;
import io.flashvec.cluster.transport.grpc.OrderedMsg;
import io.flashvec.cluster.transport.grpc.PointMsg;
import io.flashvec.cluster.transport.grpc.RecordMsg;
import io.flashvec.cluster.transport.grpc.ScrollReply;
import io.flashvec.cluster.transport.grpc.SearchStatsMsg;
import io.flashvec.cluster.transport.grpc.ShardOrderedScrollRequest;
import io.flashvec.cluster.transport.grpc.ShardRef;
import io.flashvec.cluster.transport.grpc.ShardScrollRequest;
import io.flashvec.cluster.transport.grpc.ShardSearchRequest;
import io.flashvec.cluster.transport.grpc.ShardTextSearchRequest;
import io.flashvec.index.CollectionConfig;
import io.flashvec.index.CollectionTuning;
import io.flashvec.index.Distance;
import io.flashvec.index.IndexParams;
import io.flashvec.index.Point;
import io.flashvec.index.PointId;
import io.flashvec.index.Record;
import io.flashvec.index.ScrollPage;
import io.flashvec.index.SearchParams;
import io.flashvec.index.SearchStats;
import io.flashvec.index.payload.PayloadSchema;
import io.flashvec.index.query.Ordered;
import io.flashvec.index.query.OrderedScrollRequest;
import io.flashvec.index.query.ScrollRequest;
import io.flashvec.index.query.SearchRequest;
import io.flashvec.index.query.TextSearchRequest;
import io.flashvec.storage.FsyncPolicy;
import java.util.ArrayList;
import java.util.List;

/** Conversions between the engine's types and the protobuf messages of {@code ShardService}. */
public final class Protos {

  private Protos() {}

  public static Id id(PointId id) {
    return Id.newBuilder().setUuid(id.isUuid()).setHi(id.hiBits()).setLo(id.loBits()).build();
  }

  public static PointId id(Id id) {
    return id.getUuid()
        ? PointId.of(new java.util.UUID(id.getHi(), id.getLo()))
        : PointId.of(id.getLo());
  }

  public static List<Id> ids(List<PointId> ids) {
    List<Id> out = new ArrayList<>(ids.size());
    for (PointId i : ids) {
      out.add(id(i));
    }
    return out;
  }

  public static List<PointId> pointIds(List<Id> ids) {
    List<PointId> out = new ArrayList<>(ids.size());
    for (Id i : ids) {
      out.add(id(i));
    }
    return out;
  }

  public static PointMsg point(Point p) {
    PointMsg.Builder b = PointMsg.newBuilder().setId(id(p.id()));
    float[] v = p.vector();
    for (float f : v) {
      b.addVector(f);
    }
    if (p.payload() != null) {
      b.setPayload(ByteString.copyFrom(p.payload()));
    }
    return b.build();
  }

  public static Point point(PointMsg m) {
    return new Point(
        id(m.getId()),
        floats(m.getVectorList()),
        m.hasPayload() ? m.getPayload().toByteArray() : null);
  }

  public static List<PointMsg> pointMsgs(List<Point> ps) {
    List<PointMsg> out = new ArrayList<>(ps.size());
    for (Point p : ps) {
      out.add(point(p));
    }
    return out;
  }

  public static List<Point> points(List<PointMsg> ms) {
    List<Point> out = new ArrayList<>(ms.size());
    for (PointMsg m : ms) {
      out.add(point(m));
    }
    return out;
  }

  public static RecordMsg record(Record r) {
    RecordMsg.Builder b = RecordMsg.newBuilder().setId(id(r.id())).setScore(r.score());
    if (r.vector() != null) {
      b.setHasVector(true);
      for (float f : r.vector()) {
        b.addVector(f);
      }
    }
    if (r.payload() != null) {
      b.setPayload(ByteString.copyFrom(r.payload()));
    }
    return b.build();
  }

  public static Record record(RecordMsg m) {
    return new Record(
        id(m.getId()),
        m.getScore(),
        m.getHasVector() ? floats(m.getVectorList()) : null,
        m.hasPayload() ? m.getPayload().toByteArray() : null);
  }

  public static List<RecordMsg> recordMsgs(List<Record> rs) {
    List<RecordMsg> out = new ArrayList<>(rs.size());
    for (Record r : rs) {
      out.add(record(r));
    }
    return out;
  }

  public static List<Record> records(List<RecordMsg> ms) {
    List<Record> out = new ArrayList<>(ms.size());
    for (RecordMsg m : ms) {
      out.add(record(m));
    }
    return out;
  }

  public static float[] floats(List<Float> list) {
    float[] v = new float[list.size()];
    for (int i = 0; i < v.length; i++) {
      v[i] = list.get(i);
    }
    return v;
  }

  public static CollectionConfigMsg config(
      CollectionConfig c, CollectionTuning t, PayloadSchema payloadSchema) {
    return CollectionConfigMsg.newBuilder()
        .setDimension(c.dimension())
        .setDistance(c.distance().apiName())
        .setShardNumber(c.shardNumber())
        .setReplicationFactor(c.replicationFactor())
        .setIndexType(c.index().type())
        .setMaxDegree(c.index().maxDegree())
        .setBuildSearchList(c.index().buildSearchList())
        .setAlpha(c.index().alpha())
        .setPqSubspaces(c.index().pqSubspaces())
        .setIndexingThreshold(t.indexingThreshold())
        .setFsyncPolicy(t.fsyncPolicy() == null ? "" : t.fsyncPolicy().configName())
        .setPayloadSchemaJson(payloadSchema.isEmpty() ? "" : payloadSchema.toJsonString())
        .setPayloadsOnHeap(!t.onDiskPayload())
        .build();
  }

  public static CollectionConfig config(CollectionConfigMsg m) {
    return new CollectionConfig(
        m.getDimension(),
        Distance.parse(m.getDistance()),
        m.getShardNumber(),
        m.getReplicationFactor(),
        new IndexParams(
            m.getIndexType(),
            m.getMaxDegree(),
            m.getBuildSearchList(),
            m.getAlpha(),
            m.getPqSubspaces()));
  }

  public static CollectionTuning tuning(CollectionConfigMsg m) {
    return new CollectionTuning(
        m.getIndexingThreshold(),
        m.getFsyncPolicy().isEmpty() ? null : FsyncPolicy.parse(m.getFsyncPolicy()),
        !m.getPayloadsOnHeap());
  }

  public static PayloadSchema payloadSchema(CollectionConfigMsg m) {
    return PayloadSchema.fromJsonString(m.getPayloadSchemaJson());
  }

  public static OrderedMsg ordered(Ordered o) {
    return OrderedMsg.newBuilder().setRecord(record(o.record())).setValue(o.value()).build();
  }

  public static List<OrderedMsg> orderedMsgs(List<Ordered> os) {
    List<OrderedMsg> out = new ArrayList<>(os.size());
    for (Ordered o : os) {
      out.add(ordered(o));
    }
    return out;
  }

  public static Ordered ordered(OrderedMsg m) {
    return new Ordered(record(m.getRecord()), m.getValue());
  }

  public static SearchStatsMsg stats(SearchStats s) {
    return SearchStatsMsg.newBuilder()
        .setSegments(s.segments)
        .setVisited(s.visited)
        .setExpanded(s.expanded)
        .setReranked(s.reranked)
        .setDistanceComputations(s.distanceComputations)
        .setPagesRead(s.pagesRead)
        .setNodeCacheHits(s.nodeCacheHits)
        .build();
  }

  public static void addStats(SearchStats into, SearchStatsMsg m) {
    into.segments += m.getSegments();
    into.visited += m.getVisited();
    into.expanded += m.getExpanded();
    into.reranked += m.getReranked();
    into.distanceComputations += m.getDistanceComputations();
    into.pagesRead += m.getPagesRead();
    into.nodeCacheHits += m.getNodeCacheHits();
  }

  // ------------------------------------------------------------------ requests

  /** A search of one shard for the best {@code k}, where the proxy asked for {@code req}. */
  public static ShardSearchRequest search(ShardRef shard, SearchRequest req, int k) {
    ShardSearchRequest.Builder b =
        ShardSearchRequest.newBuilder()
            .setShard(shard)
            .setK(k)
            .setSearchList(req.params().searchList())
            .setBeamWidth(req.params().beamWidth())
            .setRerankK(req.params().rerankK())
            .setExact(req.params().exact())
            .setWithPayload(req.withPayload())
            .setWithVector(req.withVector())
            .setFilter(FilterProtos.message(req.filter()));
    for (float f : req.vector()) {
      b.addVector(f);
    }
    if (req.scoreThreshold() != null) {
      b.setScoreThreshold(req.scoreThreshold());
    }
    return b.build();
  }

  /** The request a shard runs: its best {@code k}, without offset. */
  public static SearchRequest search(ShardSearchRequest m) {
    return new SearchRequest(
        floats(m.getVectorList()),
        m.getK(),
        0,
        m.hasScoreThreshold() ? m.getScoreThreshold() : null,
        new SearchParams(m.getSearchList(), m.getBeamWidth(), m.getRerankK(), m.getExact()),
        m.getWithPayload(),
        m.getWithVector(),
        FilterProtos.filter(m.getFilter()));
  }

  public static ShardScrollRequest scroll(ShardRef shard, ScrollRequest req) {
    ShardScrollRequest.Builder b =
        ShardScrollRequest.newBuilder()
            .setShard(shard)
            .setLimit(req.limit())
            .setWithPayload(req.withPayload())
            .setWithVector(req.withVector())
            .setFilter(FilterProtos.message(req.filter()));
    if (req.offset() != null) {
      b.setOffset(id(req.offset()));
    }
    return b.build();
  }

  public static ScrollRequest scroll(ShardScrollRequest m) {
    return new ScrollRequest(
        m.hasOffset() ? id(m.getOffset()) : null,
        m.getLimit(),
        m.getWithPayload(),
        m.getWithVector(),
        FilterProtos.filter(m.getFilter()));
  }

  public static ScrollReply reply(ScrollPage page) {
    ScrollReply.Builder b = ScrollReply.newBuilder();
    for (Record r : page.points()) {
      b.addRecords(record(r));
    }
    if (page.nextOffset() != null) {
      b.setNextOffset(id(page.nextOffset()));
    }
    return b.build();
  }

  public static ScrollPage page(ScrollReply m) {
    return new ScrollPage(
        records(m.getRecordsList()), m.hasNextOffset() ? id(m.getNextOffset()) : null);
  }

  public static ShardTextSearchRequest textSearch(ShardRef shard, TextSearchRequest req) {
    return ShardTextSearchRequest.newBuilder()
        .setShard(shard)
        .setField(req.field())
        .setText(req.text())
        .setLimit(req.limit())
        .setFilter(FilterProtos.message(req.filter()))
        .setWithPayload(req.withPayload())
        .setWithVector(req.withVector())
        .build();
  }

  public static TextSearchRequest textSearch(ShardTextSearchRequest m) {
    return new TextSearchRequest(
        m.getField(),
        m.getText(),
        m.getLimit(),
        FilterProtos.filter(m.getFilter()),
        m.getWithPayload(),
        m.getWithVector());
  }

  public static ShardOrderedScrollRequest orderedScroll(ShardRef shard, OrderedScrollRequest req) {
    ShardOrderedScrollRequest.Builder b =
        ShardOrderedScrollRequest.newBuilder()
            .setShard(shard)
            .setKey(req.key())
            .setAscending(req.ascending())
            .setLimit(req.limit())
            .setFilter(FilterProtos.message(req.filter()))
            .setWithPayload(req.withPayload())
            .setWithVector(req.withVector());
    if (req.startFrom() != null) {
      b.setStartFrom(req.startFrom());
    }
    return b.build();
  }

  public static OrderedScrollRequest orderedScroll(ShardOrderedScrollRequest m) {
    return new OrderedScrollRequest(
        m.getKey(),
        m.getAscending(),
        m.hasStartFrom() ? m.getStartFrom() : null,
        m.getLimit(),
        FilterProtos.filter(m.getFilter()),
        m.getWithPayload(),
        m.getWithVector());
  }
}
