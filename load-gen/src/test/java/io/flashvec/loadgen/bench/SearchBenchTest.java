package io.flashvec.loadgen.bench;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.LinkedHashMap;
import java.util.Map;
import org.junit.jupiter.api.Test;

/** The console line of a point's device figures. */
class SearchBenchTest {
  @Test
  void theDeviceLineShowsTheDeviceBesideTheServerAndTheirRatio() {
    Map<String, Double> d = new LinkedHashMap<>();
    d.put("reads_per_s", 20_000.0);
    d.put("read_mb_per_s", 81.92);
    d.put("avg_read_kib", 4.0);
    d.put("busy", 0.75);
    d.put("pages_per_query", 40.0);
    d.put("read_bytes_per_query", 163_840.0);
    d.put("server_pages_per_query", 36.0);
    d.put("server_bytes_per_query", 147_456.0);
    d.put("device_to_server_pages", 40.0 / 36);
    d.put("device_to_server_bytes", 163_840.0 / 147_456);

    assertThat(SearchBench.deviceLine("nvme0n1", d))
        .isEqualTo(
            "  device nvme0n1: reads/s=20000 MB/s=81.9 busy=75% avg read=4.0KiB | pages/query"
                + " device=40.0 server=36.0 (x1.11) | bytes/query device=163840 server=147456"
                + " (x1.11)");
  }

  @Test
  void withAFioReferenceTheLineGivesTheShareOfTheDisksIops() {
    Map<String, Double> d = new LinkedHashMap<>();
    d.put("reads_per_s", 20_000.0);
    d.put("read_mb_per_s", 81.92);
    d.put("reads_of_reference_iops", 0.25);

    assertThat(SearchBench.deviceLine("vda", d))
        .startsWith("  device vda: reads/s=20000 (25.0% of fio QD32) MB/s=81.9 ");
  }

  @Test
  void withTheServerProcessTheLineEndsWithItsOwnReads() {
    Map<String, Double> d = new LinkedHashMap<>();
    d.put("reads_per_s", 20_000.0);
    d.put("process_read_mb_per_s", 70.5);
    d.put("process_pages_per_query", 37.0);
    d.put("process_to_server_bytes", 1.03);

    assertThat(SearchBench.deviceLine("vda", d))
        .endsWith(" | server process: MB/s=70.5 pages/query=37.0 (x1.03 of its own count)");
  }

  @Test
  void withoutTheServersCountsTheLineSaysNotApplicable() {
    Map<String, Double> d =
        Map.of(
            "reads_per_s", 10.0,
            "read_mb_per_s", 0.04,
            "busy", 0.01,
            "avg_read_kib", 4.0,
            "pages_per_query", 1.0,
            "read_bytes_per_query", 4096.0);

    assertThat(SearchBench.deviceLine("vda", d))
        .endsWith(
            "| pages/query device=1.0 server=n/a (xn/a) | bytes/query device=4096 server=n/a"
                + " (xn/a)");
  }
}
