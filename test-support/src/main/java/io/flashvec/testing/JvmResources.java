package io.flashvec.testing;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.lang.management.BufferPoolMXBean;
import java.lang.management.ManagementFactory;
import java.nio.channels.SocketChannel;
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
 * the random devices. They are not counted (see {@link #jvmOwned}), and the socket the JDK keeps
 * from its first socket channel on is opened before the first snapshot. On a system without {@code
 * /proc/self/fd} only mappings are compared.
 */
public final class JvmResources {

  private static final Path FD_DIR = Path.of("/proc/self/fd");
  private static final Path MAPS = Path.of("/proc/self/maps");
  private static final String JAVA_HOME = Path.of(System.getProperty("java.home")).toString();

  private JvmResources() {}

  /**
   * What was open at one moment: descriptor number to target, the mapping count, and the mapped
   * files (to name the files of a mapping leak).
   */
  public record Snapshot(Map<Integer, String> openFiles, long mappings, List<String> mappedFiles) {

    /**
     * What is open now that was not open in {@code before}: descriptors (by number and target, less
     * {@linkplain #jvmOwned the JVM's own}), the growth of the mapping count and the files mapped
     * now but not then.
     */
    public Leaks leaksSince(Snapshot before) {
      List<String> files = new ArrayList<>();
      openFiles.forEach(
          (fd, target) -> {
            if (!Objects.equals(before.openFiles.get(fd), target) && !jvmOwned(target)) {
              files.add("fd " + fd + " -> " + explainSocket(target));
            }
          });
      List<String> mapped = new ArrayList<>(mappedFiles);
      mapped.removeAll(before.mappedFiles);
      return new Leaks(files, Math.max(0, mappings - before.mappings), mapped);
    }
  }

  /**
   * Descriptors and mappings left behind, and the files mapped since; {@link #none()} when no
   * descriptor or mapping is left.
   */
  public record Leaks(List<String> openFiles, long mappings, List<String> newlyMappedFiles) {
    public boolean none() {
      return openFiles.isEmpty() && mappings == 0;
    }
  }

  /**
   * Opens once what the JDK keeps open from its first use on, so that the test class that happens
   * to use it first is not blamed for it: the socket of the JDK's NIO socket dispatcher (one end of
   * a socket pair, kept for closing sockets asynchronously).
   */
  static synchronized void warmUp() {
    if (warm) {
      return;
    }
    try (SocketChannel ch = SocketChannel.open()) {
      warm = ch.isOpen();
    } catch (IOException e) {
      throw new UncheckedIOException("cannot open a socket channel to warm the JDK up", e);
    }
  }

  private static boolean warm; // guarded by JvmResources.class

  /** What this JVM holds now. */
  public static Snapshot snapshot() {
    return new Snapshot(openFiles(), mappings(), mappedFiles());
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

  private static final List<String> SOCKET_TABLES =
      List.of("tcp", "tcp6", "udp", "udp6", "unix", "netlink", "raw", "raw6");

  /**
   * What a {@code socket:[inode]} descriptor is, from the tables in {@code /proc/self/net} (a TCP
   * socket's state and addresses, a Unix socket's path, a netlink socket), for failure messages;
   * {@code target} unchanged when it is no socket or is not listed.
   */
  public static String explainSocket(String target) {
    if (!target.startsWith("socket:[") || !target.endsWith("]")) {
      return target;
    }
    String inode = target.substring("socket:[".length(), target.length() - 1);
    for (String table : SOCKET_TABLES) {
      Path path = Path.of("/proc/self/net", table);
      if (!Files.isReadable(path)) {
        continue;
      }
      try {
        List<String> lines = Files.readAllLines(path);
        int column = inodeColumn(lines.isEmpty() ? "" : lines.getFirst(), table);
        for (String line : lines.subList(Math.min(1, lines.size()), lines.size())) {
          String[] f = line.trim().split("\\s+");
          if (column < f.length && f[column].equals(inode)) {
            return target + " (" + table + ": " + line.trim() + ")";
          }
        }
      } catch (IOException e) {
        // not readable here; try the next table
      }
    }
    return target;
  }

  private static int inodeColumn(String header, String table) {
    String[] h = header.trim().split("\\s+");
    for (int i = 0; i < h.length; i++) {
      if (h[i].equalsIgnoreCase("inode")) {
        // tcp and udp headers name "tx_queue rx_queue" and "tr tm->when" as one column each
        return table.startsWith("tcp") || table.startsWith("udp") || table.startsWith("raw")
            ? i - 2
            : i;
      }
    }
    return table.equals("unix") ? 6 : 9;
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
