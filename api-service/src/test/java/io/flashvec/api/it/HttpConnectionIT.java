package io.flashvec.api.it;

import static org.assertj.core.api.Assertions.assertThat;

import io.flashvec.testing.Await;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.Socket;
import java.net.SocketException;
import java.net.SocketTimeoutException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * HTTP/1.1 at the edges, over raw sockets against the real server started with short limits:
 * pipelined requests ending in {@code Connection: close}, a client that half-closes after its
 * request, headers or a chunked body that never finish (slowloris), idle connections, and more
 * connections than the server takes. Each case is answered or closed within its timeout, every
 * answered write is applied exactly once, and each refusal is counted in {@code
 * flashvec_http_rejected_total}.
 */
class HttpConnectionIT {

  private static final int MAX_CONNECTIONS = 12;
  private static final long HEADER_TIMEOUT_MS = 1000;
  private static final long BODY_TIMEOUT_MS = 1500;
  private static final long IDLE_TIMEOUT_MS = 2000;

  /** How much later than its timeout the server may close (a loaded 2-core machine). */
  private static final long SLACK_MS = 2500;

  @TempDir static Path tmp;
  private static ServerProcess server;
  private static Http http;

  @BeforeAll
  static void start() {
    server =
        new ServerProcess(
                tmp.resolve("data"),
                tmp.resolve("server.log"),
                "--flashvec.http.header-timeout=" + HEADER_TIMEOUT_MS + "ms",
                "--flashvec.http.body-timeout=" + BODY_TIMEOUT_MS + "ms",
                "--flashvec.http.idle-timeout=" + IDLE_TIMEOUT_MS + "ms",
                "--flashvec.http.max-connections=" + MAX_CONNECTIONS)
            .start();
    http = new Http(server.url());
    assertThat(
            http.put("/collections/c", "{\"vectors\":{\"size\":2,\"distance\":\"Dot\"}}").status())
        .isEqualTo(200);
  }

  @AfterAll
  static void stop() throws IOException {
    if (server != null) {
      server.close();
      // timeouts, refusals and hang-ups are expected here: none is an error or a warning
      String log = Files.readString(tmp.resolve("server.log"), StandardCharsets.UTF_8);
      assertThat(log).doesNotContain(" ERROR ").doesNotContain("Decoding failed");
    }
  }

  @Test
  void pipelinedRequestsEndingWithConnectionCloseAreEachAnsweredInOrderAndAppliedOnce()
      throws Exception {
    long before = count();
    int base = 1000;
    int n = 10;
    StringBuilder all = new StringBuilder();
    for (int i = 0; i < n; i++) {
      // an upsert, then a read of the point it wrote: answers in order show the point's id
      String body = "{\"points\":[{\"id\":" + (base + i) + ",\"vector\":[1," + i + "]}]}";
      all.append(request("PUT", "/collections/c/points?wait=true", body, false));
      all.append(
          request("GET", "/collections/c/points/" + (base + i), null, i == n - 1 /* close */));
    }
    try (Socket s = socket()) {
      s.getOutputStream().write(all.toString().getBytes(StandardCharsets.UTF_8));
      s.getOutputStream().flush();
      InputStream in = s.getInputStream();
      for (int i = 0; i < n; i++) {
        Response upsert = read(in);
        assertThat(upsert.status()).as("upsert %d: %s", i, upsert.body()).isEqualTo(200);
        Response get = read(in);
        assertThat(get.status()).as("get %d: %s", i, get.body()).isEqualTo(200);
        assertThat(get.body()).as("answer %d in order", i).contains("\"id\":" + (base + i));
      }
      assertThat(in.read()).as("closed after the last answer").isEqualTo(-1);
    }
    assertThat(count()).isEqualTo(before + n);
  }

  @Test
  void aClientThatHalfClosesAfterItsRequestGetsTheAnswer() throws Exception {
    long before = count();
    try (Socket s = socket()) {
      s.getOutputStream()
          .write(
              request(
                      "PUT",
                      "/collections/c/points?wait=true",
                      "{\"points\":[{\"id\":2000,\"vector\":[0.5,0.5]}]}",
                      false)
                  .getBytes(StandardCharsets.UTF_8));
      s.shutdownOutput();
      Response r = read(s.getInputStream());
      assertThat(r.status()).as(r.body()).isEqualTo(200);
      assertThat(s.getInputStream().read()).as("closed after the answer").isEqualTo(-1);
    }
    assertThat(count()).isEqualTo(before + 1);
    // half-closed with nothing sent: closed at once
    try (Socket s = socket()) {
      s.shutdownOutput();
      assertThat(closedWithin(s, 2000)).isTrue();
    }
  }

