package io.flashvec.api.it;

import static org.assertj.core.api.Assertions.assertThat;

import io.flashvec.testing.Await;
import io.flashvec.testing.TestSeeds;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.SplittableRandom;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.MethodOrderer;
import org.junit.jupiter.api.Order;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;
import org.junit.jupiter.api.TestMethodOrder;
import org.junit.jupiter.api.io.CleanupMode;
import org.junit.jupiter.api.io.TempDir;
import tools.jackson.databind.JsonNode;

/**
 * The dashboard in a real browser (Debian's Chromium, headless, over the DevTools protocol) against
 * a server with an API key: the pages load without the key and ask for it; every view then shows
 * what the REST API holds. With {@code -Dflashvec.dashboard.screenshots=DIR} the test also saves a
 * screenshot of each view there (the README's images come from it).
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
@TestMethodOrder(MethodOrderer.OrderAnnotation.class)
class DashboardIT {

  private static final String KEY = "dashboard-test-key";
  private static final String READ_ONLY_KEY = "dashboard-reader";
  private static final String[] COLORS = {"red", "green", "blue"};
  private static final int DIM = 8;
  private static final int POINTS = 150;
  private static final String BIG_ID = "9007199254740993";

  private ServerProcess server;
  private Http api;
  private Chromium browser;
  private Chromium.Page page;
  private Path shots;
  private SplittableRandom random;
  private int reds;

  @BeforeAll
  void start(@TempDir(cleanup = CleanupMode.ON_SUCCESS) Path tmp) throws Exception {
    System.out.println("[flashvec] DashboardIT: logs in " + tmp + " (kept when a test fails)");
    random = new SplittableRandom(TestSeeds.seed("DashboardIT"));
    String dir = System.getProperty("flashvec.dashboard.screenshots", "");
    shots = dir.isBlank() ? null : Files.createDirectories(Path.of(dir));
    server =
        new ServerProcess(
                tmp.resolve("data"),
                tmp.resolve("server.log"),
                "--flashvec.security.api-key=" + KEY,
                "--flashvec.security.read-only-api-key=" + READ_ONLY_KEY,
                // small segments, so that sealed ones with graphs show beside the growing one
                "--flashvec.segment.seal-threshold-points=64")
            .start();
    api = new Http(server.url());
    assertThat(
            put("/collections/shop", "{\"vectors\":{\"size\":" + DIM + ",\"distance\":\"Cosine\"}}")
                .status())
        .isEqualTo(200);
    assertThat(
            put("/collections/empty", "{\"vectors\":{\"size\":2,\"distance\":\"Dot\"}}").status())
        .isEqualTo(200);
    List<String> points = new ArrayList<>();
    for (int i = 1; i < POINTS; i++) {
      String color = COLORS[random.nextInt(COLORS.length)];
      reds += color.equals("red") ? 1 : 0;
      points.add(
          "{\"id\":"
              + i
              + ",\"vector\":"
              + vector()
              + ",\"payload\":{\"color\":\""
              + color
              + "\",\"n\":"
              + i
              + "}}");
    }
    // and one id past 2^53, which a JavaScript number cannot hold exactly
    points.add(
        "{\"id\":" + BIG_ID + ",\"vector\":" + vector() + ",\"payload\":{\"color\":\"violet\"}}");
    // in batches: a segment seals between them once it holds 64 points
    for (int from = 0; from < points.size(); from += 30) {
      String batch = String.join(",", points.subList(from, Math.min(points.size(), from + 30)));
      assertThat(put("/collections/shop/points?wait=true", "{\"points\":[" + batch + "]}").status())
          .isEqualTo(200);
    }
    Await.until(
        Duration.ofSeconds(60),
        "shop indexed (green)",
        () ->
            "shop is "
                + api.send("GET", "/collections/shop", null, "api-key", KEY).result().get("status"),
        () ->
            api.send("GET", "/collections/shop", null, "api-key", KEY)
                .result()
                .get("status")
                .asString()
                .equals("green"));
    browser = Chromium.start(tmp);
  }

  @AfterAll
  void stop() {
    if (browser != null) {
      browser.close();
    }
    if (server != null) {
      server.close();
    }
  }

  private Http.Response put(String path, String body) {
    return api.send("PUT", path, body, "api-key", KEY);
  }

  private String vector() {
    List<String> v = new ArrayList<>();
    for (int d = 0; d < DIM; d++) {
      v.add(String.format(Locale.ROOT, "%.4f", random.nextDouble(-1, 1)));
    }
    return "[" + String.join(",", v) + "]";
  }

  private void shot(String name) throws Exception {
    shot(name, 800);
  }

  private void shot(String name, int height) throws Exception {
    if (shots != null) {
      page.screenshot(shots.resolve("dashboard-" + name + ".png"), height);
    }
  }

  @Test
  @Order(1)
  void pagesLoadWithoutTheKeyButTheDataNeedsIt() throws Exception {
    HttpClient client = HttpClient.newHttpClient();
    HttpResponse<String> r =
        client.send(
            HttpRequest.newBuilder(URI.create(server.url() + "/dashboard")).build(),
            HttpResponse.BodyHandlers.ofString());
    assertThat(r.statusCode()).isEqualTo(308);
    assertThat(r.headers().firstValue("Location")).hasValue("/dashboard/");
    r =
        client.send(
            HttpRequest.newBuilder(URI.create(server.url() + "/dashboard/")).build(),
            HttpResponse.BodyHandlers.ofString());
    assertThat(r.statusCode()).isEqualTo(200);
    assertThat(r.headers().firstValue("Content-Type"))
        .hasValueSatisfying(t -> assertThat(t).startsWith("text/html"));
    assertThat(r.body()).contains("<script type=\"module\" src=\"app.js\">");
    for (String path : List.of("/dashboard/app.js", "/dashboard/vendor/uplot/uPlot.esm.js")) {
      HttpResponse<String> js =
          client.send(
              HttpRequest.newBuilder(URI.create(server.url() + path)).build(),
              HttpResponse.BodyHandlers.ofString());
      assertThat(js.statusCode()).as(path).isEqualTo(200);
      assertThat(js.headers().firstValue("Content-Type")).as(path).hasValue("text/javascript");
    }
    // the data stays behind the key, also when reached through the dashboard's prefix
    assertThat(api.get("/collections").status()).isEqualTo(401);
    for (String sneaky :
        List.of("/dashboard/../collections", "/dashboard/%2e%2e/collections", "/dashboardx")) {
      assertThat(api.get(sneaky).status()).as(sneaky).isIn(401, 404);
      assertThat(api.get(sneaky).raw()).as(sneaky).doesNotContain("shop");
    }
    assertThat(api.get("/dashboard/missing.js").status()).isEqualTo(404);

    page = browser.open(server.url() + "/dashboard/");
    page.waitForElement("#view .error");
    assertThat(page.text("#view .error")).contains("401").contains("API key");

    page.fill("#api-key", KEY);
    page.click("#key-form button");
    page.waitFor("the collections table", "document.querySelector('#collections-table')");
    // kept for the tab's session: a reload still has it
    page.eval("location.reload(), true");
    page.waitFor(
        "the collections table after a reload", "document.querySelector('#collections-table')");
    assertThat(page.eval("sessionStorage.getItem('flashvec.api-key')").asString()).isEqualTo(KEY);
  }

  @Test
  @Order(2)
  void collectionsListAndDetail() throws Exception {
    page.show("#collections");
    page.waitFor(
        "both collections",
        "document.querySelectorAll('#collections-table tbody tr').length === 2");
    String table = page.text("#collections-table");
    assertThat(table).contains("shop").contains("empty").contains(Integer.toString(POINTS));
    JsonNode info = api.send("GET", "/collections/shop", null, "api-key", KEY).result();
    assertThat(page.text("#collections-table tbody tr:nth-child(2) .status"))
        .isEqualTo(info.get("status").asString());
    shot("collections");

    page.click("a.collection[href='#collections/shop']");
    page.waitForElement("#segments-table");
    JsonNode segments = info.get("flashvec").get("segments");
    assertThat(page.count("#segments-table tbody tr")).isEqualTo(segments.size());
    String segs = page.text("#segments-table");
    for (JsonNode s : segments) {
      assertThat(segs).contains(s.get("state").asString());
    }
    assertThat(segments.size()).as("sealed at 64 points").isGreaterThan(1);
    assertThat(segs).contains("sealed");
    assertThat(page.text("#view"))
        .contains("Indexing")
        .contains("Shards")
        .contains("Configuration")
        .contains("\"size\": " + DIM);
    shot("collection");
  }

  @Test
  @Order(3)
  void pointBrowserPagesAndFilters() throws Exception {
    page.show("#points/empty");
    page.waitForElement("#points-out .empty");
    assertThat(page.text("#points-out")).contains("no points");

    page.show("#points/shop");
    page.waitFor(
        "a page of points", "document.querySelectorAll('#points-table tbody tr').length === 20");
    assertThat(page.text("#points-count")).isEqualTo(POINTS + " points");
    String first = page.text("#points-table tbody tr td");
    page.click("#points-out .toolbar button:nth-of-type(2)"); // Next
    page.waitFor(
        "the next page",
        "document.querySelector('#points-table tbody tr td').innerText !== "
            + Chromium.quote(first));

    page.fill("#filter", "{\"must\": [{\"key\": \"color\", \"match\": {\"value\": \"red\"}}]}");
    page.click("form.query button[type=submit]");
    page.waitFor(
        "the filtered count",
        "(document.querySelector('#points-count') || {}).innerText === "
            + Chromium.quote(reds + " points match the filter"));
    int rows = page.count("#points-table tbody tr");
    assertThat(rows).isEqualTo(Math.min(20, reds));
    for (int i = 1; i <= rows; i++) {
      assertThat(page.text("#points-table tbody tr:nth-child(" + i + ") td:nth-child(2)"))
          .contains("\"color\":\"red\"");
    }
    shot("points");

    page.fill("#filter", "{\"must\": [{\"key\": \"color\", \"match\": {\"value\": \"violet\"}}]}");
    page.click("form.query button[type=submit]");
    page.waitFor(
        "the point with a 64-bit id",
        "(document.querySelector('#points-count') || {}).innerText === '1 point matches the filter'");
    assertThat(page.text("#points-table tbody tr td")).isEqualTo(BIG_ID);
    page.click("#points-table a.point-id");
    page.waitFor("the search near it", "document.querySelector('#results-table')");
    assertThat(page.eval("document.querySelector('#point-id').value").asString()).isEqualTo(BIG_ID);
    assertThat(page.content("#request")).contains("\"query\": " + BIG_ID + "\n");
    assertThat(page.text("#results-table")).doesNotContain(BIG_ID);
    page.show("#points/shop");

    page.fill("#filter", "{\"must\": [");
    page.click("form.query button[type=submit]");
    page.waitForElement("#points-out .error");
    assertThat(page.text("#points-out .error")).contains("Filter is not valid JSON");
  }

  @Test
  @Order(4)
  void searchPlaygroundShowsHitsAndTheirCost() throws Exception {
    String query = vector();
    String filter = "{\"must\": [{\"key\": \"color\", \"match\": {\"value\": \"blue\"}}]}";
    page.show("#search/shop");
    page.waitForElement("#vector");
    page.fill("#vector", query);
    page.fill("#filter", filter);
    page.fill("#limit", "5");
    page.fill("#search-list", "64");
    page.click("#run");
    page.waitForElement("#results-table");

    JsonNode expected =
        api.send(
                "POST",
                "/collections/shop/points/query",
                "{\"query\":"
                    + query
                    + ",\"filter\":"
                    + filter
                    + ",\"limit\":5,\"params\":{\"search_list\":64},\"with_stats\":true}",
                "api-key",
                KEY)
            .body();
    List<String> ids = new ArrayList<>();
    expected.get("result").get("points").forEach(p -> ids.add(p.get("id").asString()));
    assertThat(ids).hasSize(5);
    List<String> shown = new ArrayList<>();
    page.eval(
            "[...document.querySelectorAll('#results-table tbody tr td:nth-child(2)')].map(e => e.innerText)")
        .forEach(n -> shown.add(n.asString()));
    assertThat(shown).isEqualTo(ids);
    assertThat(page.text("#results-table"))
        .contains("\"color\":\"blue\"")
        .doesNotContain("\"color\":\"red\"");
    // the cost FlashVec reports for the query
    String stats = page.text("#stats-table");
    long computations = expected.get("flashvec_stats").get("distance_computations").asLong();
    assertThat(computations).isPositive();
    assertThat(stats)
        .contains("Distance computations\t" + String.format(Locale.ROOT, "%,d", computations));
    assertThat(stats)
        .contains("Segments searched")
        .contains("Pages read from disk")
        .contains("Server time");
    assertThat(page.content("#request"))
        .contains("\"with_stats\": true")
        .contains("\"search_list\": 64");
    shot("search", 1180);

    // a hit's id searches near that point (Qdrant leaves the point itself out)
    String id = shown.get(0);
    page.click("#results-table a.point-id");
    page.waitFor(
        "the search by id",
        "document.querySelector('#point-id') && document.querySelector('#point-id').value === "
            + Chromium.quote(id)
            + " && document.querySelector('#results-table')");
    List<String> near = new ArrayList<>();
    page.eval(
            "[...document.querySelectorAll('#results-table tbody tr td:nth-child(2)')].map(e => e.innerText)")
        .forEach(n -> near.add(n.asString()));
    assertThat(near).hasSize(10).doesNotContain(id);

    // bad input: named in the page, from the page itself and from the server
    page.fill("#mode", "vector");
    page.eval("document.querySelector('#mode').dispatchEvent(new Event('change')), true");
    page.fill("#vector", "[1, 2");
    page.click("#run");
    page.waitForElement("#search-out .error");
    assertThat(page.text("#search-out .error")).contains("Vector is not valid JSON");
    page.fill("#vector", "[1, 2]");
    page.click("#run");
    page.waitFor(
        "the server's error",
        "(document.querySelector('#search-out .error') || {}).innerText.includes('400')");
    assertThat(page.text("#search-out .error")).contains("dimension");
  }

  @Test
  @Order(5)
  void metricsChartLiveRates() throws Exception {
    page.show("#metrics");
    page.waitForElement("#chart-qps canvas");
    String rising =
        "(() => { const v = [...document.querySelectorAll('#metrics-now .card')].map(c => c.innerText);"
            + " const n = (k) => parseFloat((v.find(t => t.startsWith(k)) || '').split('\\n')[1]);"
            + " return n('Searches/s') > 0 && n('Search p99') > 0; })()";
    // searches while the page samples: each poll of the page's state sends one more
    Await.until(
        Duration.ofSeconds(30),
        "a search rate and a p99 latency above zero",
        () -> page.text("#metrics-now"),
        () -> {
          Http.Response r =
              api.send(
                  "POST",
                  "/collections/shop/points/query",
                  "{\"query\":" + vector() + ",\"limit\":3}",
                  "api-key",
                  KEY);
          assertThat(r.status()).isEqualTo(200);
          return page.eval("!!" + rising).asBoolean();
        });
    if (shots != null) {
      // a minute of history for the picture
      long until = System.nanoTime() + Duration.ofSeconds(60).toNanos();
      Await.until(
          Duration.ofSeconds(90),
          "a minute of samples",
          () -> {
            api.send(
                "POST",
                "/collections/shop/points/query",
                "{\"query\":" + vector() + ",\"limit\":3}",
                "api-key",
                KEY);
            return System.nanoTime() - until > 0;
          });
      shot("metrics");
    }
    for (String chart :
        List.of(
            "#chart-qps",
            "#chart-latency",
            "#chart-reads",
            "#chart-writes",
            "#chart-indexed",
            "#chart-work")) {
      assertThat(page.count(chart + " canvas")).as(chart).isEqualTo(1);
    }
    assertThat(page.text("#chart-latency")).contains("p50").contains("p95").contains("p99");
    assertThat(page.text("#chart-indexed")).contains("shop").contains("empty");
    assertThat(page.text("#chart-work")).contains("builds running").contains("merges planned");
  }

  @Test
  @Order(6)
  void metricsPercentilesAreThoseOfPrometheus() {
    // histogram_quantile over the difference of two scrapes: 10 observations, 4 in (0, 1],
    // 4 in (1, 2], 2 in (2, 4]: the median is 1.25, the 90th percentile 3
    JsonNode q =
        page.eval(
            "import('/dashboard/prom.js').then(p => {"
                + " const a = new Map([[1, 2], [2, 2], [4, 2], [Infinity, 2]]);"
                + " const b = new Map([[1, 6], [2, 10], [4, 12], [Infinity, 12]]);"
                + " return [p.quantile(0.5, a, b), p.quantile(0.9, a, b), p.quantile(0.5, b, b),"
                + "   p.rate(10, 30, 4), p.rate(10, 3, 1)]; })");
    assertThat(q.get(0).asDouble()).isEqualTo(1.25);
    assertThat(q.get(1).asDouble()).isEqualTo(3.0);
    assertThat(q.get(2).isNull()).isTrue();
    assertThat(q.get(3).asDouble()).isEqualTo(5.0);
    assertThat(q.get(4).asDouble()).isEqualTo(3.0); // a counter reset counts from zero
  }

  @Test
  @Order(7)
  void clusterViewSaysStandalone() throws Exception {
    page.show("#cluster");
    page.waitForElement("#standalone");
    assertThat(page.text("#standalone")).contains("standalone");
  }

  @Test
  @Order(8)
  void theReadOnlyKeyBrowsesAndSearches() {
    page.fill("#api-key", READ_ONLY_KEY);
    page.click("#key-form button");
    page.show("#points/shop");
    page.waitFor(
        "a page of points with the read-only key",
        "document.querySelectorAll('#points-table tbody tr').length === 20");
    page.show("#search/shop/id=1");
    page.waitForElement("#results-table");
    assertThat(page.count("#results-table tbody tr")).isEqualTo(10);
    assertThat(page.count("#view .error")).isZero();
  }
}
