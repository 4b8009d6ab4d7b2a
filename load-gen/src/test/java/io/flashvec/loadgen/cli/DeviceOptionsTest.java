package io.flashvec.loadgen.cli;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.flashvec.loadgen.metrics.BlockDevice;
import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.LinkedHashMap;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** Choosing the device from the options, against a fake sysfs. */
class DeviceOptionsTest {
  @TempDir Path dir;
  final ByteArrayOutputStream bytes = new ByteArrayOutputStream();
  final PrintStream log = new PrintStream(bytes, true, StandardCharsets.UTF_8);

  private static DeviceOptions options(String device, String path) {
    DeviceOptions o = new DeviceOptions();
    o.device = device;
    o.devicePath = Path.of(path);
    return o;
  }

  private Path sys() throws Exception {
    Path sys = dir.resolve("sys");
    Path disk = Files.createDirectories(sys.resolve("devices/virtual/block/vdz"));
    Files.writeString(disk.resolve("stat"), "1 0 8 1 0 0 0 0 0 1 1\n");
    Files.createDirectories(sys.resolve("class/block"));
    Files.createSymbolicLink(sys.resolve("class/block/vdz"), disk);
    return sys;
  }

  private String logged() {
    return bytes.toString(StandardCharsets.UTF_8);
  }

  @Test
  void aNamedDeviceIsChosenAndSaysWhoseReadsItCounts() throws Exception {
    Path sys = sys();

    BlockDevice d = options("vdz", ".").open(log, sys);

    assertThat(d.name()).isEqualTo("vdz");
    assertThat(logged())
        .startsWith("device counters: vdz (")
        .contains("they include every process on this machine");
    Map<String, Object> meta = new LinkedHashMap<>();
    options("vdz", ".").describe(meta, d);
    assertThat(meta.get("device").toString()).contains("name=vdz").contains("every process");
  }

  @Test
  void aMissingDeviceIsSaidOnceAndTheRunCarriesOnWithout() throws Exception {
    Path sys = sys();

    assertThat(options("nvme9n9", ".").open(log, sys)).isNull();

    assertThat(logged())
        .isEqualTo(
            "device counters: none, carrying on without them: no such block device"
                + " [device=nvme9n9, sysfs="
                + sys.resolve("class/block/nvme9n9")
                + "]"
                + System.lineSeparator());
    Map<String, Object> meta = new LinkedHashMap<>();
    options("vdz", ".").describe(meta, null);
    assertThat(meta).isEmpty();
  }

  static final String FIO =
      """
      {"device": "vdz", "dir": "/data", "size": "2G", "runtime_s": 20, "ioengine": "libaio",
       "block_bytes": 4096,
       "qd1": {"iops": 18034.5, "mb_per_s": 73.87, "lat_mean_us": 55.2},
       "qd32": {"iops": 59258.0, "mb_per_s": 242.73, "lat_mean_us": 541.9}}
      """;

  @Test
  void aFioResultGivesTheReferenceIopsAndIsRecorded() throws Exception {
    Path sys = sys();
    Path fio = Files.writeString(dir.resolve("fio.json"), FIO);
    DeviceOptions o = options("vdz", ".");
    o.fio = fio;

    BlockDevice d = o.open(log, sys);

    assertThat(o.referenceIops()).isEqualTo(59258.0);
    assertThat(logged()).doesNotContain("another device");
    Map<String, Object> meta = new LinkedHashMap<>();
    o.describe(meta, d);
    assertThat(meta.get("fio").toString()).contains("qd32={iops=59258.0");

    DeviceOptions other = options("vdz", ".");
    other.fio = Files.writeString(dir.resolve("other.json"), FIO.replace("\"vdz\"", "\"sda\""));
    other.open(log, sys);
    assertThat(logged())
        .contains("note: the fio result was measured on another device [fio=sda, device=vdz]");
  }

  @Test
  void aFioResultWithoutQd32IopsOrWithoutDeviceIsRefused() throws Exception {
    Path sys = sys();
    DeviceOptions noDevice = options("none", ".");
    noDevice.fio = dir.resolve("fio.json");
    assertThatThrownBy(() -> noDevice.open(log, sys))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessage("--fio needs --device [fio=" + dir.resolve("fio.json") + "]");

    Path qd1Only = Files.writeString(dir.resolve("qd1.json"), "{\"qd1\": {\"iops\": 100}}");
    assertThatThrownBy(() -> DeviceOptions.readFio(qd1Only))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessage(
            "the fio result has no qd32.iops above 0 (write it with scripts/bench/fio-randread.sh)"
                + " [file="
                + qd1Only
                + ", qd32.iops=missing]");
    Path zero = Files.writeString(dir.resolve("zero.json"), "{\"qd32\": {\"iops\": 0}}");
    assertThatThrownBy(() -> DeviceOptions.readFio(zero)).hasMessageEndingWith("qd32.iops=0]");
    Path text = Files.writeString(dir.resolve("text.json"), "IOPS=59k");
    assertThatThrownBy(() -> DeviceOptions.readFio(text))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageStartingWith("the fio result is not JSON [file=" + text);
  }

  @Test
  void aServerPidNeedsADeviceAndAReadableProcess() throws Exception {
    Path sys = sys();
    Path proc = Files.createDirectories(dir.resolve("proc/77"));
    Files.writeString(proc.resolve("io"), "rchar: 1\nread_bytes: 8192\n");
    DeviceOptions o = options("vdz", ".");
    o.serverPid = 77L;

    BlockDevice d = o.open(log, sys, dir.resolve("proc"));

    assertThat(o.process().pid()).isEqualTo(77);
    Map<String, Object> meta = new LinkedHashMap<>();
    o.describe(meta, d);
    assertThat(meta.get("device").toString()).contains("server_pid=77");

    DeviceOptions gone = options("vdz", ".");
    gone.serverPid = 78L;
    assertThatThrownBy(() -> gone.open(log, sys, dir.resolve("proc")))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageStartingWith("cannot read the I/O counters of a process");
    DeviceOptions noDevice = options("none", ".");
    noDevice.serverPid = 77L;
    assertThatThrownBy(() -> noDevice.open(log, sys, dir.resolve("proc")))
        .hasMessage("--server-pid needs --device [server-pid=77]");
  }

  @Test
  void noneSamplesNothingAndADevicePathNeedsAuto() throws Exception {
    Path sys = sys();

    assertThat(options("none", ".").open(log, sys)).isNull();
    assertThat(logged()).isEmpty();
    assertThatThrownBy(() -> options("none", "/data").open(log, sys))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessage("--device-path needs --device auto [device-path=/data]");
    assertThatThrownBy(() -> options("vdz", "/data").open(log, sys))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessage("--device-path needs --device auto [device=vdz, device-path=/data]");
  }
}
