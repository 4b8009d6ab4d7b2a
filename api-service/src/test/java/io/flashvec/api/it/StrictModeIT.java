package io.flashvec.api.it;

import static org.assertj.core.api.Assertions.assertThat;

import io.flashvec.testing.TestSeeds;
import java.nio.file.Path;
import java.util.Locale;
import java.util.Random;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import tools.jackson.databind.JsonNode;

/**
 * Qdrant's strict mode and collection metadata against a real server: both are stored with the
 * collection, shown in its info where Qdrant shows them, merged on update as Qdrant merges them,
 * kept across a restart and in a snapshot; every enforced limit answers with Qdrant's status and
 * message, and the settings FlashVec cannot enforce are refused naming the field.
 */
@ExtendWith(TestSeeds.Reporter.class)
class StrictModeIT extends OneServerPerClass {

  @Test
  void strictModeAndMetadata() {
    Random r = TestSeeds.random("StrictModeIT");
    ok(
        http.put(
            "/collections/s",
            "{\"vectors\": {\"size\": 4, \"distance\": \"Dot\"},"
                + " \"metadata\": {\"team\": \"search\", \"version\": 1},"
                + " \"strict_mode_config\": {\"enabled\": true, \"max_query_limit\": 5}}"));
    JsonNode config = http.get("/collections/s").result().get("config");
    assertThat(config.get("metadata").toString()).isEqualTo("{\"team\":\"search\",\"version\":1}");
    assertThat(config.get("strict_mode_config").toString())
        .isEqualTo("{\"enabled\":true,\"max_query_limit\":5}");
    upsert("s", r, 1, 10);

    // metadata: key by key, null removes
    ok(http.send("PATCH", "/collections/s", "{\"metadata\": {\"owner\": \"b\", \"team\": null}}"));
    assertThat(http.get("/collections/s").result().at("/config/metadata").toString())
        .isEqualTo("{\"version\":1,\"owner\":\"b\"}");
    bad(
        http.send("PATCH", "/collections/s", "{\"metadata\": [1]}"),
        400,
        "metadata must be a JSON object");

    // max_query_limit
    ok(http.post("/collections/s/points/query", "{\"query\": [1,0,0,0], \"limit\": 5}"));
    bad(
        http.post("/collections/s/points/query", "{\"query\": [1,0,0,0], \"limit\": 6}"),
        400,
        "Bad request: Limit exceeded 6 > 5 for \"limit\". Help: Reduce the \"limit\" parameter"
            + " to or below 5.");
    bad(
        http.post("/collections/s/points/scroll", "{\"limit\": 6}"),
        400,
        "Limit exceeded 6 > 5 for \"limit\"");
    // a scroll's default limit is not checked (as Qdrant); a malformed limit is the parser's 400
    ok(http.post("/collections/s/points/scroll", "{}"));
    bad(
        http.post("/collections/s/points/query", "{\"query\": [1,0,0,0], \"limit\": \"x\"}"),
        400,
        "limit");

    // a partial update keeps the other fields; null keeps a field
    strict("s", "{\"max_timeout\": 2, \"max_query_limit\": null}");
    assertThat(http.get("/collections/s").result().at("/config/strict_mode_config").toString())
        .isEqualTo("{\"enabled\":true,\"max_query_limit\":5,\"max_timeout\":2}");
    ok(http.post("/collections/s/points/query?timeout=2", "{\"query\": [1,0,0,0], \"limit\": 3}"));
    bad(
        http.post("/collections/s/points/query?timeout=3", "{\"query\": [1,0,0,0], \"limit\": 3}"),
        400,
        "Limit exceeded 3 > 2 for \"timeout\"");

    // unindexed filters (and a limit the default limits keep)
    strict(
        "s",
        "{\"max_query_limit\": 100, \"unindexed_filtering_retrieve\": false,"
            + " \"unindexed_filtering_update\": false}");
    String cityFilter = "{\"must\": [{\"key\": \"city\", \"match\": {\"value\": \"Berlin\"}}]}";
    bad(
        http.post("/collections/s/points/scroll", "{\"filter\": " + cityFilter + "}"),
        400,
        "Bad request: Index required but not found for \"city\" of one of the following types:"
            + " [keyword]. Help: Create an index for this key or use a different filter.");
    bad(
        http.post(
            "/collections/s/points/delete?wait=true",
            "{\"filter\": {\"must\": [{\"key\": \"n\", \"range\": {\"gte\": 100}}]}}"),
        400,
        "Index required but not found for \"n\" of one of the following types: [float, integer]");
    ok(
        http.put(
            "/collections/s/index?wait=true",
            "{\"field_name\": \"city\", \"field_schema\": \"keyword\"}"));
    ok(http.post("/collections/s/points/scroll", "{\"filter\": " + cityFilter + "}"));
    bad(
        http.post(
            "/collections/s/points/query/groups",
            "{\"query\": [1,0,0,0], \"group_by\": \"tag\", \"limit\": 1, \"group_size\": 1}"),
        400,
        "Bad request: Index required but not found for \"tag\". Help: Create an index supporting"
            + " `match` for this key.");
    strict("s", "{\"unindexed_filtering_retrieve\": true, \"unindexed_filtering_update\": true}");

    // search parameters
    strict("s", "{\"search_max_hnsw_ef\": 4, \"search_max_oversampling\": 1.5}");
    bad(
        http.post(
            "/collections/s/points/query", "{\"query\": [1,0,0,0], \"params\": {\"hnsw_ef\": 5}}"),
        400,
        "Limit exceeded 5 > 4 for \"hnsw_ef\"");
    bad(
        http.post(
            "/collections/s/points/search",
            "{\"vector\": [1,0,0,0], \"limit\": 3,"
                + " \"params\": {\"quantization\": {\"oversampling\": 2.0}}}"),
        400,
        "Limit exceeded 2 > 1.5 for \"oversampling\"");
    strict("s", "{\"search_allow_exact\": false}");
    bad(
        http.post(
            "/collections/s/points/query", "{\"query\": [1,0,0,0], \"params\": {\"exact\": true}}"),
        400,
        "Bad request: Exact search disabled!. Help: Set exact=false.");
    // a count is exact unless it says otherwise, as in Qdrant
    bad(http.post("/collections/s/points/count", "{}"), 400, "Exact search disabled!");
    ok(http.post("/collections/s/points/count", "{\"exact\": false}"));
    strict("s", "{\"search_allow_exact\": true}");

    // batch sizes
    strict("s", "{\"upsert_max_batchsize\": 3, \"search_max_batchsize\": 2}");
    bad(upsertResponse("s", r, 100, 4), 400, "Limit exceeded 4 > 3 for \"upsert limit\"");
    bad(
        http.send(
            "PUT",
            "/collections/s/points/vectors",
            "{\"points\": [{\"id\": 1, \"vector\": [1,0,0,0]}, {\"id\": 2, \"vector\": [1,0,0,0]},"
                + " {\"id\": 3, \"vector\": [1,0,0,0]}, {\"id\": 4, \"vector\": [1,0,0,0]}]}"),
        400,
        "Limit exceeded 4 > 3 for \"update limit\"");
    bad(
        http.post(
            "/collections/s/points/batch",
            "{\"operations\": [{\"upsert\": {\"points\": [" + points(r, 200, 4) + "]}}]}"),
        400,
        "upsert limit");
    String q = "{\"query\": [1,0,0,0], \"limit\": 1}";
    bad(
        http.post(
            "/collections/s/points/query/batch", "{\"searches\": [" + q + "," + q + "," + q + "]}"),
        400,
        "Limit exceeded 3 > 2 for \"search batch size\"");
    ok(http.post("/collections/s/points/query/batch", "{\"searches\": [" + q + "," + q + "]}"));

    // filter sizes
    strict("s", "{\"filter_max_conditions\": 2, \"condition_max_size\": 2}");
    bad(
        http.post(
            "/collections/s/points/scroll",
            "{\"filter\": {\"must\": [{\"key\": \"n\", \"match\": {\"value\": 1}},"
                + " {\"nested\": {\"key\": \"x\", \"filter\": {\"must\": [{\"key\": \"a\","
                + " \"match\": {\"value\": 1}}, {\"key\": \"b\", \"match\": {\"value\": 1}}]}}}]}}"),
        400,
        "Bad request: Filter condition limit reached (3 > 2). Help: Reduce the amount of conditions"
            + " of your filter.");
    bad(
        http.post(
            "/collections/s/points/scroll",
            "{\"filter\": {\"must\": [{\"key\": \"n\", \"match\": {\"any\": [1, 2, 3]}}]}}"),
        400,
        "Bad request: Condition size limit reached (3 > 2). Help: Reduce the size of your"
            + " condition.");

    // stored sizes: points and vector bytes (float32, one vector a point)
    long count = http.post("/collections/s/points/count", "{}").result().get("count").asLong();
    strict("s", "{\"max_points_count\": " + count + "}");
    bad(upsertResponse("s", r, 300, 1), 400, "Bad request: Max points count limit of " + count);
    strict("s", "{\"max_points_count\": 1000000, \"max_collection_vector_size_bytes\": 160}");
    assertThat(count * 16).isGreaterThanOrEqualTo(160);
    bad(
        upsertResponse("s", r, 300, 1),
        400,
        "Max vector storage size limit of 0.00015258789MB reached!");
    strict("s", "{\"max_collection_vector_size_bytes\": 100000000}");
    // payload bytes: those stored, compared before an insert or a payload update
    strict("s", "{\"max_collection_payload_size_bytes\": 100}");
    bad(upsertResponse("s", r, 300, 1), 400, "Bad request: Max payload storage size limit of");
    bad(
        http.post("/collections/s/points/payload", "{\"payload\": {\"a\": 1}, \"points\": [1]}"),
        400,
        "Max payload storage size limit of 0.00009536743MB reached!");
    strict("s", "{\"max_collection_payload_size_bytes\": 100000000}");

    // payload indexes: one exists; replacing it is fine, a new one is not
    strict("s", "{\"max_payload_index_count\": 1}");
    ok(
        http.put(
            "/collections/s/index?wait=true",
            "{\"field_name\": \"city\", \"field_schema\": \"keyword\"}"));
    bad(
        http.put(
            "/collections/s/index?wait=true",
            "{\"field_name\": \"n\", \"field_schema\": \"integer\"}"),
        400,
        "Bad request: Collection already has the maximum number of payload indices (1). Help:"
            + " Please delete an existing index before creating a new one.");

    // matrix: sample times limit
    strict("s", "{\"max_query_limit\": 15}");
    bad(
        http.post("/collections/s/points/search/matrix/pairs", "{\"sample\": 10, \"limit\": 2}"),
        400,
        "Limit exceeded 20 > 15 for \"limit\"");

    // read rate limit: a token a request (and one per filter condition), Retry-After
    strict("s", "{\"read_rate_limit\": 3}");
    bad(
        http.post("/collections/s/points", "{\"ids\": [1, 2, 3, 4]}"),
        429,
        "Rate limiting exceeded: Read rate limit exceeded, request larger than rate limiter"
            + " capacity, please try to split your request");
    for (int i = 0; i < 3; i++) {
      ok(http.post("/collections/s/points/scroll", "{\"limit\": 1}"));
    }
    Http.Response limited = http.post("/collections/s/points/scroll", "{\"limit\": 1}");
    bad(
        limited,
        429,
        "Rate limiting exceeded: Read rate limit exceeded: Operation requires 1 tokens but only 0.");
    assertThat(Integer.parseInt(limited.header("Retry-After"))).isBetween(15, 20);
    assertThat(limited.error()).matches(".*Retry after (1[5-9]|20)s");
    // setting the strict mode again fills the bucket again, as in Qdrant
    strict("s", "{\"read_rate_limit\": 3}");
    ok(http.post("/collections/s/points/scroll", "{\"limit\": 1}"));

    // write rate limit: a token a point
    strict("s", "{\"read_rate_limit\": 1000, \"write_rate_limit\": 2}");
    bad(upsertResponse("s", r, 400, 3), 429, "Write rate limit exceeded, request larger than");
    ok(upsertResponse("s", r, 400, 2));
    bad(
        upsertResponse("s", r, 410, 1),
        429,
        "Rate limiting exceeded: Write rate limit exceeded: Operation requires 1 tokens");

    // disabled: the limits are kept and shown, and nothing is enforced
    strict("s", "{\"enabled\": false}");
    ok(upsertResponse("s", r, 420, 3));
    ok(http.post("/collections/s/points/query", "{\"query\": [1,0,0,0], \"limit\": 50}"));
    assertThat(
            http.get("/collections/s")
                .result()
                .at("/config/strict_mode_config/enabled")
                .asBoolean())
        .isFalse();
    assertThat(
            http.get("/collections/s")
                .result()
                .at("/config/strict_mode_config/write_rate_limit")
                .asLong())
        .isEqualTo(2);
    strict("s", "{\"enabled\": true, \"write_rate_limit\": 1000000}");

    // refused: what FlashVec cannot enforce, unknown fields and vector names, wrong types; 422
    // below minimums
    for (String field :
        new String[] {
          "max_resident_memory_percent\": 50",
          "multivector_config\": {\"v\": {\"max_vectors\": 2}}",
          "no_such_limit\": 1"
        }) {
      Http.Response refused =
          http.send("PATCH", "/collections/s", "{\"strict_mode_config\": {\"" + field + "}}");
      bad(refused, 400, "strict_mode_config." + field.substring(0, field.indexOf('"')));
    }
    bad(
        http.send("PATCH", "/collections/s", "{\"strict_mode_config\": {\"max_query_limit\": 0}}"),
        422,
        "strict_mode_config.max_query_limit: value 0 invalid, must be 1 or larger");
    bad(
        http.send(
            "PATCH", "/collections/s", "{\"strict_mode_config\": {\"max_query_limit\": \"x\"}}"),
        400,
        "strict_mode_config.max_query_limit must be a non-negative integer");
    bad(
        http.send(
            "PATCH",
            "/collections/s",
            "{\"strict_mode_config\": {\"sparse_config\": {\"text\": {\"max_length\": 2}}}}"),
        400,
        "strict_mode_config.sparse_config.text: the collection has no sparse vector of that name");
    assertThat(http.get("/collections/s").result().at("/config/strict_mode_config").toString())
        .doesNotContain("memory", "multivector", "no_such", "sparse");

    // sparse vectors: max_length by name
    ok(
        http.put(
            "/collections/sp",
            "{\"vectors\": {\"size\": 4, \"distance\": \"Dot\"},"
                + " \"sparse_vectors\": {\"text\": {}},"
                + " \"strict_mode_config\": {\"enabled\": true,"
                + " \"sparse_config\": {\"text\": {\"max_length\": 2}}}}"));
    ok(
        http.put(
            "/collections/sp/points?wait=true",
            "{\"points\": [{\"id\": 1, \"vector\": {\"text\": {\"indices\": [1, 2], \"values\":"
                + " [0.5, 0.5]}}}]}"));
    bad(
        http.put(
            "/collections/sp/points?wait=true",
            "{\"points\": [{\"id\": 2, \"vector\": {\"text\": {\"indices\": [1, 2, 3], \"values\":"
                + " [0.5, 0.5, 0.5]}}}]}"),
        400,
        "Bad request: Sparse vector 'text' has a limit of 2 indices, but 3 were provided!");
    assertThat(http.get("/collections/sp").result().at("/config/strict_mode_config").toString())
        .isEqualTo("{\"enabled\":true,\"sparse_config\":{\"text\":{\"max_length\":2}}}");

    // multivectors: max_vectors by name, in points and batches; none when disabled
    ok(
        http.put(
            "/collections/mv",
            "{\"vectors\": {\"m\": {\"size\": 2, \"distance\": \"Dot\", \"multivector_config\":"
                + " {\"comparator\": \"max_sim\"}}},"
                + " \"strict_mode_config\": {\"enabled\": true,"
                + " \"multivector_config\": {\"m\": {\"max_vectors\": 2}}}}"));
    ok(
        http.put(
            "/collections/mv/points?wait=true",
            "{\"points\": [{\"id\": 1, \"vector\": {\"m\": [[1, 2], [3, 4]]}}]}"));
    String three = "[[1, 2], [3, 4], [5, 6]]";
    String want = "Bad request: Multivector 'm' has a limit of 2 vectors, but 3 were provided!";
    bad(
        http.put(
            "/collections/mv/points?wait=true",
            "{\"points\": [{\"id\": 2, \"vector\": {\"m\": " + three + "}}]}"),
        400,
        want);
    bad(
        http.put(
            "/collections/mv/points?wait=true",
            "{\"batch\": {\"ids\": [2], \"vectors\": {\"m\": [" + three + "]}}}"),
        400,
        want);
    assertThat(http.get("/collections/mv/points/2").status()).isEqualTo(404);
    assertThat(http.get("/collections/mv").result().at("/config/strict_mode_config").toString())
        .isEqualTo("{\"enabled\":true,\"multivector_config\":{\"m\":{\"max_vectors\":2}}}");
    strict("mv", "{\"enabled\": false}");
    ok(
        http.put(
            "/collections/mv/points?wait=true",
            "{\"points\": [{\"id\": 2, \"vector\": {\"m\": " + three + "}}]}"));

    // a collection without a graph (hnsw m = 0) is scanned: forbidden without search_allow_exact
    ok(
        http.put(
            "/collections/flat",
            "{\"vectors\": {\"size\": 4, \"distance\": \"Dot\"}, \"hnsw_config\": {\"m\": 0},"
                + " \"strict_mode_config\": {\"enabled\": true, \"search_allow_exact\": false}}"));
    upsert("flat", r, 1, 3);
    bad(
        http.post("/collections/flat/points/query", "{\"query\": [1,0,0,0]}"),
        400,
        "Bad request: Request is forbidden because global vector indexing is disabled"
            + " (hnsw_config.m = 0). Help: Use tenant-specific filter, enable global vector"
            + " indexing or enable strict mode `search_allow_exact` option");

    // a collection without either shows neither
    ok(http.put("/collections/plain", "{\"vectors\": {\"size\": 4, \"distance\": \"Dot\"}}"));
    JsonNode plain = http.get("/collections/plain").result().get("config");
    assertThat(plain.has("strict_mode_config")).isFalse();
    assertThat(plain.has("metadata")).isFalse();

    // a snapshot carries both
    String snapshot = http.post("/collections/s/snapshots", null).result().get("name").asString();
    Path file = server.dataDir().resolve("snapshots").resolve("s").resolve(snapshot);
    ok(
        http.put(
            "/collections/restored/snapshots/recover", "{\"location\": \"" + file.toUri() + "\"}"));
    JsonNode restored = http.get("/collections/restored").result().get("config");
    JsonNode original = http.get("/collections/s").result().get("config");
    assertThat(restored.get("strict_mode_config")).isEqualTo(original.get("strict_mode_config"));
    assertThat(restored.get("metadata")).isEqualTo(original.get("metadata"));

    // and a restart keeps them, enforced
    server.restart();
    http = new Http(server.url());
    JsonNode after = http.get("/collections/s").result().get("config");
    assertThat(after.get("strict_mode_config")).isEqualTo(original.get("strict_mode_config"));
    assertThat(after.get("metadata").toString()).isEqualTo("{\"version\":1,\"owner\":\"b\"}");
    bad(
        http.post("/collections/s/points/query", "{\"query\": [1,0,0,0], \"limit\": 16}"),
        400,
        "Limit exceeded 16 > 15 for \"limit\"");
  }

