package io.flashvec.loadgen.cli;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.within;

import io.flashvec.loadgen.LoadGen;
import io.flashvec.loadgen.internal.Json;
import io.flashvec.loadgen.metrics.BlockDevice;
import io.flashvec.loadgen.report.BenchmarkResult;
import io.flashvec.loadgen.report.SearchPoint;
import java.io.PrintWriter;
import java.io.StringWriter;
import java.nio.file.Files;
import java.nio.file.Path;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import picocli.CommandLine;
import tools.jackson.databind.JsonNode;

/** generate → ingest → search → report → mixed against a fake server on 127.0.0.1. */
class LoadGenEndToEndTest {
  @TempDir Path dir;
  FakeQdrantServer server;
  StringWriter out;
  StringWriter err;

  @BeforeEach
  void start() throws Exception {
    server = new FakeQdrantServer();
  }

  @AfterEach
  void stop() {
    server.close();
  }

  int run(String... args) {
    out = new StringWriter();
    err = new StringWriter();
    CommandLine cl = LoadGen.commandLine();
    cl.setOut(new PrintWriter(out, true));
    cl.setErr(new PrintWriter(err, true));
    int rc = cl.execute(args);
    System.out.println("$ loadgen " + String.join(" ", args) + "\n" + out + err);
    return rc;
  }

  @Test
  void everyCommandHasHelp() {
    for (String cmd :
        new String[] {"generate", "groundtruth", "ingest", "search", "mixed", "soak", "report"}) {
      assertThat(run(cmd, "--help")).isZero();
      assertThat(out.toString()).contains("Usage: loadgen " + cmd).contains("--help");
    }
    assertThat(run("--help")).isZero();
    assertThat(out.toString()).contains("generate").contains("ingest").contains("mixed");
  }

