package io.flashvec.testing;

import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.Assumptions.assumeTrue;
import static org.junit.platform.engine.discovery.DiscoverySelectors.selectClass;
import static org.junit.platform.testkit.engine.EventConditions.container;
import static org.junit.platform.testkit.engine.EventConditions.event;
import static org.junit.platform.testkit.engine.EventConditions.finishedSuccessfully;
import static org.junit.platform.testkit.engine.EventConditions.finishedWithFailure;
import static org.junit.platform.testkit.engine.TestExecutionResultConditions.instanceOf;
import static org.junit.platform.testkit.engine.TestExecutionResultConditions.message;

import java.io.IOException;
import java.lang.foreign.Arena;
import java.nio.channels.FileChannel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.api.io.TempDir;
import org.junit.platform.testkit.engine.EngineTestKit;
import org.junit.platform.testkit.engine.Events;

/**
 * The leak check fails a class that leaves a file open or mapped, names what it left, and passes a
 * class that releases everything. The scenario classes below leak on purpose; they run only inside
 * these tests, through JUnit's test kit (Surefire does not run nested classes on their own, and a
 * scenario selected by a pattern skips itself).
 */
class LeakCheckTest {

  @TempDir Path tmp;

  static Path dir;
  static FileChannel leakedChannel;
  static Arena leakedArena;

  @AfterEach
  void release() throws IOException {
    dir = null;
    if (leakedChannel != null) {
      leakedChannel.close();
      leakedChannel = null;
    }
    if (leakedArena != null) {
      leakedArena.close();
      leakedArena = null;
    }
  }

  /** The scenarios run only from the tests below (a {@code -Dtest} pattern may select them). */
  @ExtendWith(LeakCheck.class)
  abstract static class Scenario {
    @BeforeAll
    static void onlyFromLeakCheckTest() {
      assumeTrue(dir != null, "a scenario of LeakCheckTest, run by it");
    }
  }

  static class LeavesAChannelOpen extends Scenario {
    @Test
    void opensAndForgets() throws IOException {
      leakedChannel =
          FileChannel.open(
              dir.resolve("forgotten.bin"), StandardOpenOption.CREATE, StandardOpenOption.WRITE);
    }
  }

  static class LeavesAFileMapped extends Scenario {
    @Test
    void mapsAndForgets() throws IOException {
      Path file = Files.write(dir.resolve("mapped.bin"), new byte[8192]);
      leakedArena = Arena.ofShared();
      try (FileChannel ch = FileChannel.open(file, StandardOpenOption.READ)) {
        ch.map(FileChannel.MapMode.READ_ONLY, 0, 8192, leakedArena);
      }
    }
  }

  static class ReleasesEverything extends Scenario {
    @Test
    void opensMapsAndCloses() throws IOException {
      Path file = Files.write(dir.resolve("tidy.bin"), new byte[8192]);
      try (Arena arena = Arena.ofShared();
          FileChannel ch = FileChannel.open(file, StandardOpenOption.READ)) {
        ch.map(FileChannel.MapMode.READ_ONLY, 0, 8192, arena);
      }
    }
  }

  private Events run(Class<?> testClass) {
    dir = tmp;
    try {
      return EngineTestKit.engine("junit-jupiter")
          .configurationParameter(LeakCheck.SETTLE_PARAMETER, "PT0.2S")
          .selectors(selectClass(testClass))
          .execute()
          .containerEvents();
    } finally {
      dir = null;
    }
  }

  @Test
  void aClassThatLeavesAFileOpenFailsNamingTheFile() {
    run(LeavesAChannelOpen.class)
        .assertThatEvents()
        .haveExactly(
            1,
            event(
                container(LeavesAChannelOpen.class),
                finishedWithFailure(
                    instanceOf(AssertionError.class),
                    message(m -> m.contains("1 open file descriptor(s)")),
                    message(m -> m.contains(tmp.resolve("forgotten.bin").toString())))));
  }

  @Test
  void aClassThatLeavesAFileMappedFailsNamingTheFile() {
    run(LeavesAFileMapped.class)
        .assertThatEvents()
        .haveExactly(
            1,
            event(
                container(LeavesAFileMapped.class),
                finishedWithFailure(
                    instanceOf(AssertionError.class),
                    message(m -> m.contains("1 file mapping(s)")),
                    message(m -> m.contains(tmp.resolve("mapped.bin").toString())))));
  }

  @Test
  void aClassThatReleasesEverythingPasses() {
    run(ReleasesEverything.class)
        .assertThatEvents()
        .haveExactly(1, event(container(ReleasesEverything.class), finishedSuccessfully()));
  }

  @Test
  void jarsLibrariesAndTheJdkAreTheJvmsOwn() {
    assertThat(JvmResources.jvmOwned("/root/.m2/repository/x/y/1.0/y-1.0.jar")).isTrue();
    assertThat(JvmResources.jvmOwned("/usr/lib/x86_64-linux-gnu/libz.so.1.3")).isTrue();
    assertThat(JvmResources.jvmOwned("/tmp/junit123/shard/wal/wal-1.log")).isFalse();
    assertThat(JvmResources.jvmOwned("socket:[12345]")).isFalse();
  }
}
