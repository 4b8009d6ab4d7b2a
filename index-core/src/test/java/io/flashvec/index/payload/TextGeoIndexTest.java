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
import io.flashvec.index.filter.FilterParser;
import io.flashvec.index.query.ScrollRequest;
import io.flashvec.index.shard.Shard;
import io.flashvec.storage.Wal;
import io.flashvec.storage.testing.CrashSimulatingFileIO;
import io.flashvec.testing.Await;
import io.flashvec.testing.TestSeeds;
import java.nio.charset.StandardCharsets;
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
import java.util.function.Function;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.api.io.TempDir;
import tools.jackson.databind.JsonNode;
import tools.jackson.databind.json.JsonMapper;

/**
 * {@code text_any}, {@code phrase} and {@code prefix} on text and keyword indexes, and the geo
 * conditions on a geo index, answer exactly as the evaluator does on the same payloads, in growing,
 * sealed and reopened segments; the index schemas parse and show Qdrant's parameters.
 */
@ExtendWith(TestSeeds.Reporter.class)
class TextGeoIndexTest {

  private static final JsonMapper M = JsonMapper.builder().build();

  @TempDir Path tmp;

  private final CrashSimulatingFileIO io = new CrashSimulatingFileIO();
  private final ExecutorService builds = Executors.newSingleThreadExecutor();
  private final List<Collection> open = new ArrayList<>();

  @AfterEach
  void close() throws Exception {
    for (Collection c : open) {
      c.close();
    }
    builds.shutdown();
    assertThat(builds.awaitTermination(60, TimeUnit.SECONDS)).isTrue();
    io.assertNoOpenChannels();
  }

  private Collection open(String name) {
    Shard.Options o =
        new Shard.Options(60, Wal.Options.defaults().withSegmentBytes(32 << 10), io)
            .withBuildExecutor(builds);
    Collection c =
        Collection.open(
            name,
            tmp.resolve(name),
            new CollectionConfig(4, Distance.COSINE, 2, 1, IndexParams.DEFAULT),
            o);
    open.add(c);
    return c;
  }

  private Collection reopen(Collection c, String name) {
    open.remove(c);
    try {
      c.close();
    } catch (java.io.IOException e) {
      throw new java.io.UncheckedIOException(e);
    }
    return open(name);
  }

  private static void settle(Collection c) {
    Await.until(
        Duration.ofSeconds(60),
        "builds finish",
        () -> {
          boolean busy = false;
          for (Shard s : c.shards()) {
            busy |= s.indexing();
            assertThat(s.buildFailure()).isNull();
          }
          return !busy;
        });
  }

  private static PayloadFieldSchema schema(String key, String json) {
    return PayloadFieldSchema.parse(key, M.readTree(json));
  }

  private static Filter filter(String json) {
    return FilterParser.parse(M.readTree(json), "filter");
  }

  private static float[] vec(Random r) {
    return new float[] {r.nextFloat() + 0.01f, r.nextFloat(), r.nextFloat(), r.nextFloat()};
  }

  /**
   * Scroll and count with {@code filter} give the points the evaluator accepts on {@code model};
   * {@code textAware}: the evaluator tokenizes with the collection's text indexes.
   */
  private static void agree(
      Collection c, Map<Long, byte[]> model, Filter filter, boolean textAware, String when) {
    FilterEvaluator ev =
        textAware ? new FilterEvaluator(filter, c.payloadSchema()) : new FilterEvaluator(filter);
    Set<Long> expected = new TreeSet<>();
    model.forEach(
        (id, p) -> {
          if (ev.matches(PointId.of(id), p)) {
            expected.add(id);
          }
        });
    Set<Long> actual = new TreeSet<>();
    for (Record rec : c.scroll(new ScrollRequest(null, 10_000, false, false, filter)).points()) {
      actual.add(rec.id().number());
    }
    assertThat(actual).as("%s: scroll with %s", when, filter).isEqualTo(expected);
    assertThat(c.count(filter)).as("%s: count with %s", when, filter).isEqualTo(expected.size());
  }

