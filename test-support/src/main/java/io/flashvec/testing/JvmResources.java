package io.flashvec.testing;

import java.io.IOException;
import java.lang.management.BufferPoolMXBean;
import java.lang.management.ManagementFactory;
import java.nio.file.DirectoryStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.TreeMap;

/**
 * What this JVM holds open that a test could forget to release: its open file descriptors ({@code
 * /proc/self/fd}) and its file mappings (the JDK's {@code mapped} buffer pool, which counts every
 * {@code FileChannel.map}, whether into a {@code MappedByteBuffer} or into a memory segment of an
 * arena, as {@code MappedFile} and Lucene's {@code MMapDirectory} map). A {@link Snapshot} taken
 * before a test class is compared with one taken after it by {@link LeakCheck}.
 *
 * <p>Some descriptors are the JVM's own and appear once, on first use, whatever the test did: a jar
 * the class loader opens when it first loads a class from it, a native library, the JDK's files,
 * the random devices. They are not counted (see {@link #jvmOwned}). On a system without {@code
 * /proc/self/fd} only mappings are compared.
 */
public final class JvmResources {

  private static final Path FD_DIR = Path.of("/proc/self/fd");
  private static final Path MAPS = Path.of("/proc/self/maps");
  private static final String JAVA_HOME = Path.of(System.getProperty("java.home")).toString();

  private JvmResources() {}

  /** What was open at one moment: descriptor number to target, and the mapping count. */
  public record Snapshot(Map<Integer, String> openFiles, long mappings) {

    /**
     * What is open now that was not open in {@code before}: descriptors (by number and target, less
     * {@linkplain #jvmOwned the JVM's own}) and the growth of the mapping count.
     */
    public Leaks leaksSince(Snapshot before) {
      List<String> files = new ArrayList<>();
      openFiles.forEach(
          (fd, target) -> {
            if (!Objects.equals(before.openFiles.get(fd), target) && !jvmOwned(target)) {
              files.add("fd " + fd + " -> " + target);
            }
          });
      return new Leaks(files, Math.max(0, mappings - before.mappings));
    }
  }

  /** Descriptors and mappings left behind; {@link #none()} when there are none. */
  public record Leaks(List<String> openFiles, long mappings) {
    public boolean none() {
      return openFiles.isEmpty() && mappings == 0;
    }
  }

  /** What this JVM holds now. */
  public static Snapshot snapshot() {
    return new Snapshot(openFiles(), mappings());
  }

  /** Whether {@code /proc/self/fd} can be read here. */
  public static boolean fdsVisible() {
    return Files.isDirectory(FD_DIR);
  }

  /** Open descriptors and what each points to, sorted; empty where {@code /proc} is missing. */
  public static Map<Integer, String> openFiles() {
    Map<Integer, String> out = new TreeMap<>();
    if (!fdsVisible()) {
      return out;
    }
    try (DirectoryStream<Path> fds = Files.newDirectoryStream(FD_DIR)) {
      for (Path fd : fds) {
        try {
          out.put(Integer.parseInt(fd.getFileName().toString()), describe(fd));
        } catch (IOException | NumberFormatException e) {
          // closed while we listed it (the listing's own descriptor among them)
        }
      }
    } catch (IOException e) {
      throw new IllegalStateException("cannot list " + FD_DIR, e);
    }
    return out;
  }

  private static String describe(Path fd) throws IOException {
    return Files.readSymbolicLink(fd).toString();
  }

  /** How many file mappings the JDK counts as live. */
  public static long mappings() {
    for (BufferPoolMXBean pool : ManagementFactory.getPlatformMXBeans(BufferPoolMXBean.class)) {
      if (pool.getName().equals("mapped")) {
        return pool.getCount();
      }
    }
    return 0;
  }

  /**
   * The mapped regular files listed in {@code /proc/self/maps}, less shared libraries, jars and the
   * JDK's own files: which files a mapping leak holds, for the failure message.
   */
  public static List<String> mappedFiles() {
    List<String> out = new ArrayList<>();
    if (!Files.isReadable(MAPS)) {
      return out;
    }
    try {
      for (String line : Files.readAllLines(MAPS)) {
        int slash = line.indexOf('/');
        if (slash < 0) {
          continue;
        }
        String file = line.substring(slash);
        if (!jvmOwned(file) && !out.contains(file)) {
          out.add(file);
        }
      }
    } catch (IOException e) {
      out.add("(cannot read " + MAPS + ": " + e.getMessage() + ")");
    }
    return out;
  }

  /**
   * Whether a descriptor target belongs to the JVM rather than to the code under test: jars and
   * native libraries (opened on first use and kept), the JDK's own files, the random devices and
   * the listing of {@code /proc/self/fd} itself.
   */
  static boolean jvmOwned(String target) {
    return target.endsWith(".jar")
        || target.endsWith(".so")
        || target.contains(".so.")
        || target.startsWith(JAVA_HOME)
        || target.equals("/dev/random")
        || target.equals("/dev/urandom")
        || target.startsWith("/proc/");
  }
}
