package io.flashvec.index.payload;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.flashvec.index.CollectionConfig;
import io.flashvec.index.Distance;
import io.flashvec.index.IndexParams;
import io.flashvec.index.InvalidInputException;
import io.flashvec.index.Point;
import io.flashvec.index.PointId;
import io.flashvec.index.Record;
import io.flashvec.index.collection.Collection;
import io.flashvec.index.filter.Filter;
import io.flashvec.index.filter.FilterEvaluator;
import io.flashvec.index.filter.FilterEvaluatorTest;
import io.flashvec.index.filter.FilterParser;
import io.flashvec.index.query.Ordered;
import io.flashvec.index.query.OrderedScrollRequest;
import io.flashvec.index.query.ScrollRequest;
import io.flashvec.index.query.TextSearchRequest;
import io.flashvec.index.shard.Shard;
import io.flashvec.storage.Wal;
import io.flashvec.storage.testing.CrashSimulatingFileIO;
import io.flashvec.testing.Await;
import io.flashvec.testing.TestSeeds;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Random;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import tools.jackson.databind.JsonNode;
import tools.jackson.databind.json.JsonMapper;

/**
 * Payload indexes answer filters exactly as the evaluator does, across growing, sealed and
 * compacted segments, schema changes and restarts; text indexes give Qdrant's token semantics and
 * BM25 ranking; {@code order_by} scrolls in value order.
 */
class PayloadIndexTest {

  private static final JsonMapper M = JsonMapper.builder().build();

  @TempDir Path tmp;

  private final CrashSimulatingFileIO io = new CrashSimulatingFileIO();
  private final ExecutorService builds = Executors.newSingleThreadExecutor();
  private final ExecutorService compactions = Executors.newSingleThreadExecutor();
  private final List<Collection> open = new ArrayList<>();

  @AfterEach
  void close() throws Exception {
    for (Collection c : open) {
      c.close();
    }
    builds.shutdown();
    compactions.shutdown();
    assertThat(builds.awaitTermination(60, TimeUnit.SECONDS)).isTrue();
    assertThat(compactions.awaitTermination(60, TimeUnit.SECONDS)).isTrue();
    io.assertNoOpenChannels();
  }

  private Collection open(String name) {
    Shard.Options o =
        new Shard.Options(60, Wal.Options.defaults().withSegmentBytes(32 << 10), io)
            .withBuildExecutor(builds)
            .withCompaction(
                new Shard.Compaction(
                    compactions, null, 0.2, 2, Shard.Compaction.DEFAULT_MAX_SEGMENT_POINTS, false));
    Collection c =
        Collection.open(
            name,
            tmp.resolve(name),
            new CollectionConfig(4, Distance.COSINE, 2, 1, IndexParams.DEFAULT),
            o);
    open.add(c);
    return c;
  }

  private void reopen(Collection c) throws IOException {
    open.remove(c);
    c.close();
  }

  private static boolean compacting(Collection c) {
    for (Shard s : c.shards()) {
      if (s.compacting()) {
        return true;
      }
    }
    return false;
  }

  private static void settle(Collection c) {
    Await.until(
        Duration.ofSeconds(60),
        "builds and compactions finish",
        () -> {
          boolean busy = false;
          for (Shard s : c.shards()) {
            busy |= s.indexing() || s.compacting();
            assertThat(s.buildFailure()).isNull();
            assertThat(s.compactionFailure()).isNull();
          }
          return !busy;
        });
  }

  private static float[] vec(Random r) {
    return new float[] {r.nextFloat() + 0.01f, r.nextFloat(), r.nextFloat(), r.nextFloat()};
  }

  private static PayloadFieldSchema field(String key, String type) {
    return PayloadFieldSchema.parse(key, M.getNodeFactory().stringNode(type));
  }

  // ---------------------------------------------------------------------------------------------