  private static long count(Collection c, String filterJson) {
    return c.count(filter(filterJson));
  }

  // ---------------------------------------------------------------------------------------------
  // text_any, phrase, prefix

  private static final String[] PHRASES = {
    "the quick brown fox jumps over the lazy dog",
    "a quick brown cat runs through the garden",
    "the brown fox is very quick and agile",
    "lazy dogs sleep all day long",
    "machine learning algorithms are powerful tools",
    "natural language processing with transformers",
    "the artificial intelligence revolution",
    "deep learning neural networks",
    "brown sugar and quick oats",
    "New York City is a bustling metropolis",
    "writing tests is very very very important",
  };

  @Test
  void phraseMatchesTokensInOrderAsQdrantsPhraseTests() {
    Collection c = open("phrase");
    c.createPayloadIndex(
        schema("text", "{\"type\": \"text\", \"tokenizer\": \"word\", \"phrase_matching\": true}"),
        true);
    c.createPayloadIndex(schema("other", "{\"type\": \"text\"}"), true);
    List<Point> pts = new ArrayList<>();
    for (int i = 0; i < PHRASES.length; i++) {
      pts.add(
          new Point(
              PointId.of(i + 1),
              new float[] {1, i, 0, 0},
              ("{\"text\": \"" + PHRASES[i] + "\", \"other\": \"" + PHRASES[i] + "\"}")
                  .getBytes(StandardCharsets.UTF_8)));
    }
    // two values of an array never join into one phrase
    pts.add(
        new Point(
            PointId.of(12),
            new float[] {1, 1, 1, 0},
            "{\"text\": [\"so quick\", \"brown bread\"]}".getBytes(StandardCharsets.UTF_8)));
    c.upsert(pts, true);
    Object[][] cases = {
      {"quick brown fox", Set.of(1L)},
      {"quick brown bird", Set.of()},
      {"brown quick", Set.of()},
      {"quick brown", Set.of(1L, 2L)},
      {"brown", Set.of(1L, 2L, 3L, 9L, 12L)},
      {"brown bread", Set.of(12L)},
      {"machine learning algorithms are powerful tools", Set.of(5L)},
      {"", Set.of()},
      {"very very very", Set.of(11L)},
      {"very very very very", Set.of()},
      {"QUICK Brown", Set.of(1L, 2L)},
    };
    for (int round = 0; round < 3; round++) {
      for (Object[] k : cases) {
        Filter f =
            filter("{\"must\": {\"key\": \"text\", \"match\": {\"phrase\": \"" + k[0] + "\"}}}");
        Set<Long> got = new TreeSet<>();
        for (Record rec : c.scroll(new ScrollRequest(null, 100, false, false, f)).points()) {
          got.add(rec.id().number());
        }
        assertThat(got).as("phrase '%s' in round %d", k[0], round).isEqualTo(k[1]);
        assertThat(c.count(f)).isEqualTo(((Set<?>) k[1]).size());
        // the evaluator agrees (segments without an index, candidates of other conditions)
        agree(c, payloads(c), f, true, "phrase '" + k[0] + "'");
      }
      // a text index without phrase_matching serves no phrase, as in Qdrant
      assertThat(count(c, "{\"must\": {\"key\": \"other\", \"match\": {\"phrase\": \"brown\"}}}"))
          .isZero();
      // text_any: at least one token, unknown tokens ignored, no token matches nothing
      assertThat(
              count(
                  c, "{\"must\": {\"key\": \"text\", \"match\": {\"text_any\": \"oats zebra\"}}}"))
          .isEqualTo(1);
      assertThat(
              count(
                  c,
                  "{\"must\": {\"key\": \"text\", \"match\": {\"text_any\": \"Lazy learning\"}}}"))
          .isEqualTo(4);
      assertThat(count(c, "{\"must\": {\"key\": \"text\", \"match\": {\"text_any\": \" \"}}}"))
          .isZero();
      if (round == 0) {
        c.flush();
        settle(c);
      } else if (round == 1) {
        c = reopen(c, "phrase");
      }
    }
  }

