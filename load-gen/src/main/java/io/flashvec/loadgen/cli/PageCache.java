package io.flashvec.loadgen.cli;

import java.io.IOException;
import java.io.PrintStream;
import java.net.URI;
import java.net.URLEncoder;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Locale;

/** Drops the Linux page cache so the next point starts cold. */
final class PageCache {
  private PageCache() {}

  /** One client for every eviction (--evict-each-query evicts before every query). */
  private static final HttpClient HTTP = HttpClient.newHttpClient();

  /** {@code sync}, then {@code echo 1 > /proc/sys/vm/drop_caches}; logs and goes on on failure. */
  static void drop(PrintStream log) {
    try {
      new ProcessBuilder("sync").inheritIO().start().waitFor();
      Files.writeString(Path.of("/proc/sys/vm/drop_caches"), "1");
    } catch (IOException e) {
      log.printf(
          Locale.ROOT,
          "could not drop the page cache, the point runs warm [error=%s]%n",
          e.getMessage());
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new IllegalStateException("interrupted while dropping the page cache", e);
    }
  }

  /** Asks a FlashVec server to evict a collection's index files; logs and goes on on failure. */
  static void evict(String url, String collection, PrintStream log) {
    try {
      HttpResponse<String> r =
          HTTP.send(
              HttpRequest.newBuilder(
                      URI.create(
                          url.replaceAll("/+$", "")
                              + "/collections/"
                              + URLEncoder.encode(collection, StandardCharsets.UTF_8)
                              + "/evict"))
                  .POST(HttpRequest.BodyPublishers.noBody())
                  .build(),
              HttpResponse.BodyHandlers.ofString());
      if (r.statusCode() != 200) {
        log.printf(
            Locale.ROOT,
            "could not evict, the point runs warm [status=%d, body=%s]%n",
            r.statusCode(),
            r.body());
      }
    } catch (IOException e) {
      log.printf(Locale.ROOT, "could not evict, the point runs warm [error=%s]%n", e.getMessage());
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new IllegalStateException("interrupted while evicting", e);
    }
  }
}
