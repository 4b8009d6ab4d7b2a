package io.flashvec.loadgen.metrics;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** Reading {@code /proc/<pid>/io} and the server process's reads beside its own count. */
class ProcessIoTest {
  @TempDir Path dir;

  /** A server's /proc/<pid>/io as Linux writes it. */
  static final String IO =
      """
      rchar: 2119447553
      wchar: 48301262
      syscr: 277312
      syscw: 9436
      read_bytes: 741318656
      write_bytes: 52985856
      cancelled_write_bytes: 0
      """;

  @Test
  void readsReadBytesOfAProcess() throws Exception {
    Files.createDirectories(dir.resolve("4242"));
    Files.writeString(dir.resolve("4242/io"), IO);

    ProcessIo p = ProcessIo.of(4242, dir);

    assertThat(p.pid()).isEqualTo(4242);
    assertThat(p.sample().readBytes()).isEqualTo(741318656L);
    // this JVM's own file, where the kernel has one
    Path self = Path.of("/proc/self/io");
    if (Files.isReadable(self)) {
      assertThat(ProcessIo.parseReadBytes(Files.readString(self), self)).isNotNegative();
    }
  }

  @Test
  void aMissingProcessOrFieldIsRefusedNamingIt() throws Exception {
    assertThatThrownBy(() -> ProcessIo.of(4243, dir))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessage(
            "cannot read the I/O counters of a process (is it running, and are we permitted?)"
                + " [server-pid=4243, file="
                + dir.resolve("4243/io")
                + "]");
    assertThatThrownBy(() -> ProcessIo.of(0, dir)).hasMessage("not a process id [server-pid=0]");
    Path f = dir.resolve("io");
    assertThatThrownBy(() -> ProcessIo.parseReadBytes("rchar: 1\nwchar: 2\n", f))
        .hasMessage("no read_bytes in a /proc/<pid>/io file [file=" + f + "]");
    assertThatThrownBy(() -> ProcessIo.parseReadBytes("read_bytes: lots\n", f))
        .hasMessage("not a /proc/<pid>/io read_bytes line [file=" + f + ", line=read_bytes: lots]");
  }

  @Test
  void derivesTheProcesssReadsPerQueryAndTheRatioToItsOwnCount() {
    ProcessIo.Sample before = new ProcessIo.Sample(1_000_000, 0);
    ProcessIo.Sample after = new ProcessIo.Sample(1_000_000 + 409_600_000L, 4_000_000_000L);

    Map<String, Double> d =
        ProcessIo.derive(before, after, 2_000, Map.of("bytes_read_per_query", 163_840.0));

    assertThat(d.get("process_read_mb_per_s")).isEqualTo(102.4);
    assertThat(d.get("process_read_bytes_per_query")).isEqualTo(204_800.0);
    assertThat(d.get("process_pages_per_query")).isEqualTo(50.0);
    assertThat(d.get("process_to_server_bytes")).isEqualTo(1.25);

    assertThat(ProcessIo.derive(before, after, 0, Map.of()))
        .containsOnlyKeys("process_read_mb_per_s");
    // another process took the id: its counters start again
    assertThat(ProcessIo.derive(after, before, 10, Map.of())).isEmpty();
  }
}