  @Test
  void anIntegerIndexWithNeitherLookupNorRangeIsQdrantsValidationError() {
    assertThatThrownBy(
            () ->
                PayloadFieldSchema.parse(
                    "n", M.readTree("{\"type\":\"integer\",\"lookup\":false,\"range\":false}")))
        .isInstanceOfSatisfying(
            FilterParser.ValidationException.class, e -> assertThat(e.httpStatus()).isEqualTo(422))
        .hasMessageContaining("the 'lookup' and 'range' capabilities can't be both disabled");
    // one of them disabled is kept and shown as given (strict mode reads it); the other stays
    PayloadFieldSchema noLookup =
        PayloadFieldSchema.parse(
            "n", M.readTree("{\"type\":\"integer\",\"lookup\":false,\"range\":true}"));
    assertThat(noLookup.servesLookup()).isFalse();
    assertThat(noLookup.servesRange()).isTrue();
    assertThat(noLookup.toJson().toString())
        .isEqualTo(
            "{\"data_type\":\"integer\",\"params\":{\"type\":\"integer\",\"lookup\":false,"
                + "\"range\":true}}");
    assertThat(PayloadFieldSchema.fromJson("n", noLookup.toJson())).isEqualTo(noLookup);
    PayloadFieldSchema noRange =
        PayloadFieldSchema.parse("n", M.readTree("{\"type\":\"integer\",\"range\":false}"));
    assertThat(noRange.servesLookup()).isTrue();
    assertThat(noRange.servesRange()).isFalse();
    assertThat(noRange.toJson().toString())
        .isEqualTo("{\"data_type\":\"integer\",\"params\":{\"type\":\"integer\",\"range\":false}}");
    // a plain integer index has both, and its JSON (and so the schema's hash) is as before
    assertThat(field("n", "integer").servesLookup()).isTrue();
    assertThat(field("n", "integer").servesRange()).isTrue();
    assertThat(field("n", "integer").toJson().toString()).isEqualTo("{\"data_type\":\"integer\"}");
    // a capability flag that is not a boolean names the parameter
    assertThatThrownBy(
            () -> PayloadFieldSchema.parse("n", M.readTree("{\"type\":\"integer\",\"lookup\":1}")))
        .isInstanceOf(io.flashvec.index.InvalidInputException.class)
        .hasMessageContaining("field_schema.lookup must be a boolean");
  }

  @Test
  void indexedFiltersAgreeWithTheEvaluatorThroughBuildsSchemaChangesRestartAndCompaction()
      throws Exception {
    Random r = TestSeeds.random("PayloadIndexTest.agree");
    Collection c = open("agree");
    c.createPayloadIndex(field("color", "keyword"), true);
    c.createPayloadIndex(field("n", "integer"), true);
    c.createPayloadIndex(field("ts", "datetime"), true);
    Map<Long, byte[]> model = new TreeMap<>();
    for (int round = 0; round < 3; round++) {
      List<Point> batch = new ArrayList<>();
      for (int i = 0; i < 150; i++) {
        long id = r.nextInt(400);
        byte[] p = M.writeValueAsBytes(FilterEvaluatorTest.payload(r));
        batch.add(new Point(PointId.of(id), vec(r), p));
        model.put(id, p);
      }
      c.upsert(batch, true);
      List<PointId> gone = new ArrayList<>();
      for (int i = 0; i < 20; i++) {
        long id = r.nextInt(400);
        gone.add(PointId.of(id));
        model.remove(id);
      }
      c.delete(gone, true);
      if (round == 1) {
        c.flush();
      }
    }
    settle(c);
    check(c, model, r, "before schema change");
    for (String[] f :
        new String[][] {
          {"f", "float"},
          {"ok", "bool"},
          {"tags", "keyword"},
          {"obj.x", "keyword"},
          {"arr[].x", "keyword"},
          {"arr.y", "keyword"}, // reaches nothing: a name does not enter the array
          {"nums", "integer"},
          {"obj.deep.z", "uuid"}
        }) {
      c.createPayloadIndex(field(f[0], f[1]), true);
    }
    check(c, model, r, "all keys indexed");
    reopen(c);
    c = open("agree");
    assertThat(c.payloadSchema().fields()).hasSize(11);
    check(c, model, r, "after restart");
    c.compact(true);
    settle(c);
    check(c, model, r, "after compaction");
    c.deletePayloadIndex("color", true);
    check(c, model, r, "after dropping an index");
  }

