package io.flashvec.cluster.query;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.nio.file.Files;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class EpochsTest {

  @TempDir Path dir;

  @Test
  void raisesOnlyUpwardsAndSurvivesAReopen() {
    Epochs e = new Epochs(dir);
    assertThat(e.get("docs.s0")).isZero();
    assertThat(e.raise("docs.s0", 7)).isEqualTo(7);
    assertThat(e.raise("docs.s0", 5)).isEqualTo(7);
    assertThat(e.raise("docs.s1", 9)).isEqualTo(9);

    Epochs again = new Epochs(dir);
    assertThat(again.get("docs.s0")).isEqualTo(7);
    assertThat(again.get("docs.s1")).isEqualTo(9);
    again.remove("docs.s0");
    assertThat(new Epochs(dir).get("docs.s0")).isZero();
  }

  @Test
  void anUnfinishedRaiseLeavesTheOldEpoch() throws Exception {
    Epochs e = new Epochs(dir);
    e.raise("docs.s0", 3);
    Files.writeString(dir.resolve("docs.s0.tmp"), "99"); // crashed before the rename
    Epochs again = new Epochs(dir);
    assertThat(again.get("docs.s0")).isEqualTo(3);
    assertThat(dir.resolve("docs.s0.tmp")).doesNotExist();
  }

  @Test
  void anUnreadableFileIsAnErrorNamingIt() throws Exception {
    Files.writeString(dir.resolve("docs.s0"), "seven");
    assertThatThrownBy(() -> new Epochs(dir))
        .hasMessageContaining("docs.s0")
        .hasMessageContaining("seven");
  }
}
