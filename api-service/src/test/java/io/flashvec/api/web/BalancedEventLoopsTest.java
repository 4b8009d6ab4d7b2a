package io.flashvec.api.web;

import static org.assertj.core.api.Assertions.assertThat;

import io.flashvec.testing.Await;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import org.junit.jupiter.api.Test;
import reactor.core.publisher.Mono;
import reactor.netty.DisposableServer;
import reactor.netty.http.server.HttpServer;

class BalancedEventLoopsTest {

  /**
   * Long-lived connections each get a loop of their own, though short-lived ones come and go
   * between them (round-robin would put the fourth long-lived connection on the first one's loop).
   */
  @Test
  void longLivedConnectionsSpreadOverTheLoopsWhateverComesBetween() throws Exception {
    try (BalancedEventLoops loops = new BalancedEventLoops(4)) {
      HttpServer http =
          HttpServer.create()
              .host("127.0.0.1")
              .port(0)
              .runOn(loops.loopResources())
              .handle((req, res) -> res.sendString(Mono.just("ok")));
      DisposableServer server = loops.customizer().apply(http).bindNow();
      List<Socket> open = new ArrayList<>();
      try {
        for (int i = 0; i < 4; i++) {
          open.add(connect(server));
          awaitOpen(loops, i + 1);
          Socket brief = connect(server); // a health check or a metrics scrape
          awaitOpen(loops, i + 2);
          brief.close();
          awaitOpen(loops, i + 1);
        }
        int[] perLoop = loops.openConnections();
        System.out.println("[flashvec] connections per event loop: " + Arrays.toString(perLoop));
        assertThat(perLoop).containsOnly(1);
        // a fifth shares a loop with one of them, not with a loop that already has two
        open.add(connect(server));
        awaitOpen(loops, 5);
        assertThat(Arrays.stream(loops.openConnections()).max().orElseThrow()).isEqualTo(2);
      } finally {
        for (Socket s : open) {
          s.close();
        }
        server.disposeNow();
      }
    }
  }

  private static Socket connect(DisposableServer server) throws Exception {
    Socket s = new Socket();
    s.connect(new InetSocketAddress("127.0.0.1", server.port()), 5_000);
    return s;
  }

  private static void awaitOpen(BalancedEventLoops loops, int n) {
    Await.until(
        Duration.ofSeconds(5),
        n + " connections open",
        () -> Arrays.stream(loops.openConnections()).sum() == n);
  }
}
