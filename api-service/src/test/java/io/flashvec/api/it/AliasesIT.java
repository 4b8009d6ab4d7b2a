package io.flashvec.api.it;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.file.Path;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import tools.jackson.databind.JsonNode;

/**
 * Collection aliases against a real server: Qdrant's actions and listings, every collection route
 * reached through an alias, Qdrant's errors with nothing changed, and aliases that survive a
 * restart and go with their collection.
 */
class AliasesIT {

  @TempDir Path tmp;

  private static final String VECTORS = "{\"vectors\":{\"size\":4,\"distance\":\"Dot\"}}";

  private static Http.Response ok(Http.Response r) {
    assertThat(r.status()).as(r.raw()).isEqualTo(200);
    return r;
  }

  private static Http.Response aliases(Http http, String actions) {
    return http.post("/collections/aliases", "{\"actions\":[" + actions + "]}");
  }

  private static String list(Http http, String path) {
    return ok(http.get(path)).result().get("aliases").toString();
  }

  @Test
  void aliasesWorkOnEveryCollectionRouteAndSurviveARestart() {
    try (ServerProcess server =
        new ServerProcess(tmp.resolve("data"), tmp.resolve("server.log")).start()) {
      Http http = new Http(server.url());
      ok(http.put("/collections/v1", VECTORS));
      ok(http.put("/collections/v2", VECTORS));
      ok(
          aliases(
              http,
              "{\"create_alias\":{\"collection_name\":\"v1\",\"alias_name\":\"prod\"}},"
                  + "{\"create_alias\":{\"collection_name\":\"v1\",\"alias_name\":\"old\"}}"));
      assertThat(ok(aliases(http, "")).result().asBoolean()).isTrue();
      assertThat(list(http, "/aliases"))
          .isEqualTo(
              "[{\"alias_name\":\"old\",\"collection_name\":\"v1\"},"
                  + "{\"alias_name\":\"prod\",\"collection_name\":\"v1\"}]");
      assertThat(list(http, "/collections/v1/aliases")).contains("prod").contains("old");
      assertThat(list(http, "/collections/v2/aliases")).isEqualTo("[]");
      assertThat(list(http, "/collections/nope/aliases")).isEqualTo("[]");

      // every collection route through the alias
      ok(
          http.put(
              "/collections/prod/points?wait=true",
              "{\"points\":[{\"id\":1,\"vector\":[1,0,0,0],\"payload\":{\"k\":\"a\"}},"
                  + "{\"id\":2,\"vector\":[0,1,0,0]},{\"id\":3,\"vector\":[0,0,1,0]}]}"));
      assertThat(ok(http.post("/collections/v1/points/count", "{}")).result().get("count").asLong())
          .isEqualTo(3);
      assertThat(ok(http.get("/collections/prod")).result().get("points_count").asLong())
          .isEqualTo(3);
      assertThat(ok(http.get("/collections/prod/exists")).result().get("exists").asBoolean())
          .isTrue();
      assertThat(ok(http.get("/collections/prod/points/1")).result().get("id").asLong())
          .isEqualTo(1);
      ok(http.post("/collections/prod/points", "{\"ids\":[1,2]}"));
      ok(http.post("/collections/prod/points/scroll", "{\"limit\":10}"));
      JsonNode hits =
          ok(http.post("/collections/prod/points/search", "{\"vector\":[1,0,0,0],\"limit\":2}"))
              .result();
      assertThat(hits.get(0).get("id").asLong()).isEqualTo(1);
      JsonNode q =
          ok(http.post("/collections/prod/points/query", "{\"query\":[0,1,0,0],\"limit\":1}"))
              .result();
      assertThat(q.get("points").get(0).get("id").asLong()).isEqualTo(2);
      ok(
          http.post(
              "/collections/prod/points/query/batch",
              "{\"searches\":[{\"query\":[0,1,0,0],\"limit\":1}]}"));
      ok(
          http.post(
              "/collections/prod/points/payload?wait=true",
              "{\"payload\":{\"k\":\"b\"},\"points\":[2]}"));
      ok(
          http.put(
              "/collections/prod/index?wait=true",
              "{\"field_name\":\"k\",\"field_schema\":\"keyword\"}"));
      assertThat(ok(http.get("/collections/v1")).result().get("payload_schema").has("k")).isTrue();
      ok(http.send("DELETE", "/collections/prod/index/k?wait=true", null));
      ok(
          http.send(
              "PATCH", "/collections/prod", "{\"optimizers_config\":{\"indexing_threshold\":0}}"));
      ok(http.get("/collections/prod/cluster"));
      ok(http.post("/collections/prod/points/delete?wait=true", "{\"points\":[3]}"));
      assertThat(ok(http.post("/collections/v1/points/count", "{}")).result().get("count").asLong())
          .isEqualTo(2);

      // Qdrant's errors, and a refused request changes nothing
      Http.Response missing =
          aliases(
              http,
              "{\"delete_alias\":{\"alias_name\":\"prod\"}},"
                  + "{\"create_alias\":{\"collection_name\":\"nope\",\"alias_name\":\"x\"}}");
      assertThat(missing.status()).isEqualTo(404);
      assertThat(missing.error()).isEqualTo("Not found: Collection `nope` doesn't exist!");
      Http.Response taken =
          aliases(http, "{\"create_alias\":{\"collection_name\":\"v1\",\"alias_name\":\"v2\"}}");
      assertThat(taken.status()).isEqualTo(409);
      assertThat(taken.error()).isEqualTo("Wrong input: Collection `v2` already exists!");
      Http.Response rename =
          aliases(
              http, "{\"rename_alias\":{\"old_alias_name\":\"gone\",\"new_alias_name\":\"x\"}}");
      assertThat(rename.status()).isEqualTo(404);
      assertThat(rename.error()).isEqualTo("Not found: Alias gone does not exists!");
      Http.Response unknown = aliases(http, "{\"switch_alias\":{\"alias_name\":\"prod\"}}");
      assertThat(unknown.status()).isEqualTo(400);
      assertThat(unknown.error()).contains("switch_alias").contains("create_alias");
      Http.Response extra =
          aliases(http, "{\"delete_alias\":{\"alias_name\":\"prod\",\"collection_name\":\"v1\"}}");
      assertThat(extra.status()).isEqualTo(400);
      assertThat(extra.error()).contains("actions[0].delete_alias.collection_name");
      Http.Response badName =
          aliases(http, "{\"create_alias\":{\"collection_name\":\"v1\",\"alias_name\":\"a/b\"}}");
      assertThat(badName.status()).isEqualTo(422);
      assertThat(badName.error())
          .startsWith("Validation error in JSON body: [alias_name: invalid collection name");
      assertThat(http.post("/collections/aliases", "{}").status()).isEqualTo(400);
      Http.Response shadow = http.put("/collections/prod", VECTORS);
      assertThat(shadow.status()).isEqualTo(400);
      assertThat(shadow.error())
          .isEqualTo(
              "Wrong input: Can't create collection with name prod. Alias with the same name"
                  + " already exists");
      assertThat(http.post("/collections/ghost/points/count", "{}").error())
          .isEqualTo("Not found: Collection `ghost` doesn't exist!");
      assertThat(list(http, "/aliases")).contains("prod").contains("old").doesNotContain("\"x\"");

      // switch prod to v2 in one request, rename old
      ok(
          aliases(
              http,
              "{\"delete_alias\":{\"alias_name\":\"prod\"}},"
                  + "{\"create_alias\":{\"collection_name\":\"v2\",\"alias_name\":\"prod\"}},"
                  + "{\"rename_alias\":{\"old_alias_name\":\"old\",\"new_alias_name\":\"v1_old\"}}"));
      assertThat(
              ok(http.post("/collections/prod/points/count", "{}")).result().get("count").asLong())
          .isZero();

      server.restart();
      assertThat(list(http, "/aliases"))
          .isEqualTo(
              "[{\"alias_name\":\"v1_old\",\"collection_name\":\"v1\"},"
                  + "{\"alias_name\":\"prod\",\"collection_name\":\"v2\"}]");
      assertThat(
              ok(http.post("/collections/v1_old/points/count", "{}"))
                  .result()
                  .get("count")
                  .asLong())
          .isEqualTo(2);

      // deleting a collection deletes its aliases, also after a restart
      assertThat(ok(http.delete("/collections/v1")).result().asBoolean()).isTrue();
      assertThat(list(http, "/aliases"))
          .isEqualTo("[{\"alias_name\":\"prod\",\"collection_name\":\"v2\"}]");
      assertThat(http.post("/collections/v1_old/points/count", "{}").status()).isEqualTo(404);
      server.restart();
      assertThat(list(http, "/aliases"))
          .isEqualTo("[{\"alias_name\":\"prod\",\"collection_name\":\"v2\"}]");
    }
  }
}
