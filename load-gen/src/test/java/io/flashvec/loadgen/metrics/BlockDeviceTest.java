package io.flashvec.loadgen.metrics;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.assertj.core.api.Assertions.within;

import io.flashvec.testing.TestSeeds;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Map;
import java.util.SplittableRandom;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** Parsing {@code /sys/block/<dev>/stat}, finding a path's disk in a fake sysfs, the arithmetic. */
class BlockDeviceTest {
  @TempDir Path dir;

  /** A virtio disk's line of a 6.x kernel: 17 fields (discards and flushes). */
  static final String VDA_17 =
      " 3182262    96907 85130322  1992592  4075879  1030679 222955648  1150226        0"
          + "   635240  3496111  1643955       83 220301352   211030  1101598   142263\n";

  /** A line of a 4.x kernel: 11 fields, as older kernels write it. */
  static final String SDA_11 =
      "  183740    10451  7622378   126472   303187   266331 16497032  1215248        0   407780"
          + "  1341944\n";

  /** A partition's line of a 4.18+ kernel: 15 fields (discards, no flushes). */
  static final String NVME_P1_15 =
      "   45120      12  3614208    9010   10204    1033  2236840   28812        0    22544"
          + "    37822        0        0        0        0\n";

  @Test
  void parsesTheStatLinesOfEveryKernelGeneration() {
    BlockDevice.Stat s = BlockDevice.Stat.parse(VDA_17);
    assertThat(s).isEqualTo(new BlockDevice.Stat(3182262L, 96907L, 85130322L, 1992592L, 635240L));
    assertThat(BlockDevice.Stat.parse(SDA_11))
        .isEqualTo(new BlockDevice.Stat(183740L, 10451L, 7622378L, 126472L, 407780L));
    assertThat(BlockDevice.Stat.parse(NVME_P1_15))
        .isEqualTo(new BlockDevice.Stat(45120L, 12L, 3614208L, 9010L, 22544L));
    // counters are unsigned longs: a value above Long.MAX_VALUE must not be refused
    assertThat(BlockDevice.Stat.parse("18446744073709551615 0 1 2 3 4 5 6 7 8 9").reads())
        .isEqualTo(-1L);
  }

  @Test
  void refusesWhatIsNotAStatLine() {
    assertThatThrownBy(() -> BlockDevice.Stat.parse("1 2 3 4 5 6 7 8 9 10"))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessage(
            "not a block device stat line, expected at least 11 fields [fields=10,"
                + " line=1 2 3 4 5 6 7 8 9 10]");
    assertThatThrownBy(() -> BlockDevice.Stat.parse(""))
        .hasMessage("not a block device stat line, expected at least 11 fields [fields=0, line=]");
    assertThatThrownBy(() -> BlockDevice.Stat.parse("1 2 x 4 5 6 7 8 9 10 11"))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessage(
            "not a block device stat line, a field is not a counter [line=1 2 x 4 5 6 7 8 9 10 11]");
  }

  /** glibc's makedev, to check the decoding against the encoding. */
  private static long makedev(long major, long minor) {
    return (minor & 0xffL)
        | ((major & 0xfffL) << 8)
        | ((minor & 0xffffff00L) << 12)
        | ((major & 0xfffff000L) << 32);
  }

  @Test
  void decodesMajorAndMinorOfADevT() {
    assertThat(BlockDevice.major(0xfe00)).isEqualTo(254); // vda, as stat -c %D prints it
    assertThat(BlockDevice.minor(0xfe00)).isZero();
    assertThat(BlockDevice.major(makedev(259, 300))).isEqualTo(259); // nvme, minor above 255
    assertThat(BlockDevice.minor(makedev(259, 300))).isEqualTo(300);
    SplittableRandom r = TestSeeds.splittableRandom("BlockDeviceTest.devT");
    for (int i = 0; i < 1000; i++) {
      long major = r.nextLong(1L << 32);
      long minor = r.nextLong(1L << 32);
      long dev = makedev(major, minor);
      assertThat(BlockDevice.major(dev)).as("dev=%x", dev).isEqualTo(major);
      assertThat(BlockDevice.minor(dev)).as("dev=%x", dev).isEqualTo(minor);
    }
  }

