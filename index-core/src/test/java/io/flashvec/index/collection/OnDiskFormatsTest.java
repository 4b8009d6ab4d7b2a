package io.flashvec.index.collection;

import static org.assertj.core.api.Assertions.assertThat;

import io.flashvec.index.CollectionConfig;
import io.flashvec.index.Distance;
import io.flashvec.index.IndexParams;
import io.flashvec.index.Point;
import io.flashvec.index.PointId;
import io.flashvec.index.Record;
import io.flashvec.index.SearchParams;
import io.flashvec.index.filter.Filter;
import io.flashvec.index.filter.FilterParser;
import io.flashvec.index.payload.PayloadFieldSchema;
import io.flashvec.index.query.SearchRequest;
import io.flashvec.index.shard.LiveIndexer;
import io.flashvec.index.shard.Shard;
import io.flashvec.storage.FileIO;
import io.flashvec.storage.Wal;
import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.net.URISyntaxException;
import java.net.URL;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.concurrent.Executor;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import tools.jackson.databind.json.JsonMapper;

/**
 * Opens collections written by earlier versions of FlashVec, kept as small binary fixtures under
 * {@code src/test/resources/formats/}, and checks every point: a change to an on-disk format (the
 * WAL, the shard manifest, a segment's metadata, graph, PQ codes or deletion bits, the payload
 * schema) that cannot read what users already have on disk fails this test.
 *
 * <p>Each fixture is one collection of one shard: a sealed DiskANN segment with deletions
 * checkpointed in its bitmap, a payload index, and a WAL tail after the checkpoint (upserts, a
 * replaced point and deletes) that recovery replays. The content is {@link #expected}: fixed
 * vectors and payloads, so no seed is involved. {@link #write} makes a new fixture when a format
 * version changes (run it with {@code -Dformats.write=<dir>}, then add the directory under {@code
 * src/test/resources/formats/} and a line to {@link #fixturesOpen}); old fixtures stay. With {@code
 * -Dformats.raw=true} its sealed segment is sealed raw (no graph), as a bulk load seals; with
 * {@code -Dformats.sparse=true} the collection has sparse vectors and points without the dense one;
 * {@code -Dformats.named=true} adds named vectors, and {@code -Dformats.multi=true} a multivector.
 */
class OnDiskFormatsTest {

  static final int DIM = 8;
  static final int SEAL = 32;
  static final CollectionConfig CONFIG =
      new CollectionConfig(DIM, Distance.EUCLID, 1, 1, IndexParams.DEFAULT);

  static final String SPARSE = "s";

  /**
   * The configuration of the fixtures with sparse vectors ({@code v2-sparse}: WAL operation 3,
   * segment metadata v3 with {@code vectors.fvs}): the sparse field {@value #SPARSE}; every fourth
   * point (from 1) lacks the dense vector and every odd point has a sparse one.
   */
  static final CollectionConfig CONFIG_SPARSE =
      new CollectionConfig(
          DIM,
          Distance.EUCLID,
          1,
          1,
          IndexParams.DEFAULT,
          java.util.Map.of(SPARSE, io.flashvec.index.SparseVectorParams.DEFAULT));

  static final String OTHER = "b";

  /**
   * The configuration of the fixture with named vectors ({@code v2-named}: WAL operation 4, {@code
   * vectors.fvs} version 2): that of {@link #CONFIG_SPARSE} with the primary vector named {@code a}
   * and a second dense vector {@value #OTHER} (3 x Dot, on disk) on two points of three.
   */
  static final CollectionConfig CONFIG_NAMED =
      new CollectionConfig(
          DIM,
          Distance.EUCLID,
          1,
          1,
          IndexParams.DEFAULT,
          java.util.Map.of(SPARSE, io.flashvec.index.SparseVectorParams.DEFAULT),
          "a",
          java.util.Map.of(OTHER, new io.flashvec.index.DenseVectorParams(3, Distance.DOT, true)));

  /**
   * The configuration of the fixture without a primary vector ({@code v3-sparse-only}: segment
   * metadata v4 without graph, PQ or order files): the sparse field {@value #SPARSE} alone, on
   * every odd point; even points have no vector at all.
   */
  static final CollectionConfig CONFIG_SPARSE_ONLY =
      CollectionConfig.withoutPrimary(
          1,
          1,
          IndexParams.DEFAULT,
          java.util.Map.of(SPARSE, io.flashvec.index.SparseVectorParams.DEFAULT),
          java.util.Map.of());