  @Test
  void schemaChangesRacingCompactionsNeverReadARetiredSegment() throws Exception {
    Random r = TestSeeds.random("PayloadIndexTest.race");
    Collection c = open("race");
    Map<Long, byte[]> model = new TreeMap<>();
    for (int round = 0; round < 12; round++) {
      List<Point> batch = new ArrayList<>();
      for (int i = 0; i < 80; i++) {
        long id = r.nextInt(300);
        byte[] p = M.writeValueAsBytes(FilterEvaluatorTest.payload(r));
        batch.add(new Point(PointId.of(id), vec(r), p));
        model.put(id, p);
      }
      c.upsert(batch, true);
      List<PointId> gone = new ArrayList<>();
      for (int i = 0; i < 30; i++) {
        long id = r.nextInt(300);
        gone.add(PointId.of(id));
        model.remove(id);
      }
      c.delete(gone, true);
      c.flush();
      settle(c);
      // The compaction retires segments while the schema change rebuilds their indexes.
      c.compact(true);
      c.createPayloadIndex(field("color", "keyword"), true);
      for (int change = 0; change < 40 && compacting(c); change++) {
        if (change % 2 == 0) {
          c.createPayloadIndex(field("n", "integer"), true);
        } else {
          c.deletePayloadIndex("n", true);
        }
      }
      settle(c);
    }
    check(c, model, r, "after racing schema changes and compactions");
  }

  private static void check(Collection c, Map<Long, byte[]> model, Random r, String when) {
    for (int i = 0; i < 150; i++) {
      Map<String, Object> fj = FilterEvaluatorTest.filter(r, 2);
      JsonNode node = M.valueToTree(fj);
      Filter filter = FilterParser.parse(node, "filter");
      FilterEvaluator ev = new FilterEvaluator(filter);
      Set<Long> expected = new TreeSet<>();
      model.forEach(
          (id, p) -> {
            if (ev.matches(PointId.of(id), p)) {
              expected.add(id);
            }
          });
      Set<Long> actual = new TreeSet<>();
      for (Record rec : c.scroll(new ScrollRequest(null, 1000, false, false, filter)).points()) {
        actual.add(rec.id().number());
      }
      assertThat(actual).as(when + ": scroll with filter " + node).isEqualTo(expected);
      assertThat(c.count(filter))
          .as(when + ": count with filter " + node)
          .isEqualTo(expected.size());
    }
  }

  // ---------------------------------------------------------------------------------------------

  private static final String[] CORPUS = {
    "the quick brown fox jumps over the lazy dog",
    "Quick quick QUICK fox",
    "a lazy afternoon",
    "brown bread",
  };

  private Collection textCorpus(String name) {
    Collection c = open(name);
    List<Point> pts = new ArrayList<>();
    for (int i = 0; i < CORPUS.length; i++) {
      pts.add(
          new Point(
              PointId.of(i + 1),
              new float[] {1, i, 0, 0},
              ("{\"body\": \"" + CORPUS[i] + "\", \"n\": " + i + "}")
                  .getBytes(StandardCharsets.UTF_8)));
    }
    pts.add(
        new Point(
            PointId.of(5),
            new float[] {1, 1, 1, 1},
            "{\"n\": 9}".getBytes(StandardCharsets.UTF_8)));
    c.upsert(pts, true);
    c.createPayloadIndex(
        PayloadFieldSchema.parse(
            "body",
            M.readTree("{\"type\": \"text\", \"tokenizer\": \"word\", \"lowercase\": true}")),
        true);
    return c;
  }

