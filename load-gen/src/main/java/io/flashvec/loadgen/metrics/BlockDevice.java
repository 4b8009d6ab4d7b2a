package io.flashvec.loadgen.metrics;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.LinkedHashMap;
import java.util.Map;

/**
 * The read counters of one whole block device, from {@code /sys/block/<dev>/stat}, sampled before
 * and after a measured window so that a benchmark can report what the device did: reads per second,
 * MB/s and 4 KiB pages per query beside the server's own counts.
 *
 * <p>The stat file is one line of whitespace-separated decimal counters (the kernel's {@code
 * Documentation/block/stat.rst}); 11 fields on old kernels, 15 with discards, 17 with flushes:
 *
 * <pre>
 *  1 read I/Os      2 read merges    3 read sectors   4 read ticks (ms)
 *  5 write I/Os     6 write merges   7 write sectors  8 write ticks (ms)
 *  9 in flight     10 io ticks (ms) 11 time in queue (ms)   12.. discards, flushes
 * </pre>
 *
 * A sector is always 512 bytes there, whatever the device's logical block size. The counters are
 * those of the device, so they include every process on the machine, not only the server.
 *
 * <p>A device is found by name ({@code vda}, {@code nvme0n1}; a partition such as {@code nvme0n1p2}
 * is counted on its disk) or as the device that holds a file: the file's {@code st_dev} names
 * {@code /sys/dev/block/MAJOR:MINOR}, which for a partition is a directory below its disk's. A file
 * system without a block device of its own (overlay, tmpfs, NFS) has no such entry; it is reported
 * as not found rather than guessed. Immutable and thread-safe; {@link #sample} reads the file each
 * time.
 */
public final class BlockDevice {
  /** Bytes per sector in the stat file (fixed by the kernel, not the device's block size). */
  public static final int SECTOR_BYTES = 512;

  /** The page size per-query device figures are expressed in. */
  public static final int PAGE_BYTES = 4096;

  /** The sysfs root of this machine. */
  public static final Path SYS = Path.of("/sys");

  /**
   * The counters of one stat line that a read benchmark uses.
   *
   * @param reads read I/Os completed (field 1)
   * @param readsMerged reads merged with a neighbour before they were issued (field 2)
   * @param sectorsRead 512-byte sectors read (field 3)
   * @param readTicksMs milliseconds reads spent in the device queue, summed over reads (field 4)
   * @param ioTicksMs milliseconds the device had at least one I/O in flight (field 10)
   */
  public record Stat(
      long reads, long readsMerged, long sectorsRead, long readTicksMs, long ioTicksMs) {

    /** Parses one stat line; needs at least the 11 fields every kernel since 2.6 writes. */
    public static Stat parse(String line) {
      String[] f = line.strip().split("\\s+");
      if (f.length < 11) {
        throw new IllegalArgumentException(
            "not a block device stat line, expected at least 11 fields [fields="
                + (line.isBlank() ? 0 : f.length)
                + ", line="
                + line.strip()
                + "]");
      }
      try {
        return new Stat(
            Long.parseUnsignedLong(f[0]),
            Long.parseUnsignedLong(f[1]),
            Long.parseUnsignedLong(f[2]),
            Long.parseUnsignedLong(f[3]),
            Long.parseUnsignedLong(f[9]));
      } catch (NumberFormatException e) {
        throw new IllegalArgumentException(
            "not a block device stat line, a field is not a counter [line=" + line.strip() + "]",
            e);
      }
    }
  }

  /** A stat read at {@code nanos} ({@link System#nanoTime}). */
  public record Sample(Stat stat, long nanos) {}

  /**
   * The outcome of looking a device up: the device, or why there is none.
   *
   * @param device the device found, or null
   * @param reason why none was found (null when found)
   */
  public record Lookup(BlockDevice device, String reason) {}

  private final String name;
  private final Path statFile;

  private BlockDevice(String name, Path statFile) {
    this.name = name;
    this.statFile = statFile;
  }

  /** The disk's kernel name, e.g. {@code nvme0n1}. */
  public String name() {
    return name;
  }

  /** The stat file read. */
  public Path statFile() {
    return statFile;
  }

  /** Reads the counters now. */
  public Sample sample() {
    try {
      String line = Files.readString(statFile);
      long now = System.nanoTime();
      return new Sample(Stat.parse(line), now);
    } catch (IOException e) {
      throw new UncheckedIOException("cannot read block device stat [file=" + statFile + "]", e);
    }
  }

  /**
   * Finds the device {@code spec} names: {@code auto} (the device holding {@code path}), or a
   * kernel device name; {@code sys} is the sysfs root ({@link #SYS} except in tests).
   */
  public static Lookup find(String spec, Path path, Path sys) {
    if (spec.equals("auto")) {
      return holding(path, sys);
    }
    if (spec.isEmpty() || spec.contains("/") || spec.equals(".") || spec.equals("..")) {
      return new Lookup(null, "not a block device name [device=" + spec + "]");
    }
    Path dir = sys.resolve("class/block").resolve(spec);
    if (!Files.isDirectory(dir)) {
      return new Lookup(null, "no such block device [device=" + spec + ", sysfs=" + dir + "]");
    }
    return disk(dir, spec);
  }