  private static Map<Long, byte[]> payloads(Collection c) {
    Map<Long, byte[]> out = new TreeMap<>();
    for (Record rec : c.scroll(new ScrollRequest(null, 10_000, true, false, null)).points()) {
      out.put(rec.id().number(), rec.payload());
    }
    return out;
  }

  private static final String[] VOCAB = {
    "red", "green", "blue", "fox", "dog", "Berlin", "london", "the", "a", "quick", "x"
  };

  private static String sentence(Random r) {
    StringBuilder b = new StringBuilder();
    for (int n = 1 + r.nextInt(6); n > 0; n--) {
      b.append(VOCAB[r.nextInt(VOCAB.length)]).append(r.nextInt(5) == 0 ? ", " : " ");
    }
    return b.toString().strip();
  }

  private static Object textValue(Random r) {
    return switch (r.nextInt(8)) {
      case 0 -> null;
      case 1 -> 7;
      case 2, 3 -> {
        List<Object> l = new ArrayList<>();
        for (int n = r.nextInt(4); n > 0; n--) {
          l.add(sentence(r));
        }
        yield l;
      }
      default -> sentence(r);
    };
  }

  @Test
  void randomTextAnyPhraseAndPrefixFiltersAgreeWithTheEvaluator() {
    Random r = TestSeeds.random("TextGeoIndexTest.text");
    Collection c = open("text");
    c.createPayloadIndex(schema("t", "{\"type\": \"text\", \"phrase_matching\": true}"), true);
    c.createPayloadIndex(
        schema(
            "w",
            "{\"type\": \"text\", \"tokenizer\": \"whitespace\", \"lowercase\": false,"
                + " \"min_token_len\": 2, \"phrase_matching\": true}"),
        true);
    c.createPayloadIndex(
        schema("p", "{\"type\": \"text\", \"tokenizer\": \"prefix\", \"phrase_matching\": true}"),
        true);
    c.createPayloadIndex(schema("k", "{\"type\": \"keyword\", \"prefix\": true}"), true);
    Map<Long, byte[]> model = new TreeMap<>();
    for (int round = 0; round < 3; round++) {
      List<Point> batch = new ArrayList<>();
      for (int i = 0; i < 120; i++) {
        long id = r.nextInt(300);
        Map<String, Object> p = new LinkedHashMap<>();
        for (String key : new String[] {"t", "w", "p", "k"}) {
          if (r.nextInt(6) != 0) {
            p.put(key, textValue(r));
          }
        }
        byte[] b = M.writeValueAsBytes(p);
        batch.add(new Point(PointId.of(id), vec(r), b));
        model.put(id, b);
      }
      c.upsert(batch, true);
      if (round == 1) {
        c.flush();
        settle(c);
      }
      if (round == 2) {
        c = reopen(c, "text");
      }
      for (int i = 0; i < 120; i++) {
        String key = new String[] {"t", "w", "p", "k"}[r.nextInt(4)];
        String s = sentence(r);
        String[] words = s.split(" ");
        String cond =
            switch (r.nextInt(4)) {
              case 0 -> "{\"text_any\": " + M.writeValueAsString(r.nextInt(8) == 0 ? "" : s) + "}";
              case 1 -> {
                // mostly a run of words from a stored-like sentence
                int from = r.nextInt(words.length);
                int to = from + 1 + r.nextInt(words.length - from);
                String run = String.join(" ", List.of(words).subList(from, to));
                yield "{\"phrase\": " + M.writeValueAsString(run) + "}";
              }
              case 2 -> "{\"text\": " + M.writeValueAsString(words[0]) + "}";
              default -> {
                String w = VOCAB[r.nextInt(VOCAB.length)];
                yield "{\"prefix\": "
                    + M.writeValueAsString(w.substring(0, r.nextInt(w.length() + 1)))
                    + "}";
              }
            };
        String json = "{\"key\": \"" + key + "\", \"match\": " + cond + "}";
        String f =
            switch (r.nextInt(3)) {
              case 0 -> "{\"must\": [" + json + "]}";
              case 1 -> "{\"must_not\": [" + json + "]}";
              default ->
                  "{\"should\": [" + json + ", {\"key\": \"k\", \"match\": {\"prefix\": \"gr\"}}]}";
            };
        agree(c, model, filter(f), true, "round " + round);
      }
    }
  }