  @Test
  void headersThatNeverFinishAreCutOffAfterTheHeaderTimeout() throws Exception {
    double timeouts = rejected("timeout");
    try (Socket s = socket()) {
      OutputStream out = s.getOutputStream();
      out.write("GET /readyz HTTP/1.1\r\nHost: 127.0.0.1\r\n".getBytes(StandardCharsets.US_ASCII));
      out.flush();
      long t0 = System.nanoTime();
      // one header line every 200 ms: an idle timer alone would never fire
      String answer = trickleUntilClosed(s, "X-Slow: y\r\n", HEADER_TIMEOUT_MS + SLACK_MS + 3000);
      long ms = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - t0);
      assertThat(answer).as("the server closed the connection").isNotNull();
      assertThat(ms).isBetween(HEADER_TIMEOUT_MS - 100, HEADER_TIMEOUT_MS + SLACK_MS);
      assertThat(answer).startsWith("HTTP/1.1 408 ");
    }
    assertThat(rejected("timeout")).isGreaterThan(timeouts);
  }

  @Test
  void aChunkedBodyThatNeverEndsIsCutOffAfterTheBodyTimeoutAndNothingIsApplied() throws Exception {
    long before = count();
    try (Socket s = socket()) {
      OutputStream out = s.getOutputStream();
      out.write(
          ("PUT /collections/c/points?wait=true HTTP/1.1\r\nHost: 127.0.0.1\r\n"
                  + "Content-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\n")
              .getBytes(StandardCharsets.US_ASCII));
      String part = "{\"points\":[{\"id\":3000,\"vector\":[1,1]}";
      out.write(
          (Integer.toHexString(part.length()) + "\r\n" + part + "\r\n")
              .getBytes(StandardCharsets.US_ASCII));
      out.flush();
      long t0 = System.nanoTime();
      // a space every 200 ms, each its own chunk: data keeps coming, the body never ends
      String answer = trickleUntilClosed(s, "1\r\n \r\n", BODY_TIMEOUT_MS + SLACK_MS + 3000);
      long ms = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - t0);
      assertThat(answer).as("the server closed the connection").isNotNull();
      assertThat(ms).isBetween(BODY_TIMEOUT_MS - 100, BODY_TIMEOUT_MS + SLACK_MS);
      assertThat(answer).startsWith("HTTP/1.1 408 ");
    }
    assertThat(count()).isEqualTo(before);
  }

  @Test
  void idleConnectionsAreClosedAfterTheIdleTimeout() throws Exception {
    try (Socket s = socket()) {
      long t0 = System.nanoTime();
      assertThat(closedWithin(s, IDLE_TIMEOUT_MS + SLACK_MS)).as("never sent a byte").isTrue();
      assertThat(TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - t0))
          .isGreaterThanOrEqualTo(IDLE_TIMEOUT_MS - 100);
    }
    try (Socket s = socket()) {
      s.getOutputStream()
          .write(request("GET", "/readyz", null, false).getBytes(StandardCharsets.US_ASCII));
      assertThat(read(s.getInputStream()).status()).isEqualTo(200);
      long t0 = System.nanoTime();
      assertThat(closedWithin(s, IDLE_TIMEOUT_MS + SLACK_MS)).as("idle after a request").isTrue();
      assertThat(TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - t0))
          .isGreaterThanOrEqualTo(IDLE_TIMEOUT_MS - 100);
    }
  }

  @Test
  void connectionsBeyondTheLimitAreAnswered503AndClosed() throws Exception {
    double refused = rejected("too_many_connections");
    List<Socket> open = new ArrayList<>();
    try {
      Response refusal = null;
      for (int i = 0; i < MAX_CONNECTIONS + 5 && refusal == null; i++) {
        Socket s = socket();
        open.add(s);
        s.getOutputStream()
            .write(request("GET", "/readyz", null, false).getBytes(StandardCharsets.US_ASCII));
        Response r = read(s.getInputStream());
        if (r.status() == 503) {
          refusal = r;
          assertThat(s.getInputStream().read()).as("closed after the 503").isEqualTo(-1);
        } else {
          assertThat(r.status()).isEqualTo(200);
        }
      }
      assertThat(refusal).as("a connection beyond %d was refused", MAX_CONNECTIONS).isNotNull();
      assertThat(refusal.body())
          .contains(
              "Service unavailable: too many open connections [max-connections="
                  + MAX_CONNECTIONS
                  + "]");
      // other tests' and the test client's connections may hold some of the places
      assertThat(open.size() - 1).isBetween(MAX_CONNECTIONS - 4, MAX_CONNECTIONS);
      // a place freed is a place taken
      open.removeFirst().close();
      Await.until(
          Duration.ofSeconds(5),
          "served after a connection closed",
          () -> {
            try (Socket s = socket()) {
              s.getOutputStream()
                  .write(request("GET", "/readyz", null, true).getBytes(StandardCharsets.US_ASCII));
              return read(s.getInputStream()).status() == 200;
            }
          });
    } finally {
      for (Socket s : open) {
        s.close();
      }
    }
    assertThat(rejected("too_many_connections")).isGreaterThan(refused);
  }

  // ------------------------------------------------------------------------------------------

  private static Socket socket() throws IOException {
    Socket s = new Socket("127.0.0.1", server.port());
    s.setTcpNoDelay(true);
    s.setSoTimeout(15_000); // an answer that never comes fails the test, not the build
    return s;
  }

  private static String request(String method, String path, String body, boolean close) {
    byte[] b = body == null ? new byte[0] : body.getBytes(StandardCharsets.UTF_8);
    return method
        + " "
        + path
        + " HTTP/1.1\r\nHost: 127.0.0.1\r\n"
        + (body == null ? "" : "Content-Type: application/json\r\nContent-Length: " + b.length)
        + (body == null ? "" : "\r\n")
        + (close ? "Connection: close\r\n" : "")
        + "\r\n"
        + (body == null ? "" : body);
  }

  /**
   * Sends {@code piece} every 200 ms until the server closes the connection; returns what it sent
   * before closing ({@code ""} for nothing), or {@code null} if it was still open after {@code
   * maxMs}.
   */
  private static String trickleUntilClosed(Socket s, String piece, long maxMs) throws Exception {
    long deadline = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(maxMs);
    ByteArrayOutputStream got = new ByteArrayOutputStream();
    s.setSoTimeout(200);
    InputStream in = s.getInputStream();
    byte[] buf = new byte[4096];
    while (System.nanoTime() < deadline) {
      try {
        int n = in.read(buf);
        if (n < 0) {
          return got.toString(StandardCharsets.UTF_8);
        }
        got.write(buf, 0, n);
        continue;
      } catch (SocketTimeoutException e) {
        // still open
      } catch (SocketException e) {
        return got.toString(StandardCharsets.UTF_8); // reset
      }
      try {
        s.getOutputStream().write(piece.getBytes(StandardCharsets.US_ASCII));
        s.getOutputStream().flush();
      } catch (SocketException e) {
        return got.toString(StandardCharsets.UTF_8);
      }
    }
    return null;
  }

  /** Whether the server closes {@code s} within {@code ms} (reading and dropping what it sends). */
  private static boolean closedWithin(Socket s, long ms) throws IOException {
    long deadline = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(ms);
    InputStream in = s.getInputStream();
    while (System.nanoTime() < deadline) {
      s.setSoTimeout(
          (int) Math.max(1, TimeUnit.NANOSECONDS.toMillis(deadline - System.nanoTime())));
      try {
        if (in.read() < 0) {
          return true;
        }
      } catch (SocketTimeoutException e) {
        return false;
      } catch (SocketException e) {
        return true;
      }
    }
    return false;
  }

  record Response(int status, String body) {}

  /** Reads one response (Content-Length or chunked body). */
  private static Response read(InputStream in) throws IOException {
    String statusLine = line(in);
    int status = Integer.parseInt(statusLine.split(" ")[1]);
    int length = 0;
    boolean chunked = false;
    for (String h = line(in); !h.isEmpty(); h = line(in)) {
      String lower = h.toLowerCase(Locale.ROOT);
      if (lower.startsWith("content-length:")) {
        length = Integer.parseInt(h.substring(15).trim());
      } else if (lower.startsWith("transfer-encoding:") && lower.contains("chunked")) {
        chunked = true;
      }
    }
    ByteArrayOutputStream body = new ByteArrayOutputStream();
    if (chunked) {
      for (int size = Integer.parseInt(line(in).trim(), 16);
          size > 0;
          size = Integer.parseInt(line(in).trim(), 16)) {
        body.write(in.readNBytes(size));
        line(in);
      }
      line(in);
    } else {
      body.write(in.readNBytes(length));
    }
    return new Response(status, body.toString(StandardCharsets.UTF_8));
  }

  private static String line(InputStream in) throws IOException {
    ByteArrayOutputStream b = new ByteArrayOutputStream();
    for (int c = in.read(); c != '\n'; c = in.read()) {
      if (c < 0) {
        throw new IOException("connection closed mid-response");
      }
      if (c != '\r') {
        b.write(c);
      }
    }
    return b.toString(StandardCharsets.US_ASCII);
  }

  private static long count() {
    return http.post("/collections/c/points/count", "{\"exact\":true}")
        .result()
        .get("count")
        .asLong();
  }

  private static final Pattern METRIC =
      Pattern.compile(
          "flashvec_http_rejected_total\\{[^}]*reason=\"([a-z_]+)\"[^}]*} ([0-9.eE+]+)");

  /** {@code flashvec_http_rejected_total{reason=…}} now (0 before the first). */
  private static double rejected(String reason) {
    Matcher m = METRIC.matcher(http.get("/metrics").raw());
    while (m.find()) {
      if (m.group(1).equals(reason)) {
        return Double.parseDouble(m.group(2));
      }
    }
    return 0;
  }
}
