package io.flashvec.index.shard;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.file.Path;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@link LiveIndexScheduler#lastWriteNanos}: an upsert in flight (waiting for the write lock or for
 * seal room) counts as a write now, so raw segments do not merge while a seal holds writers back
 * (ADR 0031).
 */
class LiveIndexSchedulerWritesTest {

  @TempDir Path tmp;

  @Test
  void anUpsertInFlightIsAWriteNow() {
    LiveIndexScheduler s = new LiveIndexScheduler(tmp, null, null, new BackgroundJobs());
    long quiet = LiveIndexScheduler.WRITES_QUIET_NANOS;
    assertThat(System.nanoTime() - s.lastWriteNanos())
        .as("no write yet")
        .isGreaterThanOrEqualTo(quiet);
    s.writeStarted();
    assertThat(System.nanoTime() - s.lastWriteNanos()).as("a write in flight").isLessThan(quiet);
    s.writeEnded();
    assertThat(System.nanoTime() - s.lastWriteNanos())
        .as("it ended without being applied")
        .isGreaterThanOrEqualTo(quiet);
  }
}