  /**
   * A sysfs with an NVMe disk holding two partitions, the way the kernel lays it out: the devices
   * live under {@code devices/}, {@code class/block/<name>} and {@code dev/block/MAJ:MIN} are
   * symbolic links to them, and a partition is a directory below its disk with a {@code partition}
   * file.
   */
  private Path fakeSys(String devOfPartition2) throws Exception {
    Path sys = dir.resolve("sys");
    Path disk = sys.resolve("devices/pci0000:00/0000:00:04.0/nvme/nvme0/nvme0n1");
    Files.createDirectories(disk);
    Files.writeString(disk.resolve("stat"), VDA_17);
    for (int p = 1; p <= 2; p++) {
      Path part = disk.resolve("nvme0n1p" + p);
      Files.createDirectories(part);
      Files.writeString(part.resolve("partition"), p + "\n");
      Files.writeString(part.resolve("stat"), NVME_P1_15);
    }
    Files.createDirectories(sys.resolve("class/block"));
    Files.createDirectories(sys.resolve("dev/block"));
    Files.createDirectories(sys.resolve("block"));
    Files.createSymbolicLink(sys.resolve("class/block/nvme0n1"), disk);
    Files.createSymbolicLink(sys.resolve("block/nvme0n1"), disk);
    Files.createSymbolicLink(sys.resolve("dev/block/259:0"), disk);
    for (int p = 1; p <= 2; p++) {
      Path part = disk.resolve("nvme0n1p" + p);
      Files.createSymbolicLink(sys.resolve("class/block/nvme0n1p" + p), part);
    }
    Files.createSymbolicLink(sys.resolve("dev/block/259:1"), disk.resolve("nvme0n1p1"));
    if (devOfPartition2 != null) {
      Files.createSymbolicLink(
          sys.resolve("dev/block").resolve(devOfPartition2), disk.resolve("nvme0n1p2"));
    }
    return sys;
  }

  private static String devOf(Path p) throws Exception {
    long dev = ((Number) Files.getAttribute(p, "unix:dev")).longValue();
    return BlockDevice.major(dev) + ":" + BlockDevice.minor(dev);
  }

  @Test
  void aPartitionIsCountedOnItsDisk() throws Exception {
    Path sys = fakeSys(null);
    Path disk = sys.resolve("block/nvme0n1").toRealPath();

    BlockDevice.Lookup whole = BlockDevice.find("nvme0n1", dir, sys);
    BlockDevice.Lookup part = BlockDevice.find("nvme0n1p2", dir, sys);

    assertThat(whole.reason()).isNull();
    assertThat(whole.device().name()).isEqualTo("nvme0n1");
    assertThat(whole.device().statFile()).isEqualTo(disk.resolve("stat"));
    assertThat(part.reason()).isNull();
    assertThat(part.device().name()).isEqualTo("nvme0n1");
    assertThat(part.device().statFile()).isEqualTo(disk.resolve("stat"));
    assertThat(part.device().sample().stat().reads()).isEqualTo(3182262L);
  }

  @Test
  void autoFindsTheDiskHoldingAPath() throws Exception {
    Path data = Files.createDirectories(dir.resolve("data"));
    Path sys = fakeSys(devOf(data));

    BlockDevice.Lookup l = BlockDevice.find("auto", data, sys);

    assertThat(l.reason()).isNull();
    assertThat(l.device().name()).isEqualTo("nvme0n1");
  }

  @Test
  void aMissingDeviceIsReportedNotGuessed() throws Exception {
    Path sys = fakeSys(null);
    Path data = Files.createDirectories(dir.resolve("data"));

    assertThat(BlockDevice.find("sdz", data, sys))
        .isEqualTo(
            new BlockDevice.Lookup(
                null,
                "no such block device [device=sdz, sysfs=" + sys.resolve("class/block/sdz") + "]"));
    assertThat(BlockDevice.find("../nvme0n1", data, sys).reason())
        .isEqualTo("not a block device name [device=../nvme0n1]");
    // the temporary directory's st_dev has no entry in the fake sysfs (overlay, tmpfs, ...)
    String dev = devOf(data);
    assertThat(BlockDevice.find("auto", data, sys).reason())
        .isEqualTo(
            "the file system of a path has no block device in sysfs (overlay, tmpfs, network?)"
                + " [path="
                + data
                + ", dev="
                + dev
                + ", sysfs="
                + sys.resolve("dev/block").resolve(dev)
                + "]");
    assertThat(BlockDevice.find("auto", dir.resolve("absent"), sys).reason())
        .startsWith("cannot stat the device of a path [path=" + dir.resolve("absent"));
  }

