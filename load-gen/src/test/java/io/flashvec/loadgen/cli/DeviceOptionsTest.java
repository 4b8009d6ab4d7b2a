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
    DeviceOptions.describe(meta, d);
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
    DeviceOptions.describe(meta, null);
    assertThat(meta).isEmpty();
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