  @Test
  void aPhraseOnAPrefixIndexMatchesWholeWordsOnly() {
    Collection c = open("prefix-phrase");
    c.createPayloadIndex(
        schema("t", "{\"type\": \"text\", \"tokenizer\": \"prefix\", \"phrase_matching\": true}"),
        true);
    String[] texts = {"the quick brown fox", "quickly brown", "a quick browning"};
    List<Point> pts = new ArrayList<>();
    for (int i = 0; i < texts.length; i++) {
      pts.add(
          new Point(
              PointId.of(i + 1),
              new float[] {1, i, 0, 0},
              ("{\"t\": \"" + texts[i] + "\"}").getBytes(StandardCharsets.UTF_8)));
    }
    c.upsert(pts, true);
    for (int round = 0; round < 2; round++) {
      assertThat(count(c, "{\"must\": {\"key\": \"t\", \"match\": {\"phrase\": \"quick brown\"}}}"))
          .isEqualTo(1);
      assertThat(count(c, "{\"must\": {\"key\": \"t\", \"match\": {\"phrase\": \"quic brow\"}}}"))
          .isZero();
      // match.text on the same index does match word beginnings
      assertThat(count(c, "{\"must\": {\"key\": \"t\", \"match\": {\"text\": \"quic brow\"}}}"))
          .isEqualTo(3);
      c.flush();
      settle(c);
    }
  }

  @Test
  void textAnyPhraseAndPrefixTranslateExactlyOnTheirIndexes() {
    PayloadSchema s =
        PayloadSchema.EMPTY
            .with(schema("t", "{\"type\": \"text\", \"phrase_matching\": true}"))
            .with(schema("k", "\"keyword\""));
    Function<String, FilterQueries.Translation> tr =
        json -> FilterQueries.translate(filter(json), s);
    assertThat(tr.apply("{\"must\": {\"key\": \"t\", \"match\": {\"phrase\": \"a b\"}}}").exact())
        .isTrue();
    assertThat(tr.apply("{\"must\": {\"key\": \"t\", \"match\": {\"text_any\": \"a b\"}}}").exact())
        .isTrue();
    assertThat(tr.apply("{\"must\": {\"key\": \"k\", \"match\": {\"prefix\": \"a\"}}}").exact())
        .isTrue();
    assertThat(tr.apply("{\"must\": {\"key\": \"k\", \"match\": {\"phrase\": \"a\"}}}").useless())
        .isTrue();
    assertThat(tr.apply("{\"must\": {\"key\": \"k\", \"values_count\": {\"gt\": 1}}}").useless())
        .isTrue();
  }

  // ---------------------------------------------------------------------------------------------
  // geo

  /** A coordinate on a half-degree grid, sometimes nudged by less than Lucene's resolution. */
  private static double grid(Random r, double lo, double hi) {
    double v = lo + Math.floor(r.nextDouble() * (hi - lo) * 2) / 2;
    return switch (r.nextInt(4)) {
      case 0 -> v + 1e-8;
      case 1 -> v - 1e-8;
      default -> v;
    };
  }

  private static double lon(Random r) {
    // around the antimeridian half the time
    double v = r.nextBoolean() ? grid(r, 170, 190) : grid(r, -10, 10);
    return v > 180 ? v - 360 : v;
  }