  @Test
  void generateIngestSearchReportAndMixedEndToEnd() throws Exception {
    Path data = dir.resolve("data");
    System.out.println("generate seed=3");
    assertThat(
            run(
                "generate",
                "--out",
                data.toString(),
                "--n",
                "600",
                "--dim",
                "16",
                "--queries",
                "20",
                "--clusters",
                "10",
                "--latent-dim",
                "4",
                "--normalize",
                "--seed",
                "3",
                "--threads",
                "2"))
        .isZero();
    assertThat(data.resolve("base.fvecs")).exists();
    assertThat(data.resolve("groundtruth.ivecs")).exists();
    assertThat(Files.readString(data.resolve("manifest.json"))).contains("\"metric\" : \"cosine\"");

    String url = server.url();
    server.failUpserts.set(2); // two 503s: retried with back-off, no batch lost
    Path ingestJson = dir.resolve("ingest.json");
    assertThat(
            run(
                "ingest",
                "--url",
                url,
                "--collection",
                "bench",
                "--dataset",
                data.toString(),
                "--index",
                "flat",
                "--batch",
                "64",
                "--clients",
                "3",
                "--index-timeout",
                "10s",
                "--out",
                ingestJson.toString()))
        .isZero();
    assertThat(server.collections.get("bench").points).hasSize(600);
    assertThat(server.createBodies.get(0))
        .isEqualTo(
            "{\"vectors\":{\"size\":16,\"distance\":\"Cosine\"},\"index\":{\"type\":\"flat\"}}");
    JsonNode ingest = Json.MAPPER.readTree(ingestJson.toFile());
    assertThat(ingest.path("uploaded").asLong()).isEqualTo(600);
    assertThat(ingest.path("failed_batches").asLong()).isZero();
    assertThat(ingest.path("vectors_per_second").asDouble()).isPositive();
    assertThat(ingest.path("indexed_seconds").asDouble())
        .isGreaterThanOrEqualTo(ingest.path("searchable_seconds").asDouble());
    assertThat(ingest.path("final_status").asString()).isEqualTo("green");
    assertThat(ingest.path("raw_vector_bytes").asLong()).isEqualTo(600L * 16 * 4);
    assertThat(ingest.path("write_amplification").asDouble()).isEqualTo(2.0);

    server.searchBodies.clear(); // drop ingest's probe searches
    Path result = dir.resolve("result.json");
    Path html = dir.resolve("report.html");
    assertThat(
            run(
                "search",
                "--url",
                url,
                "--collection",
                "bench",
                "--dataset",
                data.toString(),
                "--concurrency",
                "1,2",
                "--queries",
                "40",
                "--warmup",
                "0s",
                "--k",
                "10",
                "--search-list",
                "10,20",
                "--beam-width",
                "4",
                "--out",
                result.toString(),
                "--html",
                html.toString()))
        .isZero();
    assertThat(server.searchBodies.get(0))
        .contains("\"limit\":10")
        .contains("\"params\":{\"search_list\":10,\"hnsw_ef\":10,\"beam_width\":4}");

    JsonNode root = Json.MAPPER.readTree(result.toFile());
    assertThat(root.path("n").asInt()).isEqualTo(600);
    assertThat(root.path("dim").asInt()).isEqualTo(16);
    assertThat(root.path("url").asString()).isEqualTo(url);
    assertThat(root.path("collection").asString()).isEqualTo("bench");
    assertThat(root.path("machine").path("nproc").asInt()).isPositive();
    assertThat(root.path("date").asString()).isNotEmpty();
    assertThat(root.path("points")).hasSize(4);
    JsonNode p0 = root.path("points").get(0);
    for (String f :
        new String[] {
          "concurrency",
          "qps",
          "p50_ms",
          "p95_ms",
          "p99_ms",
          "max_ms",
          "recall_at_k",
          "k",
          "errors",
          "params",
          "server"
        }) {
      assertThat(p0.has(f)).as(f).isTrue();
    }

    BenchmarkResult r = BenchmarkResult.read(result);
    for (SearchPoint p : r.points()) {
      assertThat(p.queries()).isEqualTo(40);
      assertThat(p.errors()).isZero();
      assertThat(p.recallAtK()).isEqualTo(1.0);
      assertThat(p.qps()).isPositive();
      assertThat(p.p50Ms()).isPositive().isLessThanOrEqualTo(p.p95Ms());
      assertThat(p.p95Ms()).isLessThanOrEqualTo(p.p99Ms());
      assertThat(p.p99Ms()).isLessThanOrEqualTo(p.maxMs() + 1e-9);
      assertThat(p.io().get("bytes_read_per_query"))
          .isCloseTo(FakeQdrantServer.PAGES_PER_SEARCH * 4096.0, within(1e-9));
      assertThat(p.io().get("pages_read_per_query"))
          .isCloseTo(FakeQdrantServer.PAGES_PER_SEARCH, within(1e-9));
      assertThat(p.server()).containsEntry("flashvec_io_pages_read_total{shard=\"0\"}", 120.0);
      assertThat(p.serverGauges()).containsEntry("process_cpu_usage", 0.5);
    }
    assertThat(r.points().get(1).concurrency()).isEqualTo(2);
    assertThat(r.points().get(2).params())
        .containsEntry("search_list", 20)
        .containsEntry("beam_width", 4);
    assertThat(Files.readString(html)).contains("<svg").contains("Recall vs QPS");

    // metrics summed over several nodes: the same fake twice = two nodes doing the same work
    Path summed = dir.resolve("summed.json");
    assertThat(
            run(
                "search",
                "--url",
                url,
                "--collection",
                "bench",
                "--dataset",
                data.toString(),
                "--queries",
                "40",
                "--warmup",
                "0s",
                "--metrics-url",
                "query-1=" + url,
                "--metrics-url",
                "query-2=" + url + "/metrics",
                "--out",
                summed.toString()))
        .isZero();
    SearchPoint s = BenchmarkResult.read(summed).points().get(0);
    assertThat(s.io().get("pages_read_per_query"))
        .isCloseTo(2.0 * FakeQdrantServer.PAGES_PER_SEARCH, within(1e-9));
    assertThat(s.server()).containsEntry("flashvec_io_pages_read_total{shard=\"0\"}", 240.0);
    assertThat(s.serverGauges()).containsEntry("process_cpu_usage", 1.0);
    assertThat(s.nodes()).containsOnlyKeys("query-1", "query-2");
    for (var node : s.nodes().values()) {
      assertThat(node.get("pages_read_per_query"))
          .isCloseTo(FakeQdrantServer.PAGES_PER_SEARCH, within(1e-9));
    }
    JsonNode summedRoot = Json.MAPPER.readTree(summed.toFile());
    assertThat(summedRoot.at("/metrics_nodes/query-2").asString()).isEqualTo(url + "/metrics");
    assertThat(summedRoot.at("/points/0/nodes/query-1/pages_read_per_query").asDouble())
        .isEqualTo(FakeQdrantServer.PAGES_PER_SEARCH);
    assertThat(root.path("points").get(0).has("nodes")).isFalse();

    // a search from a cold cache every time: one eviction before each measured query
    Path cold = dir.resolve("cold.json");
    server.evictions.set(0);
    assertThat(
            run(
                "search",
                "--url",
                url,
                "--collection",
                "bench",
                "--dataset",
                data.toString(),
                "--queries",
                "25",
                "--warmup",
                "0s",
                "--evict-each-query",
                "--out",
                cold.toString()))
        .isZero();
    assertThat(server.evictions.get()).isEqualTo(25);
    assertThat(Json.MAPPER.readTree(cold.toFile()).path("page_cache").asString())
        .contains("before each query");

    // a second result (duration mode) overlaid by `report`
    Path result2 = dir.resolve("result2.json");
    assertThat(
            run(
                "search",
                "--url",
                url,
                "--collection",
                "bench",
                "--dataset",
                data.toString(),
                "--concurrency",
                "2",
                "--duration",
                "300ms",
                "--warmup",
                "0s",
                "--out",
                result2.toString()))
        .isZero();
    SearchPoint timed = BenchmarkResult.read(result2).points().get(0);
    assertThat(timed.queries()).isPositive();
    assertThat(timed.seconds()).isGreaterThanOrEqualTo(0.3);
    Path merged = dir.resolve("merged.html");
    assertThat(run("report", result.toString(), result2.toString(), "--html", merged.toString()))
        .isZero();
    assertThat(Files.readString(merged))
        .contains("result.json")
        .contains("result2.json")
        .contains("<svg");
    // a point bounded by time still measures recall over every query of the set
    long querySet = Json.MAPPER.readTree(result2.toFile()).path("queries").asLong();
    assertThat(timed.quality().recallQueries()).isEqualTo(querySet);
    // named results and an ingest result in one page
    Path named = dir.resolve("named.html");
    assertThat(
            run(
                "report",
                "fake server=" + result,
                ingestJson.toString(),
                "--html",
                named.toString()))
        .isZero();
    assertThat(Files.readString(named))
        .contains("fake server")
        .contains("Ingest throughput over time")
        .contains("Machine and settings")
        .doesNotContain("queries_per_point");
    assertThat(run("report", dir.resolve("absent.json").toString(), "--html", named.toString()))
        .isEqualTo(2);
    assertThat(err.toString()).contains("no such result file");

    // mixed: queries alone, then with an insert stream (ids from 600 up)
    Path mixed = dir.resolve("mixed.json");
    assertThat(
            run(
                "mixed",
                "--url",
                url,
                "--collection",
                "bench",
                "--dataset",
                data.toString(),
                "--concurrency",
                "2",
                "--duration",
                "400ms",
                "--warmup",
                "0s",
                "--insert-rate",
                "500",
                "--insert-batch",
                "20",
                "--out",
                mixed.toString()))
        .isZero();
    JsonNode m = Json.MAPPER.readTree(mixed.toFile());
    assertThat(m.path("queries_only").path("qps").asDouble()).isPositive();
    assertThat(m.path("with_inserts").path("qps").asDouble()).isPositive();
    assertThat(m.path("ratios").path("qps").asDouble()).isPositive();
    assertThat(m.path("ratios").has("p99")).isTrue();
    assertThat(m.path("inserts").path("vectors").asLong()).isPositive();
    assertThat(m.path("inserts").path("errors").asLong()).isZero();
    // copies of base rows map back to their row: exact search keeps recall at 1
    assertThat(m.path("with_inserts").path("recall_at_k").asDouble()).isEqualTo(1.0);
    // the inserted points were deleted again after the run
    assertThat(m.path("inserts").path("deleted_after_run").asLong())
        .isEqualTo(m.path("inserts").path("vectors").asLong());
    assertThat(server.deletes.get()).isEqualTo(m.path("inserts").path("vectors").asLong());
    assertThat(server.collections.get("bench").points).hasSize(600);
    assertThat(m.path("points")).hasSize(2);
  }

