package io.flashvec.loadgen.cli;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.assertj.core.api.Assumptions.assumeThat;

import java.nio.file.Files;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;

/** {@code --cpus}: a process is pinned where it is told, and a bad list is refused naming it. */
class CpuPinningTest {

  private static String allowed(long pid) throws Exception {
    for (String line : Files.readAllLines(Path.of("/proc/" + pid + "/status"))) {
      if (line.startsWith("Cpus_allowed_list:")) {
        return line.substring(line.indexOf(':') + 1).trim();
      }
    }
    throw new AssertionError("no Cpus_allowed_list for " + pid);
  }

  private static boolean tasksetRuns() {
    try {
      return new ProcessBuilder("taskset", "-V").start().waitFor() == 0;
    } catch (Exception e) {
      return false;
    }
  }

  @Test
  void pinsAProcessToTheCpusGiven() throws Exception {
    assumeThat(tasksetRuns()).as("taskset is installed").isTrue();
    assumeThat(Files.exists(Path.of("/proc/self/status"))).isTrue();
    Process sleeper = new ProcessBuilder("sleep", "30").start();
    try {
      CpuPinning.pin(sleeper.pid(), "0");
      assertThat(allowed(sleeper.pid())).isEqualTo("0");
    } finally {
      sleeper.destroy();
    }
  }

  @Test
  void aListThatIsNoCpuListIsRefusedNamingIt() {
    for (String bad : new String[] {"", "a", "1,", "-1", "0-", "1;2", "0 1"}) {
      assertThatThrownBy(() -> CpuPinning.pin(ProcessHandle.current().pid(), bad))
          .isInstanceOf(IllegalArgumentException.class)
          .hasMessageContaining("--cpus must be a CPU list")
          .hasMessageContaining("[cpus=" + bad + "]");
    }
  }

  @Test
  void aCpuTheMachineDoesNotHaveIsRefusedNamingIt() throws Exception {
    assumeThat(tasksetRuns()).as("taskset is installed").isTrue();
    Process sleeper = new ProcessBuilder("sleep", "30").start();
    try {
      assertThatThrownBy(() -> CpuPinning.pin(sleeper.pid(), "4095"))
          .isInstanceOf(IllegalArgumentException.class)
          .hasMessageContaining("cannot pin to CPUs [cpus=4095, taskset: ");
    } finally {
      sleeper.destroy();
    }
  }
}