  /** The disk holding {@code path}: its {@code st_dev} → {@code /sys/dev/block/MAJ:MIN}. */
  static Lookup holding(Path path, Path sys) {
    long dev;
    try {
      dev = ((Number) Files.getAttribute(path, "unix:dev")).longValue();
    } catch (IOException | UnsupportedOperationException | IllegalArgumentException e) {
      return new Lookup(
          null, "cannot stat the device of a path [path=" + path + ", error=" + e + "]");
    }
    String id = major(dev) + ":" + minor(dev);
    Path link = sys.resolve("dev/block").resolve(id);
    if (!Files.exists(link)) {
      return new Lookup(
          null,
          "the file system of a path has no block device in sysfs (overlay, tmpfs, network?)"
              + " [path="
              + path
              + ", dev="
              + id
              + ", sysfs="
              + link
              + "]");
    }
    return disk(link, id);
  }

  /** A partition's directory lies below its disk's and holds a {@code partition} file. */
  private static Lookup disk(Path dir, String spec) {
    Path real;
    try {
      real = dir.toRealPath();
    } catch (IOException e) {
      return new Lookup(
          null, "cannot resolve a block device [device=" + spec + ", error=" + e + "]");
    }
    if (Files.exists(real.resolve("partition"))) {
      real = real.getParent();
    }
    Path stat = real.resolve("stat");
    if (!Files.isReadable(stat)) {
      return new Lookup(
          null,
          "the stat file of a block device is not readable [device="
              + spec
              + ", file="
              + stat
              + "]");
    }
    BlockDevice d = new BlockDevice(real.getFileName().toString(), stat);
    try {
      d.sample();
    } catch (UncheckedIOException | IllegalArgumentException e) {
      return new Lookup(null, e.getMessage());
    }
    return new Lookup(d, null);
  }

  /** The major number of a Linux {@code dev_t} (glibc's {@code gnu_dev_major}). */
  static long major(long dev) {
    return ((dev >>> 8) & 0xfffL) | ((dev >>> 32) & 0xfffff000L);
  }

  /** The minor number of a Linux {@code dev_t} (glibc's {@code gnu_dev_minor}). */
  static long minor(long dev) {
    return (dev & 0xffL) | ((dev >>> 12) & 0xffffff00L);
  }

  /**
   * The device figures of one measured window of {@code queries} successful queries, beside the
   * server's own per-query figures {@code serverIo} ({@link ServerIo#derive}, may be empty).
   * Counters that went backwards (a device re-attached, a 32-bit counter wrapped) give an empty
   * map: no figure rather than a wrong one.
   *
   * <p>Keys: {@code reads}, {@code read_bytes}, {@code seconds}, {@code reads_per_s}, {@code
   * read_mb_per_s} (10^6 bytes), {@code avg_read_kib}, {@code busy} (fraction of the window with an
   * I/O in flight), {@code avg_read_wait_ms}, and with queries {@code reads_per_query}, {@code
   * read_bytes_per_query}, {@code pages_per_query} (4 KiB); with the server's counts {@code
   * server_pages_per_query}, {@code server_bytes_per_query} and the ratios {@code
   * device_to_server_bytes} and {@code device_to_server_pages}.
   */
  public static Map<String, Double> derive(
      Sample before, Sample after, long queries, Map<String, Double> serverIo) {
    return derive(before, after, queries, serverIo, Double.NaN);
  }

  /**
   * {@link #derive(Sample, Sample, long, Map)}, and with a reference IOPS (the disk's 4 KiB random
   * reads at queue depth 32, measured with fio) the share of it the window's reads/s used, as
   * {@code reads_of_reference_iops}.
   */
  public static Map<String, Double> derive(
      Sample before,
      Sample after,
      long queries,
      Map<String, Double> serverIo,
      double referenceIops) {
    Map<String, Double> out = new LinkedHashMap<>();
    long reads = after.stat.reads - before.stat.reads;
    long sectors = after.stat.sectorsRead - before.stat.sectorsRead;
    long ticks = after.stat.ioTicksMs - before.stat.ioTicksMs;
    long waits = after.stat.readTicksMs - before.stat.readTicksMs;
    double seconds = (after.nanos - before.nanos) / 1e9;
    if (reads < 0 || sectors < 0 || ticks < 0 || waits < 0 || seconds <= 0) {
      return out;
    }
    double bytes = (double) sectors * SECTOR_BYTES;
    out.put("reads", (double) reads);
    out.put("read_bytes", bytes);
    out.put("seconds", seconds);
    out.put("reads_per_s", reads / seconds);
    out.put("read_mb_per_s", bytes / seconds / 1e6);
    if (referenceIops > 0) {
      out.put("reads_of_reference_iops", reads / seconds / referenceIops);
    }
    if (reads > 0) {
      out.put("avg_read_kib", bytes / reads / 1024);
      out.put("avg_read_wait_ms", (double) waits / reads);
    }
    out.put("busy", Math.min(1.0, ticks / (seconds * 1e3)));
    if (queries > 0) {
      out.put("reads_per_query", (double) reads / queries);
      out.put("read_bytes_per_query", bytes / queries);
      out.put("pages_per_query", bytes / PAGE_BYTES / queries);
    }
    Double serverPages = serverIo == null ? null : serverIo.get("pages_read_per_query");
    Double serverBytes = serverIo == null ? null : serverIo.get("bytes_read_per_query");
    if (serverPages != null) {
      out.put("server_pages_per_query", serverPages);
    }
    if (serverBytes != null) {
      out.put("server_bytes_per_query", serverBytes);
    }
    if (queries > 0 && serverBytes != null && serverBytes > 0) {
      out.put("device_to_server_bytes", bytes / queries / serverBytes);
    }
    if (queries > 0 && serverPages != null && serverPages > 0) {
      out.put("device_to_server_pages", bytes / PAGE_BYTES / queries / serverPages);
    }
    return out;
  }
}