  private static List<Long> ids(List<Record> rs) {
    return rs.stream().map(x -> x.id().number()).toList();
  }

  private static Filter filter(String json) {
    return FilterParser.parse(M.readTree(json), "filter");
  }

  private void checkText(Collection c) {
    assertThat(
            ids(c.textSearch(new TextSearchRequest("body", "quick fox", 10, null, false, false))))
        .containsExactly(2L, 1L);
    assertThat(ids(c.textSearch(new TextSearchRequest("body", "LAZY", 10, null, false, false))))
        .containsExactly(3L, 1L);
    assertThat(
            ids(
                c.textSearch(
                    new TextSearchRequest(
                        "body",
                        "bread",
                        10,
                        filter("{\"must\": {\"key\": \"n\", \"range\": {\"lt\": 3}}}"),
                        false,
                        false))))
        .isEmpty();
    assertThat(ids(c.textSearch(new TextSearchRequest("body", "fox", 1, null, false, false))))
        .containsExactly(2L);
    assertThat(c.textSearch(new TextSearchRequest("body", "zebra", 10, null, false, false)))
        .isEmpty();
    // match.text on a text index: every query token, in any order and case
    assertThat(
            c.count(
                filter("{\"must\": {\"key\": \"body\", \"match\": {\"text\": \"FOX quick\"}}}")))
        .isEqualTo(2);
    assertThat(c.count(filter("{\"must\": {\"key\": \"body\", \"match\": {\"text\": \"brown\"}}}")))
        .isEqualTo(2);
    assertThat(c.count(filter("{\"must\": {\"key\": \"body\", \"match\": {\"text\": \"brow\"}}}")))
        .isZero();
  }

  @Test
  void textIndexMatchesTokensAndRanksByBm25InGrowingSealedAndReopenedSegments() throws Exception {
    Collection c = textCorpus("text");
    checkText(c);
    c.flush();
    settle(c);
    checkText(c);
    reopen(c);
    Collection again = open("text");
    checkText(again);
    assertThatThrownBy(
            () -> again.textSearch(new TextSearchRequest("n", "x", 3, null, false, false)))
        .isInstanceOf(InvalidInputException.class)
        .hasMessageContaining("[field=n]");
  }

  /**
   * Scores are classic BM25 with k1 = 1.2, b = 0.75 and the IDF {@code ln(1 + (N − n + 0.5) / (n +
   * 0.5))}, as Qdrant's BM25 (fastembed term weights, IDF modifier) scores; Lucene alone leaves out
   * the factor k1 + 1. Statistics are per shard (this collection has two), as in Qdrant.
   */
  @Test
  void textScoresAreClassicBm25() {
    Collection c = textCorpus("bm25");
    int shards = 2;
    String[][] docs = new String[CORPUS.length][];
    int[] shardOf = new int[CORPUS.length];
    int[] docCount = new int[shards];
    double[] total = new double[shards];
    for (int i = 0; i < CORPUS.length; i++) {
      docs[i] = CORPUS[i].toLowerCase(java.util.Locale.ROOT).split(" ");
      shardOf[i] = PointId.of(i + 1).shard(shards);
      docCount[shardOf[i]]++;
      total[shardOf[i]] += docs[i].length;
    }
    for (String query : new String[] {"fox", "quick fox", "lazy", "brown bread"}) {
      Map<Long, Double> want = new java.util.HashMap<>();
      for (String term : query.split(" ")) {
        int[] n = new int[shards];
        for (int i = 0; i < docs.length; i++) {
          n[shardOf[i]] += java.util.Arrays.asList(docs[i]).contains(term) ? 1 : 0;
        }
        for (int i = 0; i < docs.length; i++) {
          int s = shardOf[i];
          long tf = java.util.Arrays.stream(docs[i]).filter(term::equals).count();
          if (tf > 0) {
            double idf = Math.log(1 + (docCount[s] - n[s] + 0.5) / (n[s] + 0.5));
            double norm = 1.2 * (1 - 0.75 + 0.75 * docs[i].length / (total[s] / docCount[s]));
            want.merge(i + 1L, idf * tf * 2.2 / (tf + norm), Double::sum);
          }
        }
      }
      List<Record> got = c.textSearch(new TextSearchRequest("body", query, 10, null, false, false));
      assertThat(got).as(query).hasSize(want.size());
      for (Record r : got) {
        assertThat((double) r.score())
            .as("%s, point %s", query, r.id())
            .isCloseTo(want.get(r.id().number()), org.assertj.core.data.Offset.offset(1e-4));
      }
    }
  }

