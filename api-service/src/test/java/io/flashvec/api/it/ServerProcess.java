package io.flashvec.api.it;

import io.flashvec.testing.Await;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.ServerSocket;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;

/**
 * A FlashVec server started from the packaged jar as a separate process, bound to 127.0.0.1 on a
 * free port, with its own data directory and a log file. {@link #kill()} sends SIGKILL; {@link
 * #stop()} SIGTERM (graceful).
 */
public final class ServerProcess implements AutoCloseable {

  private final Path dataDir;
  private final Path log;
  private final int port;
  private final List<String> extraArgs;
  private Process process;
  private HttpClient http = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(5)).build();
  private String scheme = "http";
  private String host = "127.0.0.1";
  private List<String> launcher = List.of();
  private List<String> jvmOptions = List.of();
  private boolean quickJit = true;

  /**
   * Binds and talks to {@code host} instead of 127.0.0.1: an address of a network namespace or veth
   * the test created itself (partition tests).
   */
  public ServerProcess withHost(String host) {
    this.host = host;
    return this;
  }

  /**
   * Starts the JVM through {@code launcher}, e.g. {@code ip netns exec NS}; the launcher must exec
   * the command, so that {@link #pid()} and {@link #kill()} reach the JVM itself.
   */
  public ServerProcess withLauncher(String... launcher) {
    this.launcher = List.of(launcher);
    return this;
  }

  /** Extra JVM options, before {@code -jar}. */
  public ServerProcess withJvmOptions(String... options) {
    this.jvmOptions = List.of(options);
    return this;
  }

  /**
   * Runs the server with the optimising compiler (C2) rather than only C1, which the other tests
   * use to start quickly. For a test that waits for CPU-bound work: under C1 the Vector API kernels
   * of the live graph and the builds are not intrinsified and run about twenty times slower (16-d
   * live-graph inserts: ~100/s instead of ~2,000/s), so a wait on them measures the JIT.
   */
  public ServerProcess withOptimizingCompiler() {
    this.quickJit = false;
    return this;
  }

  /** Talks HTTPS to the server (started with {@code --server.ssl.*}), trusting {@code ssl}. */
  public ServerProcess withTls(javax.net.ssl.SSLContext ssl) {
    this.http =
        HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(5)).sslContext(ssl).build();
    this.scheme = "https";
    return this;
  }

  public ServerProcess(Path dataDir, Path log, String... extraArgs) {
    this.dataDir = dataDir;
    this.log = log;
    this.port = freePort();
    this.extraArgs = List.of(extraArgs);
  }

  /** Ports {@link #freePort} handed out in this JVM: the kernel may offer a closed one again. */
  private static final java.util.Set<Integer> HANDED_OUT =
      java.util.concurrent.ConcurrentHashMap.newKeySet();

  /**
   * A loopback port free now and not handed out before in this JVM: a test that takes two (a node's
   * HTTP and gRPC ports) before either is bound must not get the same one twice.
   */
  static int freePort() {
    while (true) {
      try (ServerSocket s = new ServerSocket(0, 1, java.net.InetAddress.getLoopbackAddress())) {
        if (HANDED_OUT.add(s.getLocalPort())) {
          return s.getLocalPort();
        }
      } catch (IOException e) {
        throw new UncheckedIOException(e);
      }
    }
  }

  /** Starts the process and waits until {@code /readyz} answers 200. */
  public ServerProcess start() {
    return start(false);
  }

  /**
   * Starts the process and waits until its recovery finished: {@code /readyz} answers 200, or 503
   * naming the collections that failed to open.
   */
  public ServerProcess startWithFailedCollections() {
    return start(true);
  }

  private ServerProcess start(boolean failedCollectionsAllowed) {
    String jar = System.getProperty("flashvec.server.jar", "target/flashvec.jar");
    if (!Files.exists(Path.of(jar))) {
      throw new IllegalStateException(
          "server jar not found; run `mvn package` first [jar=" + jar + "]");
    }
    List<String> cmd = new ArrayList<>(launcher);
    cmd.add(Path.of(System.getProperty("java.home"), "bin", "java").toString());
    cmd.add("--add-modules");
    cmd.add("jdk.incubator.vector");
    cmd.add("--enable-native-access=ALL-UNNAMED");
    cmd.add("-Xmx512m");
    // The server as ./flashvec run and the image start it: with the bean definitions Spring
    // generated at build time (-Dflashvec.server.aot=false starts it as a plain Spring Boot jar)
    if (Boolean.parseBoolean(System.getProperty("flashvec.server.aot", "true"))) {
      cmd.add("-Dspring.aot.enabled=true");
    }
    if (quickJit) {
      cmd.add("-XX:TieredStopAtLevel=1");
    }
    cmd.addAll(jvmOptions);
    cmd.add("-jar");
    cmd.add(jar);
    cmd.add("--flashvec.port=" + port);
    cmd.add("--flashvec.bind=" + host);
    cmd.add("--flashvec.data-dir=" + dataDir);
    cmd.addAll(extraArgs);
    try {
      ProcessBuilder pb = new ProcessBuilder(cmd).redirectErrorStream(true);
      pb.redirectOutput(ProcessBuilder.Redirect.appendTo(log.toFile()));
      process = pb.start();
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
    try {
      Await.until(
          Duration.ofSeconds(60), "the server is ready", () -> ready(failedCollectionsAllowed));
    } catch (AssertionError e) {
      throw new IllegalStateException("server not ready within 60 s; log:\n" + logTail(), e);
    }
    return this;
  }

  private boolean ready(boolean failedCollectionsAllowed) throws InterruptedException {
    if (!process.isAlive()) {
      throw new IllegalStateException("server exited during start-up; log:\n" + logTail());
    }
    try {
      HttpResponse<String> r =
          http.send(
              HttpRequest.newBuilder(URI.create(url() + "/readyz"))
                  .timeout(Duration.ofSeconds(2))
                  .build(),
              HttpResponse.BodyHandlers.ofString());
      boolean failedCollections =
          r.statusCode() == 503 && r.body().contains("collections failed to open");
      if (r.statusCode() == 200 || (failedCollectionsAllowed && failedCollections)) {
        return true;
      }
      if (failedCollections) {
        throw new IllegalStateException(
            "server recovered, but collections failed to open: "
                + r.body()
                + "; log:\n"
                + logTail());
      }
    } catch (IOException e) {
      // not listening yet
    }
    return false;
  }

  public String url() {
    return scheme + "://" + host + ":" + port;
  }

  public int port() {
    return port;
  }

  public Path dataDir() {
    return dataDir;
  }

  public long pid() {
    return process.pid();
  }

  /** Waits (up to 30 s) for the process to end and returns its exit status. */
  public int exitValue() {
    try {
      if (!process.waitFor(30, TimeUnit.SECONDS)) {
        throw new IllegalStateException("server still running after 30 s [pid=" + pid() + "]");
      }
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new IllegalStateException(e);
    }
    return process.exitValue();
  }

  /** Graceful stop, then start again with the same port, data directory and arguments. */
  public ServerProcess restart() {
    stop();
    return start();
  }

  /** SIGKILL, then wait for the process to be gone. */
  public void kill() {
    if (process != null && process.isAlive()) {
      process.destroyForcibly();
      waitGone();
    }
  }

  /** SIGTERM (graceful shutdown), then wait. */
  public void stop() {
    if (process != null && process.isAlive()) {
      process.destroy();
      waitGone();
    }
  }

  private void waitGone() {
    try {
      if (!process.waitFor(30, TimeUnit.SECONDS)) {
        process.destroyForcibly();
        process.waitFor(10, TimeUnit.SECONDS);
      }
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
  }

  public String logTail() {
    try {
      String s = Files.readString(log, StandardCharsets.UTF_8);
      return s.length() > 8000 ? s.substring(s.length() - 8000) : s;
    } catch (IOException e) {
      return "(no log: " + e + ")";
    }
  }

  @Override
  public void close() {
    kill();
  }
}