  private static Map<String, Object> point(Random r) {
    return Map.of("lon", lon(r), "lat", grid(r, -10, 10));
  }

  private static Object geoValue(Random r) {
    return switch (r.nextInt(10)) {
      case 0 -> null;
      case 1 -> "somewhere";
      case 2 -> Map.of("lon", 5.0, "lat", 100.0); // out of range: not a point
      case 3, 4 -> {
        List<Object> l = new ArrayList<>();
        for (int n = r.nextInt(4); n > 0; n--) {
          l.add(point(r));
        }
        yield l;
      }
      default -> point(r);
    };
  }

  private static String geoPoint(double lon, double lat) {
    return String.format(Locale.ROOT, "{\"lon\": %s, \"lat\": %s}", lon, lat);
  }

  private static String ring(double w, double s, double e, double n) {
    return "{\"points\": ["
        + String.join(
            ", ",
            geoPoint(w, s),
            geoPoint(e, s),
            geoPoint(e, n),
            geoPoint((w + e) / 2, n + 1), // not a rectangle
            geoPoint(w, n),
            geoPoint(w, s))
        + "]}";
  }

  private static String geoCondition(Random r) {
    double lon = Math.floor(lon(r));
    double lat = Math.floor(grid(r, -10, 10));
    return switch (r.nextInt(3)) {
      case 0 ->
          "\"geo_radius\": {\"center\": "
              + geoPoint(lon, lat)
              + ", \"radius\": "
              + r.nextInt(800_000)
              + "}";
      case 1 -> {
        double east = lon + 0.5 * r.nextInt(30);
        east = east > 180 ? east - 360 : east; // crosses the antimeridian
        yield "\"geo_bounding_box\": {\"top_left\": "
            + geoPoint(lon, lat + 0.5 * r.nextInt(12))
            + ", \"bottom_right\": "
            + geoPoint(east, lat - 0.5 * r.nextInt(12))
            + "}";
      }
      default -> {
        double w = Math.max(-179, Math.min(170, lon));
        double e = w + 1 + r.nextInt(8);
        double s = Math.max(-15, lat - r.nextInt(5));
        double n = Math.min(15, s + 1 + r.nextInt(8));
        String holes =
            r.nextBoolean()
                ? ""
                : ", \"interiors\": [" + ring(w + 0.5, s + 0.5, (w + e) / 2, (s + n) / 2) + "]";
        yield "\"geo_polygon\": {\"exterior\": " + ring(w, s, e, n) + holes + "}";
      }
    };
  }

  @Test
  void randomGeoFiltersOnAGeoIndexAgreeWithTheEvaluator() {
    Random r = TestSeeds.random("TextGeoIndexTest.geo");
    Collection c = open("geo");
    c.createPayloadIndex(schema("loc", "\"geo\""), true);
    Map<Long, byte[]> model = new TreeMap<>();
    for (int round = 0; round < 3; round++) {
      List<Point> batch = new ArrayList<>();
      for (int i = 0; i < 200; i++) {
        long id = r.nextInt(500);
        Map<String, Object> p = new LinkedHashMap<>();
        if (r.nextInt(8) != 0) {
          p.put("loc", geoValue(r));
        }
        byte[] b = M.writeValueAsBytes(p);
        batch.add(new Point(PointId.of(id), vec(r), b));
        model.put(id, b);
      }
      c.upsert(batch, true);
      if (round == 1) {
        c.flush();
        settle(c);
      }
      if (round == 2) {
        c = reopen(c, "geo");
      }
      long matched = 0;
      for (int i = 0; i < 100; i++) {
        String json = "{\"key\": \"loc\", " + geoCondition(r) + "}";
        String f =
            r.nextInt(4) == 0 ? "{\"must_not\": [" + json + "]}" : "{\"must\": [" + json + "]}";
        Filter filter = filter(f);
        agree(c, model, filter, false, "round " + round);
        matched += c.count(filter);
      }
      assertThat(matched).as("the conditions match some points").isPositive();
    }
  }