  static final String MULTI = "m";

  /**
   * The configuration of the fixture with a multivector ({@code v3-multi}: WAL operation 5, {@code
   * vectors.fvs} v3, field kind {@code multi}): that of {@link #CONFIG_NAMED} with the multivector
   * field {@value #MULTI} (vectors of 2, Euclid, on the heap).
   */
  static final CollectionConfig CONFIG_MULTI =
      new CollectionConfig(
          DIM,
          Distance.EUCLID,
          1,
          1,
          IndexParams.DEFAULT,
          java.util.Map.of(SPARSE, io.flashvec.index.SparseVectorParams.DEFAULT),
          "a",
          orderedMap(
              OTHER,
              new io.flashvec.index.DenseVectorParams(3, Distance.DOT, true),
              MULTI,
              new io.flashvec.index.DenseVectorParams(2, Distance.EUCLID, false, true)));

  private static java.util.Map<String, io.flashvec.index.DenseVectorParams> orderedMap(
      String a,
      io.flashvec.index.DenseVectorParams pa,
      String b,
      io.flashvec.index.DenseVectorParams pb) {
    java.util.Map<String, io.flashvec.index.DenseVectorParams> m = new java.util.LinkedHashMap<>();
    m.put(a, pa);
    m.put(b, pb);
    return m;
  }

  /**
   * Point {@code i}'s multivector: {@code 1 + i % 3} vectors of 2 back to back, or {@code null}.
   */
  static float[] multi(int i) {
    if (i % 5 == 4) {
      return null;
    }
    float[] m = new float[2 * (1 + i % 3)];
    for (int j = 0; j < m.length; j++) {
      m[j] = (float) Math.cos(0.3 * i + 0.9 * j) * (1 + j % 3);
    }
    return m;
  }

  /** Point {@code i}'s second dense vector in the named fixture, or {@code null}. */
  static float[] other(int i) {
    return i % 3 == 2 ? null : new float[] {1 + i % 4, -0.5f * (i % 5), 0.125f * i};
  }

  /** Point {@code i}'s dense vector in a fixture with sparse vectors, or {@code null}. */
  static float[] dense(int i, boolean sparse) {
    return sparse && i % 4 == 1 ? null : vector(i);
  }

  /** Point {@code i}'s sparse vector, or {@code null}: fixed, overlapping, u32 indices. */
  static io.flashvec.index.SparseVector sparse(int i) {
    if (i % 2 == 0) {
      return null;
    }
    return io.flashvec.index.SparseVector.of(
        new long[] {i % 7, 10 + i % 5, 4_000_000_000L + i % 3},
        new float[] {1 + i % 4, -0.5f * (i % 3), 0.25f * i},
        "fixture");
  }

  /** Point {@code i}'s vector: fixed, distinct, not normalised. */
  static float[] vector(int i) {
    float[] v = new float[DIM];
    for (int j = 0; j < DIM; j++) {
      v[j] = (float) Math.sin(0.7 * i + 1.3 * j) * (1 + i % 5);
    }
    return v;
  }

  static byte[] payload(int i, int version) {
    String tag = i % 3 == 0 ? "red" : "blue";
    return ("{\"i\":" + i + ",\"tag\":\"" + tag + "\",\"v\":" + version + "}")
        .getBytes(StandardCharsets.UTF_8);
  }

  /** Ids deleted (3 and 5 before the seal's checkpoint; 7 and 35 after it, in the WAL). */
  static final List<Integer> DELETED = List.of(3, 5, 7, 35);

  /** The id rewritten after the checkpoint (new payload version 2, same vector). */
  static final int REWRITTEN = 1;

  static final int POINTS = 40;

  private static final JsonMapper M = JsonMapper.builder().build();

  @TempDir Path tmp;

