package io.flashvec.loadgen.metrics;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.LinkedHashMap;
import java.util.Map;

/**
 * The bytes one process (the server) caused to be read from storage, from {@code /proc/<pid>/io}'s
 * {@code read_bytes}: reads it issued and page faults on its mapped files, with their readahead,
 * but not reads served from the page cache. Beside the block device's counters, which include every
 * process on the machine, it tells the server's own disk reads from other processes' reads, and
 * beside the server's own metrics it tells reads the server does not count. Immutable and
 * thread-safe; {@link #sample} reads the file each time.
 */
public final class ProcessIo {
  /** {@code read_bytes} at {@code nanos} ({@link System#nanoTime}). */
  public record Sample(long readBytes, long nanos) {}

  private final long pid;
  private final Path file;

  private ProcessIo(long pid, Path file) {
    this.pid = pid;
    this.file = file;
  }

  /**
   * The process {@code pid}, whose io file under {@code proc} ({@code /proc} except in tests) must
   * be readable now.
   *
   * @throws IllegalArgumentException when it is not (no such process, not permitted)
   */
  public static ProcessIo of(long pid, Path proc) {
    if (pid <= 0) {
      throw new IllegalArgumentException("not a process id [server-pid=" + pid + "]");
    }
    ProcessIo p = new ProcessIo(pid, proc.resolve(Long.toString(pid)).resolve("io"));
    try {
      p.sample();
    } catch (UncheckedIOException e) {
      throw new IllegalArgumentException(
          "cannot read the I/O counters of a process (is it running, and are we permitted?)"
              + " [server-pid="
              + pid
              + ", file="
              + p.file
              + "]",
          e);
    }
    return p;
  }

  /** The process id. */
  public long pid() {
    return pid;
  }

  /** Reads {@code read_bytes} now. */
  public Sample sample() {
    String text;
    try {
      text = Files.readString(file);
    } catch (IOException e) {
      throw new UncheckedIOException("cannot read process I/O counters [file=" + file + "]", e);
    }
    long now = System.nanoTime();
    return new Sample(parseReadBytes(text, file), now);
  }

  /** The {@code read_bytes} field of a {@code /proc/<pid>/io} text. */
  static long parseReadBytes(String text, Path file) {
    for (String line : text.split("\n")) {
      if (line.startsWith("read_bytes:")) {
        try {
          return Long.parseLong(line.substring("read_bytes:".length()).strip());
        } catch (NumberFormatException e) {
          throw new IllegalArgumentException(
              "not a /proc/<pid>/io read_bytes line [file=" + file + ", line=" + line + "]", e);
        }
      }
    }
    throw new IllegalArgumentException(
        "no read_bytes in a /proc/<pid>/io file [file=" + file + "]");
  }

  /**
   * The process's reads over a window of {@code queries} queries beside the server's own counts
   * ({@link ServerIo#derive}): {@code process_read_mb_per_s}, {@code process_read_bytes_per_query},
   * {@code process_pages_per_query} (4 KiB) and {@code process_to_server_bytes}. A counter that
   * went backwards (another process with that id) gives an empty map.
   */
  public static Map<String, Double> derive(
      Sample before, Sample after, long queries, Map<String, Double> serverIo) {
    Map<String, Double> out = new LinkedHashMap<>();
    long bytes = after.readBytes - before.readBytes;
    double seconds = (after.nanos - before.nanos) / 1e9;
    if (bytes < 0 || seconds <= 0) {
      return out;
    }
    out.put("process_read_mb_per_s", bytes / seconds / 1e6);
    if (queries > 0) {
      out.put("process_read_bytes_per_query", (double) bytes / queries);
      out.put("process_pages_per_query", (double) bytes / BlockDevice.PAGE_BYTES / queries);
      Double server = serverIo == null ? null : serverIo.get("bytes_read_per_query");
      if (server != null && server > 0) {
        out.put("process_to_server_bytes", (double) bytes / queries / server);
      }
    }
    return out;
  }
}