  @Test
  void prefixTokenizerMatchesWordBeginnings() {
    Collection c = open("prefix");
    c.upsert(
        List.of(
            new Point(
                PointId.of(1),
                new float[] {1, 0, 0, 0},
                "{\"t\": \"Lucene indexes\"}".getBytes(StandardCharsets.UTF_8))),
        true);
    c.createPayloadIndex(
        PayloadFieldSchema.parse(
            "t", M.readTree("{\"type\": \"text\", \"tokenizer\": \"prefix\"}")),
        true);
    assertThat(c.count(filter("{\"must\": {\"key\": \"t\", \"match\": {\"text\": \"luc ind\"}}}")))
        .isEqualTo(1);
    assertThat(c.count(filter("{\"must\": {\"key\": \"t\", \"match\": {\"text\": \"ucene\"}}}")))
        .isZero();
  }

  // ---------------------------------------------------------------------------------------------

  @Test
  void orderByScrollsInValueOrderFromStartFrom() throws Exception {
    Collection c = open("order");
    List<Point> pts = new ArrayList<>();
    Random r = TestSeeds.random("PayloadIndexTest.order");
    Map<Long, Double> price = new LinkedHashMap<>();
    for (int i = 0; i < 200; i++) {
      String p;
      if (i % 17 == 0) {
        p = "{}";
      } else {
        double v = Math.round(r.nextDouble() * 1000) / 10.0;
        price.put((long) i, v);
        p =
            "{\"price\": "
                + v
                + ", \"day\": \"2024-01-"
                + String.format(Locale.ROOT, "%02d", 1 + i % 28)
                + "\"}";
      }
      pts.add(new Point(PointId.of(i), vec(r), p.getBytes(StandardCharsets.UTF_8)));
    }
    c.upsert(pts.subList(0, 120), true);
    c.flush();
    c.upsert(pts.subList(120, 200), true);
    settle(c);
    assertThatThrownBy(
            () ->
                c.scrollOrdered(
                    new OrderedScrollRequest("price", true, null, 5, null, false, false)))
        .isInstanceOf(InvalidInputException.class)
        .hasMessageContaining("[key=price]");
    c.createPayloadIndex(field("price", "float"), true);
    List<Long> expectedAsc =
        price.entrySet().stream()
            .sorted(
                Map.Entry.<Long, Double>comparingByValue()
                    .thenComparing(Map.Entry.comparingByKey()))
            .map(Map.Entry::getKey)
            .toList();
    List<Long> asc =
        c
            .scrollOrdered(new OrderedScrollRequest("price", true, null, 500, null, false, false))
            .stream()
            .map(o -> o.record().id().number())
            .toList();
    assertThat(asc).isEqualTo(expectedAsc);
    List<Ordered> desc =
        c.scrollOrdered(new OrderedScrollRequest("price", false, 50.0, 10, null, true, false));
    assertThat(desc).hasSize(10);
    double prev = Double.MAX_VALUE;
    for (Ordered o : desc) {
      assertThat(o.value()).isLessThanOrEqualTo(50.0).isLessThanOrEqualTo(prev);
      assertThat(o.value()).isEqualTo(price.get(o.record().id().number()));
      prev = o.value();
    }
    c.createPayloadIndex(field("day", "datetime"), true);
    List<Ordered> days =
        c.scrollOrdered(
            new OrderedScrollRequest(
                "day",
                true,
                null,
                3,
                filter("{\"must\": {\"key\": \"price\", \"range\": {\"gte\": 10}}}"),
                false,
                false));
    assertThat(days).hasSize(3);
    assertThat(days.getFirst().value()).isLessThanOrEqualTo(days.getLast().value());
  }