  // ---------------------------------------------------------------------------------------------
  // schemas

  /**
   * Qdrant's {@code stopwords}, {@code stemmer} and {@code ascii_folding} change what matches, the
   * same way in the growing segment, in a sealed one and after a reopen (the options are persisted
   * with the schema).
   */
  @Test
  void stopwordsStemmingAndAsciiFoldingApplyToValuesAndQueriesAlike() {
    Collection c = open("analysis");
    PayloadFieldSchema f =
        schema(
            "t",
            "{\"type\": \"text\", \"ascii_folding\": true, \"phrase_matching\": true,"
                + " \"stopwords\": {\"languages\": [\"en\"], \"custom\": [\"rocket\"]},"
                + " \"stemmer\": {\"type\": \"snowball\", \"language\": \"english\"}}");
    assertThat(f.text().stopwordLanguages()).containsExactly("english");
    assertThat(f.text().stemmer()).isEqualTo("english");
    assertThat(PayloadFieldSchema.fromJson("t", f.toJson())).isEqualTo(f);
    c.createPayloadIndex(f, true);
    String[] texts = {"The runners were running", "Café crème", "a rocket launch", "the end"};
    List<Point> pts = new ArrayList<>();
    for (int i = 0; i < texts.length; i++) {
      pts.add(
          new Point(
              PointId.of(i + 1),
              new float[] {1, i, 0, 0},
              ("{\"t\": \"" + texts[i] + "\"}").getBytes(StandardCharsets.UTF_8)));
    }
    c.upsert(pts, true);
    for (int round = 0; round < 3; round++) {
      String when = "round " + round;
      // stemmed: run and runs match running (stem run); runners has a stem of its own
      assertThat(count(c, "{\"must\": {\"key\": \"t\", \"match\": {\"text\": \"run\"}}}"))
          .as(when)
          .isEqualTo(1);
      assertThat(count(c, "{\"must\": {\"key\": \"t\", \"match\": {\"text\": \"runs\"}}}"))
          .as(when)
          .isEqualTo(1);
      // folded: cafe matches café
      assertThat(count(c, "{\"must\": {\"key\": \"t\", \"match\": {\"text\": \"cafe\"}}}"))
          .as(when)
          .isEqualTo(1);
      // stop words are not indexed: end matches, a query of stop words only matches nothing
      assertThat(count(c, "{\"must\": {\"key\": \"t\", \"match\": {\"text\": \"end\"}}}"))
          .as(when)
          .isEqualTo(1);
      assertThat(
              count(c, "{\"must\": {\"key\": \"t\", \"match\": {\"text_any\": \"the rocket\"}}}"))
          .as(when)
          .isZero();
      assertThat(
              count(
                  c,
                  "{\"must\": {\"key\": \"t\", \"match\": {\"phrase\": \"runners were running\"}}}"))
          .as(when)
          .isEqualTo(1);
      if (round == 0) {
        c.flush();
        settle(c);
      } else if (round == 1) {
        c = reopen(c, "analysis");
        settle(c);
      }
    }
  }