  @Test
  void searchWithDeviceCountersReportsThemPerPointOrSaysWhyNot() throws Exception {
    Path data = dir.resolve("d");
    assertThat(
            run(
                "generate",
                "--out",
                data.toString(),
                "--n",
                "200",
                "--dim",
                "8",
                "--queries",
                "10",
                "--clusters",
                "3",
                "--latent-dim",
                "2",
                "--seed",
                "11"))
        .isZero();
    assertThat(
            run(
                "ingest",
                "--url",
                server.url(),
                "--collection",
                "dev",
                "--dataset",
                data.toString(),
                "--index",
                "flat",
                "--out",
                dir.resolve("i.json").toString()))
        .isZero();

    // a device that does not exist: said once, the run carries on, no device figures at all
    Path none = dir.resolve("none.json");
    assertThat(
            run(
                "search",
                "--url",
                server.url(),
                "--collection",
                "dev",
                "--dataset",
                data.toString(),
                "--concurrency",
                "1,2",
                "--queries",
                "20",
                "--warmup",
                "0s",
                "--device",
                "nosuchdisk0",
                "--out",
                none.toString()))
        .isZero();
    assertThat(out.toString())
        .containsOnlyOnce("device counters: none, carrying on without them: no such block device")
        .doesNotContain("  device ");
    BenchmarkResult r = BenchmarkResult.read(none);
    assertThat(r.metadata()).doesNotContainKey("device");
    assertThat(r.points()).allSatisfy(p -> assertThat(p.device()).isEmpty());
    assertThat(Files.readString(none)).doesNotContain("reads_per_s");

    // the disk holding the temporary directory, where this machine's sysfs names one
    BlockDevice.Lookup here = BlockDevice.find("auto", dir, BlockDevice.SYS);
    Assumptions.assumeTrue(
        here.device() != null, "no block device for the temporary directory: " + here.reason());
    Path with = dir.resolve("with.json");
    Path fio =
        Files.writeString(
            dir.resolve("fio.json"),
            "{\"device\": \"" + here.device().name() + "\", \"qd32\": {\"iops\": 50000.0}}");
    Path html = dir.resolve("with.html");
    assertThat(
            run(
                "search",
                "--url",
                server.url(),
                "--collection",
                "dev",
                "--dataset",
                data.toString(),
                "--concurrency",
                "1,2",
                "--queries",
                "20",
                "--warmup",
                "0s",
                "--device",
                "auto",
                "--device-path",
                dir.toString(),
                "--fio",
                fio.toString(),
                "--server-pid",
                Long.toString(ProcessHandle.current().pid()),
                "--out",
                with.toString(),
                "--html",
                html.toString()))
        .isZero();
    String name = here.device().name();
    assertThat(out.toString())
        .contains("device counters: " + name + " (")
        .contains("include every process")
        .contains("  device " + name + ": reads/s=")
        .contains("% of fio QD32)")
        .contains(" | server process: MB/s=");
    BenchmarkResult w = BenchmarkResult.read(with);
    assertThat(w.metadata().get("device").toString()).contains("name=" + name);
    assertThat(w.metadata().get("fio").toString()).contains("iops=50000.0");
    assertThat(w.points())
        .hasSize(2)
        .allSatisfy(
            p ->
                assertThat(p.device())
                    .containsKeys(
                        "reads",
                        "reads_per_s",
                        "read_mb_per_s",
                        "busy",
                        "pages_per_query",
                        "reads_of_reference_iops",
                        "process_read_mb_per_s",
                        "process_pages_per_query")
                    .allSatisfy((k, v) -> assertThat(v).isNotNegative()));
    assertThat(Files.readString(html)).contains("QPS and device read bandwidth vs concurrency");
  }