  /** Writes the current version's fixture into {@code -Dformats.write} (skipped without it). */
  @Test
  void write() throws IOException {
    String target = System.getProperty("formats.write");
    org.junit.jupiter.api.Assumptions.assumeTrue(
        target != null, "writes a fixture only with -Dformats.write=<dir>");
    Path dir = Path.of(target);
    boolean multi = Boolean.getBoolean("formats.multi");
    boolean named = multi || Boolean.getBoolean("formats.named");
    boolean sparseOnly = Boolean.getBoolean("formats.sparseOnly");
    boolean sparse = named || sparseOnly || Boolean.getBoolean("formats.sparse");
    Shard.Options options = options();
    if (Boolean.getBoolean("formats.raw")) {
      // a live graph that never takes a point, and merges that never run: the seal is raw
      Executor never = task -> {};
      options =
          options
              .withLiveIndexer(LiveIndexer.of(never))
              .withCompaction(
                  new Shard.Compaction(
                      never,
                      null,
                      0.2,
                      Shard.Compaction.DEFAULT_SEGMENTS_PER_TIER,
                      Shard.Compaction.DEFAULT_MAX_SEGMENT_POINTS,
                      true));
    }
    try (Collection c =
        Collection.open("fixture", dir, config(sparse, named, sparseOnly, multi), options)) {
      c.createPayloadIndex(
          PayloadFieldSchema.parse("tag", M.getNodeFactory().stringNode("keyword")), true);
      c.upsert(withoutPrimary(points(0, SEAL, 1, sparse, named, multi), sparseOnly), true);
      c.delete(List.of(PointId.of(3), PointId.of(5)), true);
      // the next upsert seals the first 32 points; the build runs on this thread and checkpoints
      c.upsert(withoutPrimary(points(SEAL, POINTS, 1, sparse, named, multi), sparseOnly), true);
      c.delete(List.of(PointId.of(7), PointId.of(35)), true);
      c.upsert(
          List.of(
              new Point(
                  PointId.of(REWRITTEN),
                  sparseOnly ? null : dense(REWRITTEN, sparse),
                  payload(1, 2),
                  sparse ? sparseMap(REWRITTEN) : null,
                  named ? otherMap(REWRITTEN, multi) : null)),
          true);
    }
  }

  @Test
  void fixturesOpen() throws Exception {
    // one line per fixture; formats: WAL v1, shard manifest v1, segment meta v2, graph v1, PQ v2,
    // deletion bits v1, payload schema JSON
    check("formats/v1", false, true);
    // WAL op 3, segment meta v3 with vectors.fvs (sparse vectors, points without the dense one)
    check("formats/v2-sparse", true, true);
    // graph v2 (a raw segment: vectors without edges, searched by a scan)
    check("formats/v2-raw", false, false);
    // both: a raw segment with vectors.fvs (meta v3), points without the dense vector scanned
    check("formats/v2-raw-sparse", true, false);
    // WAL op 4, vectors.fvs v2: a named primary vector and a second dense vector kept on disk
    check("formats/v2-named", true, true, true);
    // segment meta v4: no primary vector, no graph, PQ or order file (ids, payloads, vectors.fvs)
    check("formats/v3-sparse-only", true, true, false, true, false);
    // WAL op 5, vectors.fvs v3 (field kind multi): a multivector field beside the named vectors
    check("formats/v3-multi", true, true, true, false, true);
  }

  private static CollectionConfig config(
      boolean sparse, boolean named, boolean sparseOnly, boolean multi) {
    return sparseOnly
        ? CONFIG_SPARSE_ONLY
        : multi ? CONFIG_MULTI : named ? CONFIG_NAMED : sparse ? CONFIG_SPARSE : CONFIG;
  }

  /** {@code points} without their primary vector when {@code sparseOnly}. */
  private static List<Point> withoutPrimary(List<Point> points, boolean sparseOnly) {
    if (!sparseOnly) {
      return points;
    }
    List<Point> out = new ArrayList<>();
    for (Point p : points) {
      out.add(new Point(p.id(), null, p.payload(), p.sparse(), p.dense()));
    }
    return out;
  }

  private void check(String fixture, boolean sparse, boolean graph)
      throws IOException, URISyntaxException {
    check(fixture, sparse, graph, false);
  }

  private void check(String fixture, boolean sparse, boolean graph, boolean named)
      throws IOException, URISyntaxException {
    check(fixture, sparse, graph, named, false, false);
  }

