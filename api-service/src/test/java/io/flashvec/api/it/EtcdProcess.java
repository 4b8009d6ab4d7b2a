package io.flashvec.api.it;

import io.flashvec.testing.Await;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.concurrent.TimeUnit;

/**
 * A single-member etcd on 127.0.0.1 with free ports, for cluster tests. {@link #find()} locates
 * Debian's {@code etcd} binary ({@code ./flashvec test} installs {@code etcd-server}).
 */
final class EtcdProcess implements AutoCloseable {

  private Process process;
  private final String url;
  private final ProcessBuilder command;

  private EtcdProcess(Process process, String url, ProcessBuilder command) {
    this.process = process;
    this.url = url;
    this.command = command;
  }

  /** The etcd binary on the PATH or in /usr/bin, or {@code null}. */
  static String find() {
    for (String dir : System.getenv().getOrDefault("PATH", "/usr/bin").split(":")) {
      Path p = Path.of(dir, "etcd");
      if (Files.isExecutable(p)) {
        return p.toString();
      }
    }
    return Files.isExecutable(Path.of("/usr/bin/etcd")) ? "/usr/bin/etcd" : null;
  }

  /** Starts etcd with its data and log under {@code dir} and waits until it is healthy. */
  static EtcdProcess start(String binary, Path dir) throws IOException {
    return start(binary, dir, "127.0.0.1", "it");
  }

  /**
   * Starts etcd listening on {@code host} (127.0.0.1, or an address the test created itself) as
   * member {@code name}, with its data and log under {@code dir}, and waits until it is healthy.
   */
  static EtcdProcess start(String binary, Path dir, String host, String name) throws IOException {
    int client = ServerProcess.freePort();
    int peer = ServerProcess.freePort();
    String url = "http://" + host + ":" + client;
    ProcessBuilder pb =
        new ProcessBuilder(
                binary,
                "--name",
                name,
                "--data-dir",
                dir.resolve("etcd").toString(),
                "--listen-client-urls",
                url,
                "--advertise-client-urls",
                url,
                "--listen-peer-urls",
                "http://127.0.0.1:" + peer,
                "--initial-advertise-peer-urls",
                "http://127.0.0.1:" + peer,
                "--initial-cluster",
                name + "=http://127.0.0.1:" + peer)
            .redirectErrorStream(true)
            .redirectOutput(ProcessBuilder.Redirect.appendTo(dir.resolve("etcd.log").toFile()));
    EtcdProcess e = new EtcdProcess(pb.start(), url, pb);
    e.waitHealthy();
    return e;
  }

  /** The client URL, for {@code --flashvec.cluster.etcd-endpoints}. */
  String url() {
    return url;
  }

  private void waitHealthy() {
    HttpClient c = HttpClient.newHttpClient();
    try {
      Await.until(
          Duration.ofSeconds(30),
          "etcd is healthy",
          () -> {
            try {
              return c.send(
                          HttpRequest.newBuilder(URI.create(url + "/health")).build(),
                          HttpResponse.BodyHandlers.ofString())
                      .statusCode()
                  == 200;
            } catch (IOException e) {
              return false; // not up yet
            }
          });
      return;
    } catch (AssertionError e) {
      // reported below, with the log
    }
    throw new UncheckedIOException(
        new IOException("etcd not healthy within 30 s [url=" + url + "]"));
  }

  /** The process id (for clean-up of a run that was killed). */
  long pid() {
    return process.pid();
  }

  /** Kills etcd (SIGKILL) and waits until it is gone; {@link #restart} brings it back. */
  void kill() {
    close();
  }

  /** Starts etcd again on the same ports and data, and waits until it is healthy. */
  void restart() throws IOException {
    process = command.start();
    waitHealthy();
  }

  @Override
  public void close() {
    process.destroyForcibly();
    try {
      process.waitFor(10, TimeUnit.SECONDS);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
  }
}
