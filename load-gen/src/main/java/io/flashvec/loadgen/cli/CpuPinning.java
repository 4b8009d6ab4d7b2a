package io.flashvec.loadgen.cli;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.util.concurrent.TimeUnit;
import java.util.regex.Pattern;

/**
 * Pins a process, every thread it has and (by inheritance) every thread it starts later, to a set
 * of CPUs with {@code taskset -a -p -c}: the load generator on cores of its own, so that what a
 * benchmark measures is the server's work and not the client's competing for the same core.
 */
final class CpuPinning {

  /**
   * A taskset CPU list: numbers and ranges, comma-separated ({@code 1}, {@code 0,2}, {@code 2-3}).
   */
  private static final Pattern LIST = Pattern.compile("\\d+(-\\d+)?(,\\d+(-\\d+)?)*");

  private CpuPinning() {}

  /** Pins the running process to {@code cpus}. */
  static void pinSelf(String cpus) {
    pin(ProcessHandle.current().pid(), cpus);
  }

  /**
   * Pins process {@code pid} to {@code cpus}.
   *
   * @throws IllegalArgumentException when {@code cpus} is not a CPU list, or taskset refuses it (a
   *     CPU this machine does not have)
   * @throws IllegalStateException when taskset cannot be run
   */
  static void pin(long pid, String cpus) {
    if (cpus == null || !LIST.matcher(cpus).matches()) {
      throw new IllegalArgumentException(
          "--cpus must be a CPU list such as 1, 0,2 or 2-3 [cpus=" + cpus + "]");
    }
    Process p;
    try {
      p =
          new ProcessBuilder("taskset", "-a", "-p", "-c", cpus, Long.toString(pid))
              .redirectErrorStream(true)
              .start();
    } catch (IOException e) {
      throw new IllegalStateException("cannot run taskset to pin to CPUs [cpus=" + cpus + "]", e);
    }
    try {
      String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8).trim();
      if (!p.waitFor(30, TimeUnit.SECONDS)) {
        p.destroy();
        throw new IllegalStateException("taskset did not finish [cpus=" + cpus + "]");
      }
      if (p.exitValue() != 0) {
        throw new IllegalArgumentException(
            "cannot pin to CPUs [cpus=" + cpus + ", taskset: " + lastLine(out) + "]");
      }
    } catch (IOException e) {
      throw new IllegalStateException("cannot read taskset's output [cpus=" + cpus + "]", e);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new IllegalStateException("interrupted while pinning to CPUs [cpus=" + cpus + "]", e);
    }
  }

  private static String lastLine(String s) {
    int i = s.lastIndexOf('\n');
    return i < 0 ? s : s.substring(i + 1);
  }
}
