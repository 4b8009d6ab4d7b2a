package io.flashvec.api.system;

import static org.assertj.core.api.Assertions.assertThat;

import io.flashvec.cluster.node.FlashVecNode;
import io.flashvec.index.memory.MemoryPlan;
import java.util.Map;
import org.junit.jupiter.api.Test;

/** {@code /issues} reports the PQ code sizes the memory budget shrank, with what to do about it. */
class MemoryIssuesTest {

  private static FlashVecNode.Resources resources(Map<Integer, Integer> shrunk, long points) {
    MemoryPlan plan = MemoryPlan.of(915L << 20, 2, 0);
    return new FlashVecNode.Resources("auto", 2, 0, 0, 0, plan, 100L << 20, 0, shrunk, points);
  }

  @Test
  void codesKeptAtTheirDefaultAreNoIssue() {
    assertThat(ServiceInfoController.memoryIssues(resources(Map.of(), 1_000))).isEmpty();
  }

  @Test
  void eachShrunkDefaultSizeIsAnIssueNamingBothSizesThePointsAndTheBudget() {
    var issues = ServiceInfoController.memoryIssues(resources(Map.of(48, 24, 32, 8), 10_000_000));
    assertThat(issues)
        .extracting(IssueTracker.Issue::id)
        .containsExactly(
            "pq_codes_shrunk_by_memory_budget/32-to-8",
            "pq_codes_shrunk_by_memory_budget/48-to-24");
    IssueTracker.Issue first = issues.get(0);
    assertThat(first.description())
        .contains("8-byte PQ codes instead of the default 32")
        .contains("10000000 points")
        .contains("resident slice (");
    assertThat(first.solution()).contains("FLASHVEC_MEMORY_BUDGET").contains("pq_subspaces");
    assertThat(first.relatedCollection()).isNull();
    assertThat(issues.get(1).description()).contains("24-byte PQ codes instead of the default 48");
  }
}