  @Test
  void searchAgainstAMissingCollectionCountsErrorsAndFails() throws Exception {
    Path data = dir.resolve("d");
    assertThat(
            run(
                "generate",
                "--out",
                data.toString(),
                "--n",
                "50",
                "--dim",
                "4",
                "--queries",
                "5",
                "--clusters",
                "3",
                "--latent-dim",
                "2",
                "--seed",
                "9"))
        .isZero();
    Path result = dir.resolve("r.json");
    assertThat(
            run(
                "search",
                "--url",
                server.url(),
                "--collection",
                "absent",
                "--dataset",
                data.toString(),
                "--queries",
                "5",
                "--warmup",
                "0s",
                "--out",
                result.toString()))
        .isEqualTo(1);
    SearchPoint p = BenchmarkResult.read(result).points().get(0);
    assertThat(p.errors()).isEqualTo(5);
    assertThat(p.queries()).isZero();
    assertThat(out.toString()).contains("status=404");

    // a warm-up cap below the warm-up's least time is refused, not quietly raised
    assertThat(
            run(
                "search",
                "--url",
                server.url(),
                "--collection",
                "absent",
                "--dataset",
                data.toString(),
                "--warmup",
                "5s",
                "--warmup-max",
                "2s",
                "--out",
                result.toString()))
        .isEqualTo(2);
    assertThat(err.toString()).contains("warm-up cap is below its minimum [min=PT5S, max=PT2S]");
  }

