package io.flashvec.loadgen.cli;

import io.flashvec.loadgen.internal.Json;
import io.flashvec.loadgen.metrics.BlockDevice;
import io.flashvec.loadgen.metrics.ProcessIo;
import java.io.IOException;
import java.io.PrintStream;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.LinkedHashMap;
import java.util.Locale;
import java.util.Map;
import picocli.CommandLine.Option;
import tools.jackson.core.JacksonException;
import tools.jackson.databind.JsonNode;

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

  @Option(
      names = "--fio",
      paramLabel = "FILE",
      description =
          "The disk's own speed, measured in the same run by scripts/bench/fio-randread.sh (its"
              + " JSON output): recorded in the result, and each level's device reads/s is given as"
              + " a share of its 4 KiB random-read IOPS at queue depth 32. Needs --device.")
  Path fio;

  @Option(
      names = "--server-pid",
      paramLabel = "PID",
      description =
          "With --device: also read this server process's own storage reads (/proc/PID/io"
              + " read_bytes: its reads and page faults, with readahead) and report them beside the"
              + " device's, which include every process, and the server's own count.")
  Long serverPid;

  /** The fio result read by {@link #open}, or null. */
  private Map<String, Object> fioResult;

  /** The server process opened by {@link #open}, or null. */
  private ProcessIo process;

  /** The server process whose reads are sampled, or null; valid after {@link #open}. */
  ProcessIo process() {
    return process;
  }

  /** The QD32 IOPS of the {@code --fio} result, NaN without one; valid after {@link #open}. */
  double referenceIops() {
    if (fioResult == null) {
      return Double.NaN;
    }
    return ((Number) ((Map<?, ?>) fioResult.get("qd32")).get("iops")).doubleValue();
  }

  /** Reads a fio-randread.sh result; it must hold {@code qd32.iops} > 0. */
  static Map<String, Object> readFio(Path file) {
    JsonNode root;
    try {
      root = Json.MAPPER.readTree(Files.readString(file));
    } catch (IOException e) {
      throw new UncheckedIOException("cannot read the fio result [file=" + file + "]", e);
    } catch (JacksonException e) {
      throw new IllegalArgumentException(
          "the fio result is not JSON [file=" + file + ", error=" + e.getOriginalMessage() + "]");
    }
    JsonNode iops = root.path("qd32").path("iops");
    if (!iops.isNumber() || !(iops.asDouble() > 0)) {
      throw new IllegalArgumentException(
          "the fio result has no qd32.iops above 0 (write it with scripts/bench/fio-randread.sh)"
              + " [file="
              + file
              + ", qd32.iops="
              + (iops.isMissingNode() ? "missing" : iops.toString())
              + "]");
    }
    @SuppressWarnings("unchecked")
    Map<String, Object> m = Json.MAPPER.convertValue(root, Map.class);
    return m;
  }

  /** The device chosen, or null (none asked, or not found: said once on {@code log}). */
  BlockDevice open(PrintStream log) {
    return open(log, BlockDevice.SYS, Path.of("/proc"));
  }

  BlockDevice open(PrintStream log, Path sys) {
    return open(log, sys, Path.of("/proc"));
  }

  BlockDevice open(PrintStream log, Path sys, Path proc) {
    if (fio != null && device.equals("none")) {
      throw new IllegalArgumentException("--fio needs --device [fio=" + fio + "]");
    }
    if (serverPid != null && device.equals("none")) {
      throw new IllegalArgumentException(
          "--server-pid needs --device [server-pid=" + serverPid + "]");
    }
    fioResult = fio == null ? null : readFio(fio);
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
    process = serverPid == null ? null : ProcessIo.of(serverPid, proc);
    log.printf(
        Locale.ROOT,
        "device counters: %s (%s%s); %s%n",
        l.device().name(),
        l.device().statFile(),
        device.equals("auto") ? ", holds " + devicePath.toAbsolutePath().normalize() : "",
        NOTE);
    if (fioResult != null && !l.device().name().equals(fioResult.get("device"))) {
      log.printf(
          Locale.ROOT,
          "note: the fio result was measured on another device [fio=%s, device=%s]%n",
          fioResult.get("device"),
          l.device().name());
    }
    return l.device();
  }

  /** Records the device in a result's metadata (when one was sampled). */
  void describe(Map<String, Object> meta, BlockDevice d) {
    if (d != null) {
      Map<String, Object> m = new LinkedHashMap<>();
      m.put("name", d.name());
      m.put("stat", d.statFile().toString());
      m.put("note", NOTE);
      meta.put("device", m);
      if (process != null) {
        m.put("server_pid", process.pid());
      }
      if (fioResult != null) {
        meta.put("fio", fioResult);
      }
    }
  }
}
