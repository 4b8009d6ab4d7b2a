package io.flashvec.cluster.node;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.flashvec.storage.CrashPoint;
import io.flashvec.storage.FileIO;
import io.flashvec.storage.HaltingFileIO;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;

/**
 * The engine's file system (the real one, or one that halts at a named crash point) and the build
 * memory its segment builds get.
 */
class EngineTest {

  private static FileIO io(String point, int hit) {
    EngineSettings s = EngineSettings.builder(Path.of("unused")).crashPoint(point, hit).build();
    return Engine.fileIo(s.crashPoint, s.crashPointHit);
  }

  @Test
  void blankMeansTheRealFileSystem() {
    assertThat(io("", 1)).isSameAs(FileIO.DEFAULT);
    assertThat(io(null, 1)).isSameAs(FileIO.DEFAULT);
  }

  @Test
  void aNamedPointHaltsAtItsHit() {
    FileIO io = io("seal-frozen", 3);
    assertThat(io).isInstanceOf(HaltingFileIO.class);
    assertThat(((HaltingFileIO) io).point()).isEqualTo(CrashPoint.SEAL_FROZEN);
    assertThat(((HaltingFileIO) io).hit()).isEqualTo(3);
  }

  @Test
  void anUnknownPointOrHitIsRefused() {
    assertThatThrownBy(() -> io("seal-frozn", 1))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageStartingWith("unknown crash point [value=seal-frozn, known=[");
    assertThatThrownBy(() -> io("seal-frozen", 0))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessage("crash point hit must be at least 1 [hit=0]");
  }

  @Test
  void theNodeCacheDefaultsTo64MiBAndRefusesANegativeSize() {
    assertThat(EngineSettings.builder(Path.of("unused")).build().nodeCacheBytes)
        .isEqualTo(64L << 20);
    assertThat(EngineSettings.builder(Path.of("unused")).nodeCacheBytes(0).build().nodeCacheBytes)
        .isZero();
    assertThatThrownBy(() -> EngineSettings.builder(Path.of("unused")).nodeCacheBytes(-1))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessage("node-cache-bytes must be at least 0 [node-cache-bytes=-1]");
  }

  @Test
  void theIoThreadsDefaultTo32ReachTheSegmentsAndAreRangeChecked() {
    assertThat(EngineSettings.builder(Path.of("unused")).build().ioThreads).isEqualTo(32);
    try (Engine e = new Engine(EngineSettings.builder(Path.of("unused")).ioThreads(3).build())) {
      assertThat(e.diskAnn.ioThreads().threads()).isEqualTo(3);
    }
    for (int bad : new int[] {0, -1, 1025}) {
      assertThatThrownBy(() -> EngineSettings.builder(Path.of("unused")).ioThreads(bad))
          .isInstanceOf(IllegalArgumentException.class)
          .hasMessage("io-threads must be in 1..1024 [io-threads=" + bad + "]");
    }
  }

  @Test
  void theBuildMemoryReachesSegmentBuildsAndIsRangeChecked() {
    assertThat(EngineSettings.builder(Path.of("unused")).build().buildMemoryBytes())
        .as("default: the build share of the heap")
        .isEqualTo((long) (Runtime.getRuntime().maxMemory() * EngineSettings.BUILD_HEAP_SHARE));
    EngineSettings s =
        EngineSettings.builder(Path.of("unused")).buildMemoryBytes(64L << 20).build();
    try (Engine e = new Engine(s)) {
      assertThat(e.diskAnn.buildMemoryBytes()).isEqualTo(64L << 20);
    }
    assertThatThrownBy(() -> EngineSettings.builder(Path.of("unused")).buildMemoryBytes(1000))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessage("build memory must be at least 1048576 bytes [buildMemoryBytes=1000]");
  }
}