  @Test
  void aStatFileThatIsNotOneIsReportedAtLookup() throws Exception {
    Path sys = fakeSys(null);
    Path stat = sys.resolve("block/nvme0n1").toRealPath().resolve("stat");
    Files.writeString(stat, "garbage\n");

    assertThat(BlockDevice.find("nvme0n1", dir, sys).reason())
        .isEqualTo(
            "not a block device stat line, expected at least 11 fields [fields=1, line=garbage]");
  }

  private static BlockDevice.Sample sample(
      long reads, long sectors, long readTicks, long ioTicks, long nanos) {
    return new BlockDevice.Sample(
        new BlockDevice.Stat(reads, 0, sectors, readTicks, ioTicks), nanos);
  }

  @Test
  void derivesRatesAndPerQueryFiguresOfAWindow() {
    // 2 s; 40,000 reads of 8 sectors (4 KiB) each; 1,000 queries; device busy 1.5 s
    BlockDevice.Sample before = sample(1_000, 50_000, 700, 10_000, 5_000_000_000L);
    BlockDevice.Sample after = sample(41_000, 370_000, 20_700, 11_500, 7_000_000_000L);
    Map<String, Double> server =
        Map.of("pages_read_per_query", 36.0, "bytes_read_per_query", 147456.0);

    Map<String, Double> d = BlockDevice.derive(before, after, 1_000, server);

    assertThat(d.get("reads")).isEqualTo(40_000.0);
    assertThat(d.get("read_bytes")).isEqualTo(320_000.0 * 512);
    assertThat(d.get("seconds")).isEqualTo(2.0);
    assertThat(d.get("reads_per_s")).isEqualTo(20_000.0);
    assertThat(d.get("read_mb_per_s")).isCloseTo(81.92, within(1e-9));
    assertThat(d.get("avg_read_kib")).isEqualTo(4.0);
    assertThat(d.get("avg_read_wait_ms")).isEqualTo(0.5);
    assertThat(d.get("busy")).isEqualTo(0.75);
    assertThat(d.get("reads_per_query")).isEqualTo(40.0);
    assertThat(d.get("read_bytes_per_query")).isEqualTo(163_840.0);
    assertThat(d.get("pages_per_query")).isEqualTo(40.0);
    assertThat(d.get("server_pages_per_query")).isEqualTo(36.0);
    assertThat(d.get("server_bytes_per_query")).isEqualTo(147_456.0);
    assertThat(d.get("device_to_server_pages")).isCloseTo(40.0 / 36, within(1e-12));
    assertThat(d.get("device_to_server_bytes")).isCloseTo(163_840.0 / 147_456, within(1e-12));
    assertThat(d).doesNotContainKey("reads_of_reference_iops");

    // against the disk's own 4 KiB random-read IOPS at queue depth 32: 20,000 of 80,000
    assertThat(BlockDevice.derive(before, after, 1_000, server, 80_000))
        .containsEntry("reads_of_reference_iops", 0.25);
  }

  @Test
  void readaheadShowsAsLargerReadsAndMorePagesThanReads() {
    // 100 reads of 128 KiB (256 sectors): 32 pages per read
    Map<String, Double> d =
        BlockDevice.derive(
            sample(0, 0, 0, 0, 0), sample(100, 25_600, 100, 500, 1_000_000_000L), 10, Map.of());

    assertThat(d.get("avg_read_kib")).isEqualTo(128.0);
    assertThat(d.get("reads_per_query")).isEqualTo(10.0);
    assertThat(d.get("pages_per_query")).isEqualTo(320.0);
    assertThat(d).doesNotContainKeys("server_pages_per_query", "device_to_server_pages");
  }

  @Test
  void noQueriesNoReadsOrCountersGoingBackGiveNoMadeUpFigures() {
    BlockDevice.Sample a = sample(10, 80, 5, 5, 0);
    BlockDevice.Sample b = sample(10, 80, 5, 5, 1_000_000_000L);

    Map<String, Double> idle = BlockDevice.derive(a, b, 0, Map.of("pages_read_per_query", 0.0));
    assertThat(idle).containsEntry("reads_per_s", 0.0).containsEntry("busy", 0.0);
    assertThat(idle)
        .doesNotContainKeys(
            "pages_per_query", "avg_read_kib", "device_to_server_pages", "device_to_server_bytes");

    // the device was replaced (counters restarted) during the window
    assertThat(BlockDevice.derive(sample(1_000, 8_000, 5, 5, 0), b, 10, Map.of())).isEmpty();
    // no time passed
    assertThat(BlockDevice.derive(a, a, 10, Map.of())).isEmpty();
  }
}
