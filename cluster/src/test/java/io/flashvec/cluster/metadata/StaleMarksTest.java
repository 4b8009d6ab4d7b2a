package io.flashvec.cluster.metadata;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.Map;
import org.junit.jupiter.api.Test;

class StaleMarksTest {

  @Test
  void aDeletionOlderThanTheMarkDoesNotRemoveIt() {
    StaleMarks m = new StaleMarks();
    // the proxy learns the mark of revision 12 from a write reply, then the watch delivers the
    // clearing of an earlier mark (revision 10) and only then the new mark
    m.put("c/0/q1", 12);
    m.delete("c/0/q1", 10);
    assertThat(m.contains("c/0/q1")).isTrue();
    m.put("c/0/q1", 12);
    assertThat(m.revision("c/0/q1")).isEqualTo(12);
    m.delete("c/0/q1", 13);
    assertThat(m.contains("c/0/q1")).isFalse();
    assertThat(m.revision("c/0/q1")).isZero();
  }

  @Test
  void aMarkReportedAfterItsClearingIsNotBroughtBack() {
    StaleMarks m = new StaleMarks();
    // a write reply listing the mark of revision 10 reaches the proxy after the watch delivered
    // the mark's clearing at revision 15
    m.put("c/0/q1", 10);
    m.delete("c/0/q1", 15);
    m.put("c/0/q1", 10);
    assertThat(m.contains("c/0/q1")).isFalse();
    m.put("c/0/q1", 16); // marked again later
    assertThat(m.contains("c/0/q1")).isTrue();
  }

  @Test
  void anOlderPutDoesNotLowerTheRevision() {
    StaleMarks m = new StaleMarks();
    m.put("c/1/q2", 20);
    m.put("c/1/q2", 15);
    assertThat(m.revision("c/1/q2")).isEqualTo(20);
    m.delete("c/1/q2", 18);
    assertThat(m.contains("c/1/q2")).isTrue();
  }

  @Test
  void aSnapshotKeepsMarksLearntAfterItAndOnlyReplacesItsPrefix() {
    StaleMarks m = new StaleMarks();
    m.put("c/0/q1", 5); // cleared in etcd before the snapshot
    m.put("c/0/q2", 40); // learnt from a reply after the snapshot's revision
    m.put("c/1/q3", 6); // another shard: outside the prefix
    m.replace("c/0/", Map.of("c/0/q4", 25L), 30);
    assertThat(m.contains("c/0/q1")).isFalse();
    assertThat(m.contains("c/0/q2")).isTrue();
    assertThat(m.revision("c/0/q4")).isEqualTo(25);
    assertThat(m.contains("c/1/q3")).isTrue();
    m.replace("", Map.of(), 50);
    assertThat(m.contains("c/0/q2")).isFalse();
    assertThat(m.contains("c/1/q3")).isFalse();
  }
}
