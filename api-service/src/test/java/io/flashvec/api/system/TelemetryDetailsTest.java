package io.flashvec.api.system;

import static org.assertj.core.api.Assertions.assertThat;

import io.flashvec.cluster.node.FlashVecNode;
import io.flashvec.index.memory.MemoryPlan;
import java.nio.file.Files;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import tools.jackson.databind.JsonNode;

class TelemetryDetailsTest {

  @TempDir Path tmp;

  private static FlashVecNode.Resources resources(MemoryPlan plan, long resident, long minFree) {
    return new FlashVecNode.Resources(
        "auto", 32, 0, 0, 0, plan, resident, minFree, java.util.Map.of(), 0);
  }

  @Test
  void procStatusGivesTheKilobyteFiguresInBytes() throws Exception {
    Path status = tmp.resolve("status");
    Files.writeString(status, "Name:\tjava\nVmSize:\t  2048 kB\nVmRSS:\t    12 kB\nThreads:\t40\n");
    assertThat(TelemetryDetails.procStatus(status))
        .containsEntry("VmSize", 2048L * 1024)
        .containsEntry("VmRSS", 12L * 1024)
        .doesNotContainKey("Threads");
    assertThat(TelemetryDetails.procStatus(tmp.resolve("missing"))).isEmpty();
  }

  @Test
  void aQuotaWithoutLimitsIsDisabledAndNeverExceeded() {
    JsonNode q = TelemetryDetails.quota(resources(null, 0, 0), tmp);
    assertThat(q.at("/config/enabled").asBoolean()).isFalse();
    assertThat(q.at("/exceeded/disk_usage").isNull()).as("not enforced: null, not false").isTrue();
    assertThat(q.at("/exceeded/resident_memory").isNull()).isTrue();
  }

  @Test
  void theResidentIndexOverItsSliceIsReportedExceeded() {
    MemoryPlan plan = new MemoryPlan(1000, 100, 500, 200, 100, 100, 50, 50, 350);
    JsonNode over = TelemetryDetails.quota(resources(plan, 201, 1), tmp);
    assertThat(over.at("/config/enabled").asBoolean()).isTrue();
    assertThat(over.at("/config/resident_index_limit_bytes").asLong()).isEqualTo(200);
    assertThat(over.at("/exceeded/resident_memory").asBoolean()).isTrue();
    assertThat(over.at("/exceeded/disk_usage").asBoolean())
        .as("a byte of reserve is free on any disk the test runs on")
        .isFalse();
    assertThat(
            TelemetryDetails.quota(resources(plan, 200, 1), tmp)
                .at("/exceeded/resident_memory")
                .asBoolean())
        .isFalse();
    assertThat(
            TelemetryDetails.quota(resources(plan, 0, Long.MAX_VALUE), tmp)
                .at("/exceeded/disk_usage")
                .asBoolean())
        .as("no disk has that much free")
        .isTrue();
  }
}
