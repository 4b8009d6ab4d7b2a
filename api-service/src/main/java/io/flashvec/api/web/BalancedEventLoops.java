package io.flashvec.api.web;

import io.netty.channel.EventLoopGroup;
import io.netty.channel.IoHandlerFactory;
import io.netty.channel.MultiThreadIoEventLoopGroup;
import io.netty.channel.epoll.Epoll;
import io.netty.channel.epoll.EpollIoHandler;
import io.netty.channel.nio.NioIoHandler;
import io.netty.util.concurrent.DefaultThreadFactory;
import io.netty.util.concurrent.EventExecutor;
import io.netty.util.concurrent.EventExecutorChooserFactory;
import io.netty.util.concurrent.ThreadPerTaskExecutor;
import java.util.IdentityHashMap;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.springframework.boot.reactor.netty.NettyServerCustomizer;
import reactor.netty.resources.LoopResources;

/**
 * The HTTP server's event loops, each new connection placed on the loop that serves the fewest open
 * connections (Netty deals them out round-robin).
 *
 * <p>Why: a search served from memory runs on the event loop that read it (ADR 0015), so two
 * connections on one loop take turns while another loop idles. Round-robin placement does that
 * easily: short-lived connections (a health check, a metrics scrape) shift the count between the
 * long-lived ones, and a client's connection pool may hold any of them. Measured beside 1,000
 * inserts/s (2 query clients, 1 inserting, 4 loops on 2 cores), two query connections shared a loop
 * and the machine idled 17–21% of the time. With fewest-connections placement, as many long-lived
 * connections as there are loops each get their own.
 *
 * <p>Counts are kept as channels are initialised (incremented when a connection opens on a loop,
 * decremented when it closes); a tie goes to the loop after the previous choice, so connections
 * accepted faster than they register still spread out.
 */
public final class BalancedEventLoops implements AutoCloseable {

  private final EventLoopGroup group;
  private final Map<EventExecutor, AtomicInteger> open = new IdentityHashMap<>();

  /** {@code threads} event loops (epoll where available, else NIO), daemon threads. */
  public BalancedEventLoops(int threads) {
    boolean epoll = Epoll.isAvailable();
    IoHandlerFactory io = epoll ? EpollIoHandler.newFactory() : NioIoHandler.newFactory();
    this.group =
        new MultiThreadIoEventLoopGroup(
            threads,
            new ThreadPerTaskExecutor(
                new DefaultThreadFactory(
                    epoll ? "flashvec-http-epoll" : "flashvec-http-nio", true)),
            new Chooser(),
            io);
  }

  /** These loops as Reactor Netty resources (for the server and the server select group). */
  public LoopResources loopResources() {
    return useNative -> group;
  }

  /** A customizer that keeps the loops' connection counts. */
  public NettyServerCustomizer customizer() {
    return server ->
        server.doOnChannelInit(
            (observer, channel, remote) -> {
              AtomicInteger n = open.get(channel.eventLoop());
              if (n != null) {
                n.incrementAndGet();
                channel.closeFuture().addListener(f -> n.decrementAndGet());
              }
            });
  }

  /** Open connections per loop, in loop order (for tests and diagnostics). */
  int[] openConnections() {
    int[] out = new int[open.size()];
    int i = 0;
    for (EventExecutor e : group) {
      AtomicInteger n = open.get(e);
      out[i++] = n == null ? 0 : n.get();
    }
    return out;
  }

  @Override
  public void close() {
    group.shutdownGracefully(0, 2, TimeUnit.SECONDS);
  }

  private final class Chooser implements EventExecutorChooserFactory {
    @Override
    public EventExecutorChooser newChooser(EventExecutor[] executors) {
      // called once, from the group's constructor, before any connection
      for (EventExecutor e : executors) {
        open.put(e, new AtomicInteger());
      }
      AtomicInteger last = new AtomicInteger(-1);
      return () -> {
        int n = executors.length;
        int start = Math.floorMod(last.get() + 1, n);
        int best = start;
        int fewest = Integer.MAX_VALUE;
        for (int i = 0; i < n; i++) {
          int j = (start + i) % n;
          int c = open.get(executors[j]).get();
          if (c < fewest) {
            best = j;
            fewest = c;
          }
        }
        last.set(best);
        return executors[best];
      };
    }
  }
}
