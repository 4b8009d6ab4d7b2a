package io.flashvec.api.it;

import static org.assertj.core.api.Assertions.assertThat;

import io.flashvec.testing.SuppressForbidden;
import io.flashvec.testing.TestSeeds;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.Locale;
import java.util.Random;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import tools.jackson.databind.JsonNode;

/**
 * Requests on one keep-alive connection, and clients that hang up mid-write, against the real
 * server, over raw sockets so that the connection is the one under test.
 *
 * <p>Found with qdrant-client: a request answered before its body was read (a bad {@code wait}
 * value, a method the route does not take) left the body in the connection, Reactor Netty cancelled
 * the next request on it (its client never got an answer), and that cancellation interrupted the
 * write thread inside the WAL's fsync: the interrupt closed the WAL's channel, and every later
 * write to the collection failed with 500 until a restart.
 */
class ConnectionReuseIT {

  @TempDir Path tmp;

  @Test
  void aRejectedRequestDoesNotBreakTheNextOneOnItsConnectionNorTheCollection() throws Exception {
    try (ServerProcess server =
        new ServerProcess(tmp.resolve("data"), tmp.resolve("server.log")).start()) {
      Http http = new Http(server.url());
      assertThat(
              http.put("/collections/c", "{\"vectors\":{\"size\":4,\"distance\":\"Cosine\"}}")
                  .status())
          .isEqualTo(200);
      String[][] rejected = {
        {"PUT", "/collections/c/points?wait=maybe", "400"},
        {"PATCH", "/collections/c/points?wait=true", "404"},
        {"POST", "/no/such/route", "404"},
        {"PUT", "/collections/nope/points?wait=true", "404"},
        {"PUT", "/collections/c/points?wait=true&bad-dimension", "400"},
      };
      int id = 0;
      try (Socket s = new Socket("127.0.0.1", server.port())) {
        s.setTcpNoDelay(true);
        s.setSoTimeout(15_000); // a request left unanswered fails the test, not the build
        for (int round = 0; round < 30; round++) {
          for (String[] r : rejected) {
            String vector = r[1].endsWith("bad-dimension") ? "[1,0,0]" : "[1,0,0,0]";
            String body =
                "{\"points\":[{\"id\":" + (100_000 + id) + ",\"vector\":" + vector + "}]}";
            assertThat(exchange(s, r[0], r[1], body).status())
                .as("%s %s (round %d)", r[0], r[1], round)
                .isEqualTo(Integer.parseInt(r[2]));
            String ok = "{\"points\":[{\"id\":" + id + ",\"vector\":[1,0,0,0]}]}";
            RawResponse next = exchange(s, "PUT", "/collections/c/points?wait=true", ok);
            assertThat(next.status())
                .as("upsert after %s %s (round %d): %s", r[0], r[1], round, next.body())
                .isEqualTo(200);
            id++;
          }
        }
      }
      assertThat(count(http)).isEqualTo(id);
    }
  }

  @Test
  @SuppressForbidden(
      "a client hangs up 0 to 4 ms after its request: before, during or after the apply")
  void clientsThatHangUpMidWriteLeaveTheCollectionWritable() throws Exception {
    long seed = TestSeeds.seed("ConnectionReuseIT.hangUps");
    Random rnd = new Random(seed);
    try (ServerProcess server =
        new ServerProcess(tmp.resolve("data"), tmp.resolve("server.log")).start()) {
      Http http = new Http(server.url());
      http.put("/collections/c", "{\"vectors\":{\"size\":64,\"distance\":\"Dot\"}}");
      int id = 0;
      for (int round = 0; round < 40; round++) {
        // a batch big enough to be parsed, applied and fsynced while the client goes away
        StringBuilder b = new StringBuilder("{\"points\":[");
        for (int i = 0; i < 500; i++) {
          b.append(i == 0 ? "" : ",").append("{\"id\":").append(1_000_000 + round * 500 + i);
          b.append(",\"vector\":[");
          for (int j = 0; j < 64; j++) {
            b.append(j == 0 ? "" : ",")
                .append(String.format(Locale.ROOT, "%.5f", rnd.nextFloat() - 0.5f));
          }
          b.append("]}");
        }
        b.append("]}");
        try (Socket s = new Socket("127.0.0.1", server.port())) {
          send(s, "PUT", "/collections/c/points?wait=true", b.toString());
          Thread.sleep(rnd.nextInt(5)); // hang up before, during or after the apply
        }
        String ok = "{\"points\":[{\"id\":" + id + ",\"vector\":" + unit(64) + "}]}";
        Http.Response r = http.put("/collections/c/points?wait=true", ok);
        assertThat(r.status()).as("upsert after hang-up %d: %s", round, r.raw()).isEqualTo(200);
        id++;
      }
      // writable and not red (a failed WAL makes it red); yellow while the live graph catches up
      // with the batches is fine: this test is about the connections, not the indexer's pace
      JsonNode info = http.get("/collections/c").result();
      assertThat(info.get("status").asString()).as("%s", info).isIn("green", "yellow");
      assertThat(info.get("optimizer_status").asString()).as("%s", info).isEqualTo("ok");
      assertThat(server.logTail()).doesNotContain("WAL failed");
    }
  }

  private static String unit(int dim) {
    StringBuilder v = new StringBuilder("[1");
    for (int j = 1; j < dim; j++) {
      v.append(",0");
    }
    return v.append(']').toString();
  }

  private static long count(Http http) {
    return http.post("/collections/c/points/count", "{\"exact\":true}")
        .result()
        .get("count")
        .asLong();
  }

  record RawResponse(int status, String body) {}

  @SuppressForbidden("the body follows the head 2 ms later, in a TCP segment of its own")
  private static void send(Socket s, String method, String path, String body) throws IOException {
    byte[] b = body.getBytes(StandardCharsets.UTF_8);
    String head =
        method
            + " "
            + path
            + " HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nContent-Length: "
            + b.length
            + "\r\n\r\n";
    OutputStream out = s.getOutputStream();
    out.write(head.getBytes(StandardCharsets.US_ASCII));
    out.flush();
    // the body in a later segment, as Python's HTTP clients send it: a server that answers from
    // the head alone has the body arrive after its answer
    try {
      Thread.sleep(2);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
    out.write(b);
    out.flush();
  }

  /** Sends a request on {@code s} and reads its response (Content-Length bodies only). */
  private static RawResponse exchange(Socket s, String method, String path, String body)
      throws IOException {
    send(s, method, path, body);
    InputStream in = s.getInputStream();
    String statusLine = line(in);
    int status = Integer.parseInt(statusLine.split(" ")[1]);
    int length = 0;
    for (String h = line(in); !h.isEmpty(); h = line(in)) {
      if (h.toLowerCase(Locale.ROOT).startsWith("content-length:")) {
        length = Integer.parseInt(h.substring(15).trim());
      }
    }
    byte[] b = in.readNBytes(length);
    return new RawResponse(status, new String(b, StandardCharsets.UTF_8));
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
}
