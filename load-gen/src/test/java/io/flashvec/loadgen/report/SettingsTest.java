package io.flashvec.loadgen.report;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

class SettingsTest {

  @Test
  void metadataReadsAsTextWithoutNullsOrRawMaps() {
    Map<String, Object> m = new LinkedHashMap<>();
    m.put("kind", "search");
    m.put("dataset_name", "synthetic-96");
    m.put("n", 100000);
    m.put("dim", 96);
    m.put("queries", 1000);
    m.put("distance", "Euclid");
    m.put("target", "pgvector");
    m.put("url", "jdbc:postgresql://127.0.0.1:5432/postgres");
    m.put("collection", "bench");
    m.put("k", 10);
    Map<String, Object> machine = new LinkedHashMap<>();
    machine.put("cpu_model", "Test CPU");
    machine.put("nproc", 2);
    machine.put("mem_total_mb", 8192);
    machine.put("os", "Linux 6.1");
    machine.put("arch", "amd64");
    machine.put("java", "OpenJDK 64-Bit Server VM 25");
    m.put("machine", machine);
    m.put("duration_s", 10.0);
    m.put("queries_per_point", null);
    m.put("warmup", "until steady");
    m.put("page_cache", "warm (not dropped)");
    m.put("extra", Map.of("a", 1));

    List<Settings.Line> lines = Settings.lines(new BenchmarkResult(m, List.of()));

    assertThat(lines)
        .containsSubsequence(
            new Settings.Line(
                "System", "pgvector, jdbc:postgresql://127.0.0.1:5432/postgres collection bench"),
            new Settings.Line(
                "Dataset",
                "synthetic-96, 100,000 vectors, 96 dimensions, Euclid, 1,000 queries, k=10"),
            new Settings.Line("Machine", "Test CPU, 2 cores, 8.0 GiB memory, Linux 6.1 amd64"),
            new Settings.Line("JVM", "OpenJDK 64-Bit Server VM 25"),
            new Settings.Line(
                "Run", "10 s per point; warm-up until steady; page cache warm (not dropped)"),
            new Settings.Line("Other", "extra.a 1"));
    assertThat(lines.toString()).doesNotContain("null").doesNotContain("{");
  }

  @Test
  void theSystemIsNamedFromTheTargetAndTheServersMetrics() {
    SearchPoint flashvec =
        new SearchPoint(
            null,
            1,
            10,
            Map.of(),
            1,
            0,
            1,
            1,
            1,
            1,
            1,
            1,
            1,
            1,
            1,
            Map.of("flashvec_search_total", 1.0),
            Map.of(),
            Map.of(),
            Map.of(),
            Map.of(),
            null);
    assertThat(Settings.system(new BenchmarkResult(Map.of("target", "rest"), List.of(flashvec))))
        .isEqualTo("FlashVec");
    assertThat(Settings.system(new BenchmarkResult(Map.of("target", "rest"), List.of())))
        .isEqualTo("Qdrant-compatible REST");
    assertThat(Settings.system(new BenchmarkResult(Map.of("target", "pgvector"), List.of())))
        .isEqualTo("pgvector");
    assertThat(Settings.system(new BenchmarkResult(Map.of("system", "Qdrant 1.12"), List.of())))
        .isEqualTo("Qdrant 1.12");
  }
}