  private void check(
      String fixture,
      boolean sparse,
      boolean graph,
      boolean named,
      boolean sparseOnly,
      boolean multi)
      throws IOException, URISyntaxException {
    Path dir = tmp.resolve(fixture.replace('/', '-'));
    copy(fixture, dir);
    Path shardDir = dir.resolve("shards").resolve("0");
    // the WAL's own reader: the records after the checkpoint are there, in order
    List<Long> seqs = new ArrayList<>();
    java.util.Set<Byte> ops = new java.util.TreeSet<>();
    try (Wal wal =
        Wal.open(
            shardDir.resolve("wal"),
            FileIO.DEFAULT,
            Wal.Options.defaults(),
            1,
            (seq, op, body) -> {
              seqs.add(seq);
              ops.add(op);
            })) {
      assertThat(seqs).isNotEmpty();
      assertThat(wal.lastSeq()).isEqualTo(seqs.getLast());
    }
    if (multi) {
      assertThat(ops)
          .as("WAL operations")
          .contains(io.flashvec.index.shard.WalCodec.OP_UPSERT_MULTI);
    }
    try (Collection c =
        Collection.open("fixture", dir, config(sparse, named, sparseOnly, multi), options())) {
      assertThat(c.count()).isEqualTo(POINTS - DELETED.size());
      assertThat(c.info().segmentInfos().stream().filter(Collection.SegmentInfo::indexed))
          .as("the sealed segment, if it has a graph")
          .hasSize(graph ? 1 : 0);
      assertThat(c.info().segmentInfos().stream().filter(i -> i.graphPoints() == 0))
          .as("the sealed segment, if it is raw")
          .hasSize(graph ? 0 : 1);
      for (int i = 0; i < POINTS; i++) {
        Record r = c.get(PointId.of(i), true, true);
        if (DELETED.contains(i)) {
          assertThat(r).as("deleted point %d", i).isNull();
          continue;
        }
        assertThat(r).as("point %d", i).isNotNull();
        assertThat(r.vector())
            .as("vector of %d", i)
            .isEqualTo(sparseOnly ? null : dense(i, sparse));
        assertThat(r.sparse())
            .as("sparse vectors of %d", i)
            .isEqualTo(sparse ? sparseMap(i) : java.util.Map.of());
        if (named) {
          assertThat(r.dense() == null ? null : r.dense().get(OTHER))
              .as("vector %s of %d", OTHER, i)
              .isEqualTo(other(i));
        }
        if (multi) {
          assertThat(r.dense() == null ? null : r.dense().get(MULTI))
              .as("multivector %s of %d", MULTI, i)
              .isEqualTo(multi(i));
        }
        assertThat(new String(r.payload(), StandardCharsets.UTF_8))
            .as("payload of %d", i)
            .isEqualTo(new String(payload(i, i == REWRITTEN ? 2 : 1), StandardCharsets.UTF_8));
      }
      // the payload index and the graph answer as the points say
      Filter red =
          FilterParser.parse(
              M.readTree("{\"must\":[{\"key\":\"tag\",\"match\":{\"value\":\"red\"}}]}"), "filter");
      long reds = 0;
      for (int i = 0; i < POINTS; i++) {
        if (i % 3 == 0 && !DELETED.contains(i)) {
          reds++;
        }
      }
      assertThat(c.count(red)).isEqualTo(reds);
      assertThat(c.payloadSchema().field("tag")).isNotNull();
      for (int q : sparseOnly ? new int[0] : new int[] {0, 10, 20, 31, 36}) {
        List<Record> hits =
            c.search(
                new SearchRequest(
                    vector(q), 5, 0, null, new SearchParams(0, 0, 0, false), false, false, null));
        assertThat(hits.stream().map(h -> (int) h.id().number()).toList())
            .as("nearest to point %d", q)
            .isEqualTo(exactNearest(vector(q), 5, sparse));
      }
      if (sparseOnly) {
        org.assertj.core.api.Assertions.assertThatThrownBy(
                () ->
                    c.search(
                        new SearchRequest(
                            new float[] {1f},
                            5,
                            0,
                            null,
                            SearchParams.DEFAULT,
                            false,
                            false,
                            null)))
            .hasMessageContaining("Collection requires specified vector name in the request");
        try (Stream<Path> files = Files.walk(shardDir.resolve("segments"))) {
          assertThat(files.map(f -> f.getFileName().toString()))
              .as("a segment without a primary vector")
              .contains("meta.fvs", "vectors.fvs")
              .doesNotContain("graph.fvg", "pq.fvs", "order.fvs");
        }
      }
      if (sparse) {
        // the sparse search, exact: every live point whose sparse vector overlaps the query
        for (int q : new int[] {1, 9, 33}) {
          io.flashvec.index.SparseVector query = sparse(q);
          List<Record> hits =
              c.sparseSearch(
                  new io.flashvec.index.query.SparseSearchRequest(
                      SPARSE, query, POINTS, 0, null, null, false, false));
          List<Integer> want = new ArrayList<>();
          for (int i = 0; i < POINTS; i++) {
            if (!DELETED.contains(i) && sparse(i) != null && query.dot(sparse(i)) != 0f) {
              want.add(i);
            }
          }
          want.sort(
              Comparator.comparingDouble((Integer i) -> -query.dot(sparse(i)))
                  .thenComparing(i -> i));
          assertThat(hits.stream().map(h -> (int) h.id().number()).toList())
              .as("sparse search of point %d", q)
              .isEqualTo(want);
        }
      }
      if (named) {
        // the second dense vector, searched exactly by its own metric
        float[] query = {0.5f, 1f, -0.2371f};
        List<Record> hits =
            c.denseSearch(
                new io.flashvec.index.query.DenseSearchRequest(
                    OTHER, query, POINTS, 0, null, null, false, false));
        List<Integer> want = new ArrayList<>();
        for (int i = 0; i < POINTS; i++) {
          if (!DELETED.contains(i) && other(i) != null) {
            want.add(i);
          }
        }
        want.sort(
            Comparator.comparingDouble((Integer i) -> -Distance.DOT.score(query, other(i), 0))
                .thenComparing(i -> i));
        assertThat(hits.stream().map(h -> (int) h.id().number()).toList())
            .as("search of %s", OTHER)
            .isEqualTo(want);
      }
      if (multi) {
        // the multivector, searched exactly by MaxSim (Euclid: smallest distances first)
        float[] query = {0.5f, -1f, 2f, 0.25f};
        List<Record> hits =
            c.denseSearch(
                new io.flashvec.index.query.DenseSearchRequest(
                    MULTI, query, POINTS, 0, null, null, false, false));
        List<Integer> want = new ArrayList<>();
        for (int i = 0; i < POINTS; i++) {
          if (!DELETED.contains(i) && multi(i) != null) {
            want.add(i);
          }
        }
        want.sort(
            Comparator.comparingDouble((Integer i) -> Distance.EUCLID.maxSim(query, 2, multi(i)))
                .thenComparing(i -> i));
        assertThat(hits.stream().map(h -> (int) h.id().number()).toList())
            .as("search of %s", MULTI)
            .isEqualTo(want);
      }
    }
  }

