package io.flashvec.loadgen.cli;

import io.flashvec.loadgen.metrics.BlockDevice;
import java.io.PrintStream;
import java.nio.file.Path;
import java.util.LinkedHashMap;
import java.util.Locale;
import java.util.Map;
import picocli.CommandLine.Option;

/** Which block device's counters a sweep samples around each measured window; a picocli mixin. */
public final class DeviceOptions {
  /** What every device figure says about whose reads it counts. */
  static final String NOTE =
      "device counters are the whole device's: they include every process on this machine";

  @Option(
      names = "--device",
      defaultValue = "none",
      paramLabel = "auto|NAME|none",
      description =
          "Sample /sys/block/<dev>/stat before and after each measured point and report the"
              + " device's reads/s, MB/s and 4 KiB pages per query beside the server's own pages"
              + " and bytes per query: auto (the disk holding --device-path), a kernel name (vda,"
              + " nvme0n1; a partition counts on its disk) or none (default: ${DEFAULT-VALUE})."
              + " The load-gen and the server must run on the same machine; the counters include"
              + " every process on it.")
  String device;

  @Option(
      names = "--device-path",
      defaultValue = ".",
      paramLabel = "PATH",
      description =
          "With --device auto: a path on the server's data disk, e.g. its data directory"
              + " (default: the current directory).")
  Path devicePath;

  /** The device chosen, or null (none asked, or not found: said once on {@code log}). */
  BlockDevice open(PrintStream log) {
    return open(log, BlockDevice.SYS);
  }

  BlockDevice open(PrintStream log, Path sys) {
    if (device.equals("none")) {
      if (!devicePath.equals(Path.of("."))) {
        throw new IllegalArgumentException(
            "--device-path needs --device auto [device-path=" + devicePath + "]");
      }
      return null;
    }
    if (!device.equals("auto") && !devicePath.equals(Path.of("."))) {
      throw new IllegalArgumentException(
          "--device-path needs --device auto [device="
              + device
              + ", device-path="
              + devicePath
              + "]");
    }
    BlockDevice.Lookup l = BlockDevice.find(device, devicePath, sys);
    if (l.device() == null) {
      log.println("device counters: none, carrying on without them: " + l.reason());
      return null;
    }
    log.printf(
        Locale.ROOT,
        "device counters: %s (%s%s); %s%n",
        l.device().name(),
        l.device().statFile(),
        device.equals("auto") ? ", holds " + devicePath.toAbsolutePath().normalize() : "",
        NOTE);
    return l.device();
  }

  /** Records the device in a result's metadata (when one was sampled). */
  static void describe(Map<String, Object> meta, BlockDevice d) {
    if (d != null) {
      Map<String, Object> m = new LinkedHashMap<>();
      m.put("name", d.name());
      m.put("stat", d.statFile().toString());
      m.put("note", NOTE);
      meta.put("device", m);
    }
  }
}
