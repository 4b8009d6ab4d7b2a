package io.flashvec.loadgen.cli;

import java.io.IOException;
import java.io.PrintStream;
import java.nio.file.Files;
import java.nio.file.Path;

/** Drops the Linux page cache so the next point starts cold (BENCHMARKS.md, "Rules"). */
final class PageCache {
  private PageCache() {}

  /** {@code sync}, then {@code echo 1 > /proc/sys/vm/drop_caches}; logs and goes on on failure. */
  static void drop(PrintStream log) {
    try {
      new ProcessBuilder("sync").inheritIO().start().waitFor();
      Files.writeString(Path.of("/proc/sys/vm/drop_caches"), "1");
    } catch (IOException e) {
      log.printf("could not drop the page cache, the point runs warm [error=%s]%n", e.getMessage());
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new IllegalStateException("interrupted while dropping the page cache", e);
    }
  }
}
