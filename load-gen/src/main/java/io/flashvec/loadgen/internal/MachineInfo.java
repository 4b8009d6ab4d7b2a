package io.flashvec.loadgen.internal;

import java.io.IOException;
import java.lang.management.ManagementFactory;
import java.lang.management.OperatingSystemMXBean;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/** Describes the machine the load generator runs on, for the metadata of a result. */
public final class MachineInfo {
  private MachineInfo() {}

  /** cpu model, nproc, memory, OS and JVM; fields that cannot be read are left out. */
  public static Map<String, Object> describe() {
    Map<String, Object> m = new LinkedHashMap<>();
    m.put("cpu_model", cpuModel());
    m.put("nproc", Parallel.defaultThreads());
    long memKb = memTotalKb();
    if (memKb > 0) {
      m.put("mem_total_mb", memKb / 1024);
    }
    OperatingSystemMXBean os = ManagementFactory.getOperatingSystemMXBean();
    m.put("os", os.getName() + " " + os.getVersion());
    m.put("arch", os.getArch());
    m.put("java", ManagementFactory.getRuntimeMXBean().getVmName() + " " + Runtime.version());
    try {
      m.put("host", java.net.InetAddress.getLocalHost().getHostName());
    } catch (IOException e) {
      // host name is decoration only
    }
    return m;
  }

  static String cpuModel() {
    for (String line : lines(Path.of("/proc/cpuinfo"))) {
      if (line.startsWith("model name")) {
        int i = line.indexOf(':');
        return i < 0 ? line : line.substring(i + 1).trim();
      }
    }
    return ManagementFactory.getOperatingSystemMXBean().getArch();
  }

  static long memTotalKb() {
    for (String line : lines(Path.of("/proc/meminfo"))) {
      if (line.startsWith("MemTotal:")) {
        String[] p = line.split("\\s+");
        try {
          return Long.parseLong(p[1]);
        } catch (RuntimeException e) {
          return -1;
        }
      }
    }
    return -1;
  }

  private static List<String> lines(Path p) {
    try {
      return Files.readAllLines(p);
    } catch (IOException | RuntimeException e) {
      return List.of();
    }
  }
}