  private static java.util.Map<String, float[]> otherMap(int i, boolean multi) {
    java.util.Map<String, float[]> m = new java.util.HashMap<>();
    if (other(i) != null) {
      m.put(OTHER, other(i));
    }
    if (multi && multi(i) != null) {
      m.put(MULTI, multi(i));
    }
    return m;
  }

  private static java.util.Map<String, io.flashvec.index.SparseVector> sparseMap(int i) {
    return sparse(i) == null ? java.util.Map.of() : java.util.Map.of(SPARSE, sparse(i));
  }

  private static List<Integer> exactNearest(float[] q, int k, boolean sparse) {
    List<Integer> ids = new ArrayList<>();
    for (int i = 0; i < POINTS; i++) {
      if (!DELETED.contains(i) && dense(i, sparse) != null) {
        ids.add(i);
      }
    }
    ids.sort(
        Comparator.comparingDouble((Integer i) -> Distance.EUCLID.score(q, vector(i), 0))
            .thenComparing(i -> i));
    return ids.subList(0, k);
  }

  private static List<Point> points(
      int from, int to, int version, boolean sparse, boolean named, boolean multi) {
    List<Point> out = new ArrayList<>();
    for (int i = from; i < to; i++) {
      out.add(
          new Point(
              PointId.of(i),
              dense(i, sparse),
              payload(i, version),
              sparse ? sparseMap(i) : null,
              named ? otherMap(i, multi) : null));
    }
    return out;
  }

  /** Builds on the calling thread, so the fixture's content does not depend on timing. */
  private static Shard.Options options() {
    return new Shard.Options(SEAL, Wal.Options.defaults(), FileIO.DEFAULT, Runnable::run, 100);
  }

  private static void copy(String resource, Path to) throws IOException, URISyntaxException {
    URL url = OnDiskFormatsTest.class.getClassLoader().getResource(resource);
    assertThat(url).as("fixture %s on the test class path", resource).isNotNull();
    Path from = Path.of(url.toURI());
    try (Stream<Path> files = Files.walk(from)) {
      files.forEach(
          p -> {
            Path t = to.resolve(from.relativize(p).toString());
            try {
              if (Files.isDirectory(p)) {
                Files.createDirectories(t);
              } else {
                try (InputStream in = Files.newInputStream(p)) {
                  Files.copy(in, t, StandardCopyOption.REPLACE_EXISTING);
                }
              }
            } catch (IOException e) {
              throw new UncheckedIOException(e);
            }
          });
    }
  }
}
