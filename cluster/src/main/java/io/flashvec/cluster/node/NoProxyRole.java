package io.flashvec.cluster.node;

import io.flashvec.cluster.Aliases;
import io.flashvec.cluster.CollectionService;
import io.flashvec.index.CollectionConfig;
import io.flashvec.index.CollectionTuning;
import io.flashvec.index.Point;
import io.flashvec.index.PointId;
import io.flashvec.index.Record;
import io.flashvec.index.ScrollPage;
import io.flashvec.index.SearchStats;
import io.flashvec.index.UnavailableException;
import io.flashvec.index.collection.Collection;
import io.flashvec.index.filter.Filter;
import io.flashvec.index.payload.PayloadFieldSchema;
import io.flashvec.index.query.Ordered;
import io.flashvec.index.query.OrderedScrollRequest;
import io.flashvec.index.query.ScrollRequest;
import io.flashvec.index.query.SearchRequest;
import io.flashvec.index.query.TextSearchRequest;
import io.flashvec.storage.FsyncPolicy;
import java.util.List;
import java.util.Map;
import java.util.function.BooleanSupplier;
import java.util.function.UnaryOperator;

/**
 * What the REST layer of a cluster node without the proxy role answers: 503 naming the node's roles
 * for every data call (clients must send them to a proxy), and ready once the node serves its
 * roles.
 */
final class NoProxyRole implements CollectionService {

  private final String roles;
  private final BooleanSupplier ready;

  NoProxyRole(String roles, BooleanSupplier ready) {
    this.roles = roles;
    this.ready = ready;
  }

  @Override
  public io.flashvec.index.CollectionConfig changeVectors(
      String collection, UnaryOperator<io.flashvec.index.CollectionConfig> change) {
    throw refused();
  }

  private UnavailableException refused() {
    return new UnavailableException(
        "Service unavailable: this node has no proxy role; send requests to a proxy [roles="
            + roles
            + "]");
  }

  @Override
  public boolean ready() {
    return ready.getAsBoolean();
  }

  @Override
  public void createCollection(String name, CollectionConfig config, CollectionTuning tuning) {
    throw refused();
  }

  @Override
  public boolean deleteCollection(String name) {
    throw refused();
  }

  @Override
  public List<String> listCollections() {
    throw refused();
  }

  @Override
  public Peers peers() {
    throw refused();
  }

  @Override
  public void updateAliases(List<Aliases.Change> changes) {
    throw refused();
  }

  @Override
  public Map<String, String> aliases() {
    throw refused();
  }

  @Override
  public boolean exists(String name) {
    throw refused();
  }

  @Override
  public CollectionDescription describe(String name) {
    throw refused();
  }

  @Override
  public ClusterInfo clusterInfo(String name) {
    throw refused();
  }

  @Override
  public Collection.UpdateResult upsert(String collection, List<Point> points, boolean wait) {
    throw refused();
  }

  @Override
  public Collection.UpdateResult delete(String collection, List<PointId> ids, boolean wait) {
    throw refused();
  }

  @Override
  public Collection.UpdateResult deleteByFilter(String collection, Filter filter, boolean wait) {
    throw refused();
  }

  @Override
  public Collection.UpdateResult updatePayloadsByFilter(
      String collection, Filter filter, UnaryOperator<byte[]> update, boolean wait) {
    throw refused();
  }

  @Override
  public long count(String collection, Filter filter) {
    throw refused();
  }

  @Override
  public ScrollPage scroll(String collection, ScrollRequest request) {
    throw refused();
  }

  @Override
  public Collection.UpdateResult updatePayloads(
      String collection, List<PointId> ids, UnaryOperator<byte[]> update, boolean wait) {
    throw refused();
  }

  @Override
  public Collection.UpdateResult updateVectors(
      String collection, List<Point> points, boolean wait) {
    throw refused();
  }

  @Override
  public List<Record> retrieve(
      String collection, List<PointId> ids, boolean withPayload, boolean withVector) {
    throw refused();
  }

  @Override
  public List<Record> search(String collection, SearchRequest request, SearchStats stats) {
    throw refused();
  }

  @Override
  public void flush(String collection) {
    throw refused();
  }

  @Override
  public int evictFromPageCache(String collection) {
    throw refused();
  }

  @Override
  public CollectionTuning updateCollection(
      String collection,
      Integer indexingThreshold,
      FsyncPolicy fsyncPolicy,
      Boolean onDiskPayload) {
    throw refused();
  }

  @Override
  public Collection.UpdateResult createPayloadIndex(
      String collection, PayloadFieldSchema field, boolean wait) {
    throw refused();
  }

  @Override
  public Collection.UpdateResult deletePayloadIndex(String collection, String field, boolean wait) {
    throw refused();
  }

  @Override
  public List<Record> textSearch(String collection, TextSearchRequest request) {
    throw refused();
  }

  @Override
  public List<Ordered> scrollOrdered(String collection, OrderedScrollRequest request) {
    throw refused();
  }

  @Override
  public void compact(String collection, boolean force) {
    throw refused();
  }

  @Override
  public String toString() {
    return "NoProxyRole[" + roles + "]";
  }
}