  /**
   * {@code max_collection_payload_size_bytes} counts the payload bytes the segments hold, versions
   * a point has replaced included (until a seal or merge writes the segment without them), as
   * Qdrant counts the storage its replaced payloads still occupy: overwriting the same points grows
   * the count. FlashVec counts the payloads' JSON bytes exactly, where Qdrant counts its 128-byte
   * storage blocks.
   */
  @Test
  void payloadSizeCountsReplacedVersionsByTheirBytes() {
    ok(http.put("/collections/pb", "{\"vectors\": {\"size\": 4, \"distance\": \"Dot\"}}"));
    String point =
        "{\"points\": [{\"id\": 1, \"vector\": [1, 2, 3, 5], \"payload\": {\"city\": \"Berlin\"}}]}";
    int bytes = "{\"city\":\"Berlin\"}".length();
    for (int i = 0; i < 10; i++) {
      ok(http.put("/collections/pb/points?wait=true", point));
    }
    assertThat(http.post("/collections/pb/points/count", "{}").result().get("count").asLong())
        .isEqualTo(1);
    // ten versions of one point are held: 10 * 17 bytes, not 17
    strict(
        "pb", "{\"enabled\": true, \"max_collection_payload_size_bytes\": " + (10 * bytes) + "}");
    bad(
        http.put("/collections/pb/points?wait=true", point),
        400,
        "Bad request: Max payload storage size limit of");
    strict("pb", "{\"max_collection_payload_size_bytes\": " + (10 * bytes + 1) + "}");
    ok(http.put("/collections/pb/points?wait=true", point));
    bad(
        http.put("/collections/pb/points?wait=true", point),
        400,
        "Bad request: Max payload storage size limit of");
    ok(http.delete("/collections/pb"));
  }