  @Test
  void ingestPassesIndexParamsThroughAndRecreates() throws Exception {
    Path data = dir.resolve("d");
    assertThat(
            run(
                "generate",
                "--out",
                data.toString(),
                "--n",
                "30",
                "--dim",
                "3",
                "--queries",
                "2",
                "--clusters",
                "2",
                "--latent-dim",
                "2",
                "--seed",
                "4",
                "--distance",
                "Euclid"))
        .isZero();
    String[] ingest = {
      "ingest",
      "--url",
      server.url(),
      "--collection",
      "c2",
      "--dataset",
      data.toString(),
      "--index",
      "diskann",
      "--index-param",
      "max_degree=64",
      "--index-param",
      "alpha=1.2",
      "--index-param",
      "note=x",
      "--recreate",
      "--index-timeout",
      "0s",
      "--no-progress"
    };
    assertThat(run(ingest)).isZero();
    assertThat(run(ingest)).isZero();
    assertThat(server.createBodies)
        .hasSize(2)
        .allMatch(
            b ->
                b.equals(
                    "{\"vectors\":{\"size\":3,\"distance\":\"Euclid\"},\"index\":{\"type\":\"diskann\","
                        + "\"max_degree\":64,\"alpha\":1.2,\"note\":\"x\"}}"));
    assertThat(out.toString()).contains("created").doesNotContain("fully indexed");
  }

  @Test
  void ingestOfRowsUploadsThatPartWithRowNumbersAsIds() throws Exception {
    Path data = dir.resolve("rows");
    assertThat(
            run(
                "generate",
                "--out",
                data.toString(),
                "--n",
                "40",
                "--dim",
                "3",
                "--queries",
                "2",
                "--clusters",
                "2",
                "--latent-dim",
                "2",
                "--seed",
                "5"))
        .isZero();
    String[] common = {
      "ingest",
      "--url",
      server.url(),
      "--collection",
      "parts",
      "--dataset",
      data.toString(),
      "--batch",
      "7",
      "--index-timeout",
      "0s",
      "--no-progress",
      "--rows"
    };
    assertThat(run(concat(common, "10:40"))).isZero();
    assertThat(server.collections.get("parts").points.keySet())
        .containsExactlyInAnyOrderElementsOf(
            java.util.stream.LongStream.range(10, 40).boxed().toList());
    assertThat(run(concat(common, "0:10"))).isZero();
    assertThat(server.collections.get("parts").points).hasSize(40);
    assertThat(run(concat(common, "30:50"))).isEqualTo(2);
    assertThat(err.toString()).contains("--rows must be FROM:TO within 0:40 [rows=30:50]");
  }

  private static String[] concat(String[] a, String... b) {
    String[] out = java.util.Arrays.copyOf(a, a.length + b.length);
    System.arraycopy(b, 0, out, a.length, b.length);
    return out;
  }

  @Test
  void soakRunsEveryStreamAndWritesProgressAndSummary() throws Exception {
    Path progress = dir.resolve("soak.csv");
    Path summary = dir.resolve("soak.json");
    System.out.println("soak seed=7");
    assertThat(
            run(
                "soak",
                "--url",
                server.url(),
                "--collection",
                "s",
                "--dim",
                "8",
                "--key-space",
                "300",
                "--duration",
                "2s",
                "--upsert-rate",
                "200",
                "--delete-rate",
                "50",
                "--batch",
                "10",
                "--search-rate",
                "20",
                "--compact-every",
                "500ms",
                "--seed",
                "7",
                "--progress",
                progress.toString(),
                "--progress-every",
                "500ms",
                "--out",
                summary.toString()))
        .isZero();
    var lines = Files.readAllLines(progress);
    assertThat(lines.get(0)).startsWith("elapsed_s,upserted_points,deleted_points,searches");
    assertThat(lines).hasSizeGreaterThanOrEqualTo(4);
    JsonNode json = Json.MAPPER.readTree(summary.toFile());
    assertThat(json.path("kind").asString()).isEqualTo("soak");
    assertThat(json.path("errors").asLong()).isZero();
    assertThat(json.path("upserts").path("operations").asLong()).isGreaterThan(10);
    assertThat(json.path("deletes").path("operations").asLong()).isGreaterThan(2);
    assertThat(json.path("searches").path("operations").asLong()).isGreaterThan(10);
    assertThat(json.path("compactions").path("operations").asLong()).isGreaterThanOrEqualTo(2);
    assertThat(server.compactions.get()).isGreaterThanOrEqualTo(2);
    // ids stay in the key space, and the fill wrote all of it
    assertThat(server.collections.get("s").points.keySet()).allMatch(id -> id >= 0 && id < 300);
    assertThat(server.upserts.get()).isGreaterThan(1);
  }

