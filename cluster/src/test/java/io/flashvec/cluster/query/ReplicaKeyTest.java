package io.flashvec.cluster.query;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import org.junit.jupiter.api.Test;

/** A replica's directory name, which query nodes' data directories already hold. */
class ReplicaKeyTest {

  @Test
  void replicasAreNamedInjectively() {
    assertThat(new ReplicaKey("docs", 3).dirName()).isEqualTo("docs.s3");
    assertThat(new ReplicaKey("docs.s1", 0).dirName())
        .isNotEqualTo(new ReplicaKey("docs", 1).dirName());
  }

  @Test
  void aDirectoryNameGivesItsReplicaBack() {
    for (ReplicaKey k :
        new ReplicaKey[] {
          new ReplicaKey("docs", 3), new ReplicaKey("docs.s1", 0), new ReplicaKey("a.s", 12)
        }) {
      assertThat(ReplicaKey.parse(k.dirName())).isEqualTo(k);
    }
    assertThatThrownBy(() -> ReplicaKey.parse("docs")).isInstanceOf(IllegalArgumentException.class);
    assertThatThrownBy(() -> ReplicaKey.parse("docs.sx"))
        .isInstanceOf(IllegalArgumentException.class);
  }
}