  /**
   * A filtered write under a write rate limit costs the points its filter matches when its keys are
   * indexed, and Qdrant's estimate when one is not: half the collection's points for each such
   * condition, whatever it matches.
   */
  @Test
  void filteredWritesCostTheirMatchesOrQdrantsEstimate() {
    Random r = TestSeeds.random("StrictModeIT.filteredWrites");
    ok(http.put("/collections/fw", "{\"vectors\": {\"size\": 4, \"distance\": \"Dot\"}}"));
    upsert("fw", r, 1, 10);
    ok(
        http.put(
            "/collections/fw/index?wait=true",
            "{\"field_name\": \"n\", \"field_schema\": \"integer\"}"));
    strict("fw", "{\"enabled\": true, \"write_rate_limit\": 7}");
    // indexed: the three points with n in 1..3 cost 3 tokens, leaving 4
    ok(
        http.put(
            "/collections/fw/points/payload?wait=true",
            "{\"payload\": {\"tag\": 1}, \"filter\": {\"must\": [{\"key\": \"n\","
                + " \"range\": {\"lte\": 3}}]}}"));
    // unindexed: no point has City, yet the write costs half the 10 points
    String unindexed =
        "{\"payload\": {\"City\": \"x\"}, \"filter\": {\"must\": [{\"key\": \"City\","
            + " \"match\": {\"value\": \"Berlin\"}}]}}";
    bad(
        http.put("/collections/fw/points/payload?wait=true", unindexed),
        429,
        "Rate limiting exceeded: Write rate limit exceeded: Operation requires 5 tokens but only");
    strict("fw", "{\"write_rate_limit\": 7}");
    ok(http.put("/collections/fw/points/payload?wait=true", unindexed));
    bad(
        http.put("/collections/fw/points/payload?wait=true", unindexed),
        429,
        "Operation requires 5 tokens but only");
    ok(http.delete("/collections/fw"));
  }