  @Test
  void soakCountsFailedOperationsAndExitsWithOne() throws Exception {
    System.out.println("soak seed=8");
    server.failUpserts.set(1_000_000);
    // the fill fails at once: an error with exit status 2, as for any command
    assertThat(
            run(
                "soak",
                "--url",
                server.url(),
                "--collection",
                "f",
                "--dim",
                "4",
                "--key-space",
                "10",
                "--duration",
                "1s",
                "--seed",
                "8"))
        .isEqualTo(2);
    assertThat(err.toString()).contains("upsert failed").contains("503");
    server.failUpserts.set(0);
    assertThat(
            run(
                "soak",
                "--url",
                server.url(),
                "--collection",
                "f",
                "--dim",
                "4",
                "--key-space",
                "10",
                "--duration",
                "1s",
                "--batch",
                "5",
                "--upsert-rate",
                "50",
                "--delete-rate",
                "0",
                "--search-rate",
                "0",
                "--compact-every",
                "0",
                "--seed",
                "8"))
        .isZero();
    server.failSearches.set(3);
    assertThat(
            run(
                "soak",
                "--url",
                server.url(),
                "--collection",
                "f",
                "--dim",
                "4",
                "--key-space",
                "10",
                "--duration",
                "1s",
                "--batch",
                "5",
                "--upsert-rate",
                "0",
                "--delete-rate",
                "0",
                "--search-rate",
                "20",
                "--compact-every",
                "0",
                "--seed",
                "8"))
        .isEqualTo(1);
    assertThat(out.toString())
        .contains("soak: error 1 ")
        .contains("soak: error 3 ")
        .doesNotContain("soak: error 4 ")
        .containsPattern("\"errors\" ?: ?3");
  }

  @Test
  void badOptionsGiveUsageErrors() {
    assertThat(run("search", "--url", "http://127.0.0.1:1")).isEqualTo(2);
    assertThat(err.toString()).contains("Missing required options");
    assertThat(
            run(
                "generate",
                "--out",
                dir.toString(),
                "--n",
                "10",
                "--dim",
                "2",
                "--distance",
                "hamming"))
        .isEqualTo(2);
    assertThat(err.toString()).contains("unknown distance [distance=hamming");
  }

  @Test
  void groundTruthForAQuerySampleLimitsTheQueriesAndABadSampleIsRefused() throws Exception {
    Path syn = dir.resolve("sample");
    String[] gen = {
      "generate",
      "--out",
      syn.toString(),
      "--n",
      "500",
      "--dim",
      "8",
      "--queries",
      "30",
      "--clusters",
      "5",
      "--seed",
      "4",
      "--gt-k",
      "10"
    };
    assertThat(run(gen)).isZero();
    assertThat(run(concat(gen, "--gt-queries", "31"))).isEqualTo(2);
    assertThat(err.toString())
        .contains("--gt-queries must be between 1 and --queries [gt-queries=31, queries=30]");
    assertThat(run(concat(gen, "--gt-queries", "12"))).isZero();
    assertThat(out.toString()).contains("queries=12");
    assertThat(run("groundtruth", "--dataset", syn.toString())).isZero();
    assertThat(out.toString()).contains("queries=12, depth=10");

    // a new base without ground truth leaves no ground truth or sample of the old one behind
    assertThat(
            run(
                "generate",
                "--out",
                syn.toString(),
                "--n",
                "400",
                "--dim",
                "8",
                "--seed",
                "5",
                "--no-groundtruth"))
        .isZero();
    assertThat(syn.resolve("groundtruth.ivecs")).doesNotExist();
    assertThat(Files.readString(syn.resolve("manifest.json")))
        .doesNotContain("gt_queries")
        .containsPattern("\"n\" ?: ?400");
  }
}
