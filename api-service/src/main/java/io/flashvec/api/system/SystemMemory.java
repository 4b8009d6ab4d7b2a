package io.flashvec.api.system;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;

/**
 * The memory budget a server gets when {@code flashvec.memory.budget} is not set: the memory limit
 * of its cgroup (a container's limit, or a {@code memory.max} set around the process), else half of
 * the machine's RAM. Reads {@code /proc} and {@code /sys/fs/cgroup} (v1 and v2); the nearest
 * ancestor's limit counts as well, since the kernel enforces every limit up the hierarchy.
 */
final class SystemMemory {

  /** cgroup v1 writes a number near {@code Long.MAX_VALUE} (page-aligned) for "no limit". */
  private static final long UNLIMITED = 1L << 62;

  private SystemMemory() {}

  /** The default budget in bytes: the cgroup limit if below the RAM, else half of the RAM. */
  static long defaultBudget() {
    long ram = physicalBytes();
    long cgroup = cgroupLimit(Path.of("/proc/self/cgroup"), Path.of("/sys/fs/cgroup"));
    return cgroup > 0 && cgroup < ram ? cgroup : ram / 2;
  }

  /** Where the default came from, for the start-up log. */
  static String describeDefault() {
    long ram = physicalBytes();
    long cgroup = cgroupLimit(Path.of("/proc/self/cgroup"), Path.of("/sys/fs/cgroup"));
    return cgroup > 0 && cgroup < ram
        ? "the cgroup memory limit (" + cgroup + " bytes)"
        : "half of the RAM (" + ram + " bytes)";
  }

  /** The machine's RAM (not a container's view of it). */
  static long physicalBytes() {
    try {
      for (String line : Files.readAllLines(Path.of("/proc/meminfo"))) {
        if (line.startsWith("MemTotal:")) {
          return Long.parseLong(line.replaceAll("[^0-9]", "")) * 1024;
        }
      }
    } catch (IOException | NumberFormatException e) {
      // not Linux: the JVM's default heap is a quarter of the RAM it sees
    }
    return 4 * Runtime.getRuntime().maxMemory();
  }

  /**
   * The smallest memory limit on the way from this process's cgroup up to the root, in bytes; 0 if
   * none is set or the files cannot be read.
   *
   * @param procCgroup {@code /proc/self/cgroup}
   * @param root the cgroup file system's mount, {@code /sys/fs/cgroup}
   */
  static long cgroupLimit(Path procCgroup, Path root) {
    List<String> lines;
    try {
      lines = Files.readAllLines(procCgroup);
    } catch (IOException e) {
      return 0;
    }
    long best = 0;
    for (String line : lines) {
      String[] f = line.split(":", 3);
      if (f.length < 3) {
        continue;
      }
      if (f[0].equals("0") && f[1].isEmpty() && Files.exists(root.resolve("cgroup.controllers"))) {
        best = smaller(best, walk(root, f[2], "memory.max"));
      } else if (List.of(f[1].split(",")).contains("memory")) {
        best = smaller(best, walk(root.resolve("memory"), f[2], "memory.limit_in_bytes"));
      }
    }
    return best;
  }

  /**
   * The smallest limit in {@code file} of {@code base/path} and its ancestors up to {@code base}.
   */
  private static long walk(Path base, String path, String file) {
    long best = 0;
    Path dir = base.resolve(path.startsWith("/") ? path.substring(1) : path).normalize();
    while (dir != null && dir.startsWith(base)) {
      best = smaller(best, read(dir.resolve(file)));
      dir = dir.equals(base) ? null : dir.getParent();
    }
    return best;
  }

  private static long read(Path file) {
    try {
      String v = Files.readString(file).trim();
      if (v.equals("max")) {
        return 0;
      }
      long n = Long.parseLong(v);
      return n >= UNLIMITED ? 0 : n;
    } catch (IOException | NumberFormatException e) {
      return 0;
    }
  }

  private static long smaller(long a, long b) {
    return a == 0 ? b : b == 0 ? a : Math.min(a, b);
  }
}