  /**
   * Without {@code lowercase}, custom stop words stop only the words written the same way, and a
   * text query left with no words (only stop words) matches nothing, as in Qdrant; growing, sealed
   * and reopened alike.
   */
  @Test
  void caseSensitiveStopWordsAndQueriesOfStopWordsOnly() {
    Collection c = open("stopcase");
    c.createPayloadIndex(
        schema(
            "title",
            "{\"type\": \"text\", \"tokenizer\": \"word\", \"lowercase\": false,"
                + " \"stopwords\": {\"custom\": [\"the\", \"The\", \"LAZY\"]}}"),
        true);
    c.upsert(
        List.of(
            new Point(
                PointId.of(1),
                new float[] {1, 0, 0, 0},
                "{\"title\": \"The quick brown fox jumps over the lazy dog\"}"
                    .getBytes(StandardCharsets.UTF_8)),
            new Point(
                PointId.of(2),
                new float[] {0, 1, 0, 0},
                "{\"title\": \"LAZY sentinel\"}".getBytes(StandardCharsets.UTF_8))),
        true);
    for (int round = 0; round < 3; round++) {
      String when = "round " + round;
      assertThat(count(c, "{\"must\": {\"key\": \"title\", \"match\": {\"text\": \"lazy\"}}}"))
          .as(when)
          .isEqualTo(1);
      assertThat(count(c, "{\"must\": {\"key\": \"title\", \"match\": {\"text\": \"The\"}}}"))
          .as(when)
          .isZero();
      assertThat(count(c, "{\"must\": {\"key\": \"title\", \"match\": {\"text\": \"LAZY\"}}}"))
          .as(when)
          .isZero();
      assertThat(count(c, "{\"must\": {\"key\": \"title\", \"match\": {\"text\": \"sentinel\"}}}"))
          .as(when)
          .isEqualTo(1);
      if (round == 0) {
        c.flush();
        settle(c);
      } else if (round == 1) {
        c = reopen(c, "stopcase");
        settle(c);
      }
    }
  }

  @Test
  void qdrantHintsAreAcceptedOnlyWithTheValueFlashVecHonours() {
    assertThat(
            schema(
                    "n",
                    "{\"type\": \"integer\", \"lookup\": true, \"range\": true, \"on_disk\": true,"
                        + " \"is_principal\": false, \"is_tenant\": false, \"enable_hnsw\": false}")
                .toJson()
                .toString())
        .isEqualTo(
            "{\"data_type\":\"integer\",\"params\":{\"type\":\"integer\",\"lookup\":true,"
                + "\"range\":true}}");
    assertThat(schema("k", "{\"type\": \"keyword\", \"memory\": \"cold\", \"is_tenant\": null}"))
        .isEqualTo(new PayloadFieldSchema("k", PayloadFieldSchema.Type.KEYWORD));
    assertThat(schema("t", "{\"type\": \"text\", \"stemmer\": {\"type\": \"none\"}}"))
        .isEqualTo(new PayloadFieldSchema("t", PayloadFieldSchema.Type.TEXT));
    String[][] refused = {
      {"{\"type\": \"keyword\", \"is_tenant\": true}", "field_schema.is_tenant: only false"},
      {"{\"type\": \"uuid\", \"is_principal\": true}", "[is_principal=true]"},
      {"{\"type\": \"keyword\", \"on_disk\": false}", "field_schema.on_disk: only true"},
      {"{\"type\": \"keyword\", \"memory\": \"pinned\"}", "[memory=\"pinned\"]"},
      {"{\"type\": \"keyword\", \"lookup\": false}", "[lookup=false]"},
      {"{\"type\": \"float\", \"range\": false}", "[range=false]"},
      {"{\"type\": \"keyword\", \"enable_hnsw\": true}", "[enable_hnsw=true]"},
      {"{\"type\": \"text\", \"stopwords\": \"klingon\"}", "[stopwords=\"klingon\"]"},
      {"{\"type\": \"text\", \"stopwords\": \"chinese\"}", "no stop word list"},
      {
        "{\"type\": \"text\", \"stemmer\": {\"type\": \"snowball\", \"language\": \"klingon\"}}",
        "[stemmer.language=\"klingon\"]"
      },
      {"{\"type\": \"text\", \"stemmer\": {\"type\": \"porter\"}}", "field_schema.stemmer"},
      {"{\"type\": \"keyword\", \"stopwords\": \"english\"}", "[stopwords=\"english\"]"},
    };
    for (String[] r : refused) {
      assertThatThrownBy(() -> schema("f", r[0]))
          .as(r[0])
          .isInstanceOf(InvalidInputException.class)
          .hasMessageContaining(r[1]);
    }
  }

