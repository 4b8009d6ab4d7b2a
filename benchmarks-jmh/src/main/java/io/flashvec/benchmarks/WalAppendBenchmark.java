package io.flashvec.benchmarks;

import io.flashvec.storage.FileIO;
import io.flashvec.storage.FsyncPolicy;
import io.flashvec.storage.Wal;
import java.io.IOException;
import java.nio.file.Path;
import java.util.SplittableRandom;
import java.util.concurrent.TimeUnit;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.Level;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Param;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.TearDown;

/**
 * {@link Wal#append} of one record, alone or followed by an fsync every N appends.
 *
 * <p>Durability modes ({@link #durability}):
 *
 * <ul>
 *   <li>{@code never}: policy {@link FsyncPolicy#NEVER}, pure append (a write to the page cache).
 *   <li>{@code always-sync-1}: policy {@link FsyncPolicy#ALWAYS}, {@link Wal#sync} after every
 *       append: one fdatasync per record, the cost of a {@code wait=true} write without group
 *       commit.
 *   <li>{@code always-sync-16}: policy {@code ALWAYS}, a sync after every 16th append: what group
 *       commit of 16 concurrent writers costs per record.
 * </ul>
 *
 * The log lives in a fresh temporary directory per trial (see {@link AbstractBenchmark} for where)
 * and is deleted afterwards. To keep the disk from filling during a 1 s iteration of page-cache
 * appends, segments are dropped with {@link Wal#truncateBefore} once the log passes {@value
 * #RECLAIM_BYTES} bytes; that unlink and directory fsync is amortised over 64 MiB of records and is
 * part of a real log's life (a checkpoint does the same).
 */
@OutputTimeUnit(TimeUnit.MICROSECONDS)
public class WalAppendBenchmark extends AbstractBenchmark {

  static final long RECLAIM_BYTES = 256L << 20;
  static final byte OP = 1;

  @Param({"1024", "16384"})
  public int recordBytes;

  @Param({"never", "always-sync-1", "always-sync-16"})
  public String durability;

  Path dir;
  Wal wal;
  byte[] body;
  int syncEvery;
  long appends;

  @Setup(Level.Trial)
  public void setup() throws IOException {
    FsyncPolicy policy;
    switch (durability) {
      case "never" -> {
        policy = FsyncPolicy.NEVER;
        syncEvery = 0;
      }
      case "always-sync-1" -> {
        policy = FsyncPolicy.ALWAYS;
        syncEvery = 1;
      }
      case "always-sync-16" -> {
        policy = FsyncPolicy.ALWAYS;
        syncEvery = 16;
      }
      default ->
          throw new IllegalArgumentException(
              "unknown durability mode [durability="
                  + durability
                  + ", allowed=never|always-sync-1|always-sync-16]");
    }
    body = new byte[recordBytes];
    new SplittableRandom(SEED).nextBytes(body); // incompressible, like real vectors
    dir = createTempDir("flashvec-jmh-wal-");
    wal =
        Wal.open(
            dir, FileIO.DEFAULT, Wal.Options.defaults().withPolicy(policy), 1, (seq, op, b) -> {});
  }

  @TearDown(Level.Trial)
  public void tearDown() throws IOException {
    closeAndDelete(wal, dir);
    wal = null;
  }

  @Benchmark
  public long append() {
    long seq = wal.append(OP, body);
    if (syncEvery > 0 && ++appends % syncEvery == 0) {
      wal.sync(seq);
    }
    if (wal.sizeBytes() > RECLAIM_BYTES) {
      wal.truncateBefore(seq);
    }
    return seq;
  }
}