  /** As in Qdrant: a point with several values of the key is listed once per value. */
  @Test
  void orderByListsAPointOncePerValue() throws Exception {
    Collection c = open("multi");
    List<Point> pts = new ArrayList<>();
    Random r = TestSeeds.random("PayloadIndexTest.multi");
    for (int i = 0; i < 30; i++) {
      String p = "{\"v\": [" + i + ", " + (100 + i) + "]}";
      pts.add(new Point(PointId.of(i), vec(r), p.getBytes(StandardCharsets.UTF_8)));
    }
    c.upsert(pts.subList(0, 20), true);
    c.flush();
    c.upsert(pts.subList(20, 30), true);
    settle(c);
    c.createPayloadIndex(field("v", "integer"), true);
    List<Ordered> all =
        c.scrollOrdered(new OrderedScrollRequest("v", true, null, 100, null, false, false));
    assertThat(all).hasSize(60);
    assertThat(all.subList(0, 30))
        .extracting(o -> o.record().id().number())
        .isEqualTo(java.util.stream.LongStream.range(0, 30).boxed().toList());
    assertThat(all.subList(30, 60))
        .extracting(o -> o.record().id().number())
        .isEqualTo(java.util.stream.LongStream.range(0, 30).boxed().toList());
    assertThat(all.get(30).value()).isEqualTo(100.0);
    List<Ordered> desc =
        c.scrollOrdered(new OrderedScrollRequest("v", false, 110.0, 3, null, false, false));
    assertThat(desc).extracting(Ordered::value).containsExactly(110.0, 109.0, 108.0);
  }

  @Test
  void indexDirectoriesFollowTheSchema() throws Exception {
    Collection c = open("dirs");
    List<Point> pts = new ArrayList<>();
    for (int i = 0; i < 100; i++) {
      pts.add(
          new Point(
              PointId.of(i),
              new float[] {1, i, 0, 1},
              ("{\"k\": \"v" + i % 3 + "\"}").getBytes(StandardCharsets.UTF_8)));
    }
    c.upsert(pts, true);
    c.flush();
    settle(c);
    assertThat(payloadDirs(c)).isEmpty();
    c.createPayloadIndex(field("k", "keyword"), true);
    List<String> dirs = payloadDirs(c);
    assertThat(dirs).isNotEmpty().allMatch(d -> d.endsWith("payload-" + c.payloadSchema().hash()));
    assertThat(c.countWithValue("k")).isEqualTo(100);
    assertThat(c.count(filter("{\"must\": {\"key\": \"k\", \"match\": {\"value\": \"v1\"}}}")))
        .isEqualTo(33);
    reopen(c);
    Collection again = open("dirs");
    assertThat(payloadDirs(again)).isEqualTo(dirs);
    again.deletePayloadIndex("k", true);
    assertThat(payloadDirs(again)).isEmpty();
    assertThat(again.count(filter("{\"must\": {\"key\": \"k\", \"match\": {\"value\": \"v1\"}}}")))
        .isEqualTo(33);
  }

  private List<String> payloadDirs(Collection c) throws IOException {
    try (Stream<Path> st = Files.walk(c.directory())) {
      return st.filter(p -> p.getFileName().toString().startsWith("payload-"))
          .map(p -> c.directory().relativize(p).toString())
          .sorted()
          .toList();
    }
  }
}