  @Test
  void geoPrefixAndPhraseMatchingSchemasParseAndShowTheirParameters() {
    assertThat(schema("loc", "\"geo\"").type()).isEqualTo(PayloadFieldSchema.Type.GEO);
    assertThat(schema("loc", "{\"type\": \"geo\", \"on_disk\": true}").toJson().toString())
        .isEqualTo("{\"data_type\":\"geo\"}");
    PayloadFieldSchema url = schema("url", "{\"type\": \"keyword\", \"prefix\": true}");
    assertThat(url.prefix()).isTrue();
    assertThat(url.toJson().toString())
        .isEqualTo("{\"data_type\":\"keyword\",\"params\":{\"type\":\"keyword\",\"prefix\":true}}");
    assertThat(PayloadFieldSchema.fromJson("url", url.toJson())).isEqualTo(url);
    assertThat(schema("url", "{\"type\": \"keyword\", \"prefix\": false}").toJson().toString())
        .isEqualTo("{\"data_type\":\"keyword\"}");
    PayloadFieldSchema text = schema("t", "{\"type\": \"text\", \"phrase_matching\": true}");
    assertThat(text.text().phraseMatching()).isTrue();
    assertThat(text.toJson().path("params").path("phrase_matching").asBoolean()).isTrue();
    assertThat(PayloadFieldSchema.fromJson("t", text.toJson())).isEqualTo(text);
    // a schema persisted before phrase matching existed keeps its hash (its index directory)
    PayloadSchema before =
        PayloadSchema.fromJsonString(
            "{\"format\":1,\"fields\":{\"t\":{\"data_type\":\"text\",\"params\":{\"type\":\"text\","
                + "\"tokenizer\":\"word\",\"lowercase\":true}}}}");
    assertThat(before.toJsonString())
        .isEqualTo(
            "{\"format\":1,\"fields\":{\"t\":{\"data_type\":\"text\",\"params\":{\"type\":\"text\","
                + "\"tokenizer\":\"word\",\"lowercase\":true}}}}");
    assertThatThrownBy(() -> schema("n", "{\"type\": \"integer\", \"prefix\": true}"))
        .isInstanceOf(InvalidInputException.class)
        .hasMessageContaining("[prefix=true]");
    assertThatThrownBy(() -> schema("n", "{\"type\": \"keyword\", \"phrase_matching\": true}"))
        .isInstanceOf(InvalidInputException.class)
        .hasMessageContaining("[phrase_matching=true]");
    assertThatThrownBy(() -> schema("n", "{\"type\": \"text\", \"phrase_matching\": 1}"))
        .isInstanceOf(InvalidInputException.class)
        .hasMessageContaining("phrase_matching must be a boolean");
    JsonNode unknown = M.readTree("\"geography\"");
    assertThatThrownBy(() -> PayloadFieldSchema.parse("loc", unknown))
        .isInstanceOf(InvalidInputException.class)
        .hasMessageContaining("geo");
  }

  private static String sha(String s) throws Exception {
    byte[] d =
        java.security.MessageDigest.getInstance("SHA-256")
            .digest(s.getBytes(StandardCharsets.UTF_8));
    return java.util.HexFormat.of().formatHex(d, 0, 6);
  }

  @Test
  void indexesOfDottedKeysGetANewDirectoryForThePathsThatNoLongerEnterArrays() throws Exception {
    // the directory name of a schema of single-name keys is what it was: no rebuild
    PayloadSchema flat = PayloadSchema.EMPTY.with(schema("a", "\"keyword\""));
    assertThat(flat.hash()).isEqualTo(sha(flat.toJsonString()));
    // a dotted key's index was built entering arrays without []: it is rebuilt under a new name
    PayloadSchema dotted = flat.with(schema("a.b", "\"keyword\""));
    assertThat(dotted.hash()).isNotEqualTo(sha(dotted.toJsonString()));
    assertThat(PayloadSchema.fromJsonString(dotted.toJsonString()).hash()).isEqualTo(dotted.hash());
  }
}