  private static void strict(String collection, String config) {
    ok(
        http.send(
            "PATCH", "/collections/" + collection, "{\"strict_mode_config\": " + config + "}"));
  }

  private static String points(Random r, int from, int n) {
    StringBuilder sb = new StringBuilder();
    for (int i = 0; i < n; i++) {
      if (i > 0) {
        sb.append(',');
      }
      sb.append(
          String.format(
              Locale.ROOT,
              "{\"id\": %d, \"vector\": [%f, %f, %f, %f], \"payload\": {\"city\": \"%s\","
                  + " \"n\": %d}}",
              from + i,
              r.nextFloat(),
              r.nextFloat(),
              r.nextFloat(),
              r.nextFloat(),
              r.nextBoolean() ? "Berlin" : "London",
              from + i));
    }
    return sb.toString();
  }

  private static Http.Response upsertResponse(String collection, Random r, int from, int n) {
    return http.put(
        "/collections/" + collection + "/points?wait=true",
        "{\"points\": [" + points(r, from, n) + "]}");
  }

  private static void upsert(String collection, Random r, int from, int n) {
    ok(upsertResponse(collection, r, from, n));
  }

  private static void ok(Http.Response r) {
    assertThat(r.status()).as(r.raw()).isEqualTo(200);
  }

  private static void bad(Http.Response r, int status, String message) {
    assertThat(r.status()).as(r.raw()).isEqualTo(status);
    assertThat(r.error()).contains(message);
  }
}
