package io.flashvec.api.web;

import io.flashvec.api.FlashVecProperties;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import io.netty.channel.Channel;
import io.netty.channel.ChannelDuplexHandler;
import io.netty.channel.ChannelFutureListener;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInboundHandlerAdapter;
import io.netty.channel.ChannelOption;
import io.netty.channel.ChannelPipeline;
import io.netty.channel.ChannelPromise;
import io.netty.channel.socket.ChannelInputShutdownEvent;
import io.netty.channel.socket.DuplexChannel;
import io.netty.handler.codec.PrematureChannelClosureException;
import io.netty.handler.codec.http.DefaultFullHttpResponse;
import io.netty.handler.codec.http.FullHttpResponse;
import io.netty.handler.codec.http.HttpHeaderNames;
import io.netty.handler.codec.http.HttpHeaderValues;
import io.netty.handler.codec.http.HttpRequest;
import io.netty.handler.codec.http.HttpResponse;
import io.netty.handler.codec.http.HttpResponseStatus;
import io.netty.handler.codec.http.HttpStatusClass;
import io.netty.handler.codec.http.HttpUtil;
import io.netty.handler.codec.http.HttpVersion;
import io.netty.handler.codec.http.LastHttpContent;
import io.netty.util.ReferenceCountUtil;
import io.netty.util.concurrent.ScheduledFuture;
import java.nio.charset.StandardCharsets;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.springframework.boot.reactor.netty.NettyServerCustomizer;
import reactor.netty.NettyPipeline;
import tools.jackson.databind.node.ObjectNode;

/**
 * Keeps slow, idle and greedy clients from holding the REST server's connections: header, body and
 * idle timeouts, a cap on open connections and on pipelined requests, and HTTP/1.1's edge cases
 * that Reactor Netty gets wrong (settings: {@link FlashVecProperties.Http}).
 *
 * <ul>
 *   <li><b>Header timeout.</b> From the first byte of a request to the end of its headers. A client
 *       that sends a header line every few seconds never lets a read-idle timer fire; this one
 *       counts from the first byte. Answered 408, then closed.
 *   <li><b>Body timeout.</b> From the end of the headers to the end of the body, chunked or not, so
 *       a body that trickles or never ends is dropped. Answered 408 (unless an answer to the
 *       request has begun), then closed; the request's handler sees the connection go.
 *   <li><b>Idle timeout.</b> A connection with no request in progress and no answer owed is closed
 *       quietly.
 *   <li><b>Max connections.</b> One more is answered 503 and closed (its bytes are read and dropped
 *       for a moment first, so the client reads the 503 instead of a reset).
 *   <li><b>Pipelining and {@code Connection: close}.</b> Reactor Netty marks the connection
 *       non-persistent when a pipelined request that asks to close is <em>read</em>, so the answer
 *       to the first request closed the connection and the rest were never answered nor run. Here
 *       such a request is passed on as keep-alive, its answer is marked {@code Connection: close}
 *       and the connection closes after it: every request is answered in order, and nothing after
 *       it runs. A client that pipelines more than {@code max-pipelined-requests} gets the answers
 *       owed, then the connection closes; the rest are not run.
 *   <li><b>Half-close.</b> A client that shuts its side down after a complete request (the
 *       connection is half-closed: {@code ALLOW_HALF_CLOSURE}) still gets the answers it is owed,
 *       then the connection closes. Netty used to close at the end of input, so the request ran and
 *       its answer was lost.
 * </ul>
 *
 * <p>Each refusal is counted in {@link HttpRejections}. One timer per connection, rescheduled only
 * when a deadline comes before the time it is set for, so a request that arrives in one read
 * schedules nothing. A request whose head starts in the same read as the previous request's end and
 * then stalls is caught by the idle timeout once the earlier answers are written, not the header
 * timeout (the decoder's buffer is not visible from here).
 *
 * <p>The handlers of one connection run on its event loop; the connection count is shared.
 */
public final class ConnectionGuard {

  private static final Logger LOG = LoggerFactory.getLogger(ConnectionGuard.class);

  /** How long a refused connection's bytes are read and dropped before it is closed. */
  private static final long LINGER_MS = 1000;

  private final long headerNanos;
  private final long bodyNanos;
  private final long idleNanos;
  private final int maxConnections;
  private final int maxPipelined;
  private final HttpRejections rejections;
  private final AtomicInteger open = new AtomicInteger();

  public ConnectionGuard(FlashVecProperties.Http settings, HttpRejections rejections) {
    this.headerNanos = settings.headerTimeout().toNanos();
    this.bodyNanos = settings.bodyTimeout().toNanos();
    this.idleNanos = settings.idleTimeout().toNanos();
    this.maxConnections = settings.maxConnections();
    this.maxPipelined = settings.maxPipelinedRequests();
    this.rejections = rejections;
  }

  /** Half-closed connections stay open, and each connection gets its guard. */
  public NettyServerCustomizer customizer() {
    return server ->
        server
            .childOption(ChannelOption.ALLOW_HALF_CLOSURE, true)
            .doOnChannelInit((observer, channel, remote) -> install(channel));
  }

  /** Open connections now (tests, diagnostics). */
  int openConnections() {
    return open.get();
  }

  private void install(Channel channel) {
    ChannelPipeline p = channel.pipeline();
    if (p.get(NettyPipeline.HttpCodec) == null) {
      return; // not HTTP/1.1
    }
    int n = open.incrementAndGet();
    channel.closeFuture().addListener(f -> open.decrementAndGet());
    if (n > maxConnections) {
      rejections.count("too_many_connections");
      LOG.debug("connection refused: too many open [open={}, max={}]", n - 1, maxConnections);
      p.addBefore(NettyPipeline.HttpCodec, "flashvec.refuse", new Refuse());
      return;
    }
    Guard guard = new Guard();
    p.addBefore(NettyPipeline.HttpCodec, "flashvec.guard.bytes", guard.bytes);
    p.addAfter(NettyPipeline.HttpCodec, "flashvec.guard", guard);
  }

  /** A raw response (status line, JSON error body, {@code Connection: close}) for the codec. */
  private static FullHttpResponse error(HttpResponseStatus status, String message) {
    ObjectNode o = Json.object();
    o.putObject("status").put("error", message);
    o.put("time", 0.0);
    ByteBuf body = Unpooled.wrappedBuffer(Json.MAPPER.writeValueAsBytes(o));
    FullHttpResponse r = new DefaultFullHttpResponse(HttpVersion.HTTP_1_1, status, body);
    r.headers()
        .set(HttpHeaderNames.CONTENT_TYPE, HttpHeaderValues.APPLICATION_JSON)
        .setInt(HttpHeaderNames.CONTENT_LENGTH, body.readableBytes())
        .set(HttpHeaderNames.CONNECTION, HttpHeaderValues.CLOSE);
    return r;
  }

  /**
   * A connection beyond the limit: answered 503 before the codec sees a byte, then its input is
   * dropped until the client closes or {@link #LINGER_MS} passes.
   */
  private final class Refuse extends ChannelInboundHandlerAdapter {
    @Override
    public void channelActive(ChannelHandlerContext ctx) {
      String body =
          "{\"status\":{\"error\":\"Service unavailable: too many open connections [max-connections="
              + maxConnections
              + "]\"},\"time\":0.0}";
      byte[] b = body.getBytes(StandardCharsets.UTF_8);
      String head =
          "HTTP/1.1 503 Service Unavailable\r\ncontent-type: application/json\r\ncontent-length: "
              + b.length
              + "\r\nconnection: close\r\nretry-after: 1\r\n\r\n";
      ByteBuf out = Unpooled.wrappedBuffer(head.getBytes(StandardCharsets.US_ASCII), b);
      // written from here, before the codec: nothing of Reactor Netty's runs for this connection
      ctx.writeAndFlush(out)
          .addListener(
              f -> {
                if (ctx.channel() instanceof DuplexChannel d && f.isSuccess()) {
                  d.shutdownOutput();
                  ctx.executor().schedule(() -> ctx.close(), LINGER_MS, TimeUnit.MILLISECONDS);
                } else {
                  ctx.close();
                }
              });
      ctx.read();
    }

    @Override
    public void channelRead(ChannelHandlerContext ctx, Object msg) {
      ReferenceCountUtil.release(msg);
      ctx.read();
    }

    @Override
    public void userEventTriggered(ChannelHandlerContext ctx, Object evt) {
      if (evt instanceof ChannelInputShutdownEvent) {
        ctx.close();
      }
      ReferenceCountUtil.release(evt);
    }

    @Override
    public void exceptionCaught(ChannelHandlerContext ctx, Throwable cause) {
      ctx.close();
    }
  }

  /**
   * One connection's state, after the codec (decoded requests in, responses out); {@link #bytes}
   * sits before the codec and notes a request's first byte.
   */
  private final class Guard extends ChannelDuplexHandler {

    /** Requests whose head was decoded, and whose end (last content) was. */
    private int requestsIn;

    private int requestsComplete;

    /** Responses begun and finished (informational ones not counted). */
    private int responsesStarted;

    private int responsesDone;

    /** The request whose answer is the last before closing (0: none). */
    private int closeAfter;

    /** Requests after {@link #closeAfter} are read and dropped. */
    private boolean dropping;

    private boolean inputShutdown;

    /** When the current request's first byte, its head, and the idle time began (0: not now). */
    private long headStart;

    private long bodyStart;
    private long idleSince;

    private ChannelHandlerContext ctx;
    private ScheduledFuture<?> timer;
    private long timerAt;

    final ChannelInboundHandlerAdapter bytes =
        new ChannelInboundHandlerAdapter() {
          @Override
          public void channelRead(ChannelHandlerContext c, Object msg) {
            if (headStart == 0 && requestsIn == requestsComplete && !dropping) {
              // the first byte of a request's head (or of whitespace before one)
              headStart = System.nanoTime();
              idleSince = 0;
            }
            c.fireChannelRead(msg);
          }

          @Override
          public void channelReadComplete(ChannelHandlerContext c) {
            // a head or body that did not arrive in this read needs the timer
            if (headStart != 0) {
              arm(headStart + headerNanos);
            } else if (bodyStart != 0) {
              arm(bodyStart + bodyNanos);
            }
            c.fireChannelReadComplete();
          }
        };

    @Override
    public void handlerAdded(ChannelHandlerContext ctx) {
      this.ctx = ctx;
    }

    @Override
    public void channelActive(ChannelHandlerContext ctx) throws Exception {
      idleSince = System.nanoTime();
      arm(idleSince + idleNanos);
      super.channelActive(ctx);
    }

    @Override
    public void channelInactive(ChannelHandlerContext ctx) throws Exception {
      if (timer != null) {
        timer.cancel(false);
        timer = null;
      }
      super.channelInactive(ctx);
    }

    @Override
    public void channelRead(ChannelHandlerContext ctx, Object msg) {
      if (msg instanceof HttpRequest request) {
        headStart = 0;
        if (request.decoderResult().cause() instanceof PrematureChannelClosureException) {
          // the connection closed (by the client, or by a timeout here) inside a request's head:
          // nobody to answer, nothing to log
          ReferenceCountUtil.release(msg);
          return;
        }
        if (dropping) {
          ReferenceCountUtil.release(msg);
          return;
        }
        requestsIn++;
        bodyStart = System.nanoTime();
        if (request.decoderResult().isFailure()) {
          rejections.count("malformed_http"); // Reactor Netty answers 400 and closes
        } else if (requestsIn - responsesDone > maxPipelined) {
          requestsIn--;
          bodyStart = 0;
          rejections.count("too_many_pipelined");
          LOG.debug(
              "pipelined requests beyond the limit are dropped [channel={}, max={}]",
              ctx.channel(),
              maxPipelined);
          closeAfter = requestsIn;
          dropping = true;
          ReferenceCountUtil.release(msg);
          return;
        } else if (!HttpUtil.isKeepAlive(request) && requestsIn - responsesDone > 1) {
          // answers to earlier requests are still owed: close after this one's answer instead
          HttpUtil.setKeepAlive(request, true);
          closeAfter = requestsIn;
          dropping = true;
        }
      }
      if (dropping && requestsIn == requestsComplete) {
        ReferenceCountUtil.release(msg); // content of a dropped request
        return;
      }
      if (msg instanceof LastHttpContent) {
        requestsComplete++;
        bodyStart = 0;
        if (responsesDone == requestsIn && headStart == 0) {
          // answered before its body was all read (a 413, say): idle from now
          idleSince = System.nanoTime();
          arm(idleSince + idleNanos);
        }
      }
      ctx.fireChannelRead(msg);
    }

    @Override
    public void userEventTriggered(ChannelHandlerContext ctx, Object evt) throws Exception {
      if (evt instanceof ChannelInputShutdownEvent) {
        inputShutdown = true;
        if (headStart != 0 || requestsIn > requestsComplete || responsesDone == requestsIn) {
          // a request that can no longer be finished, or nothing owed: done
          ctx.close();
        }
      }
      super.userEventTriggered(ctx, evt);
    }

    @Override
    public void read(ChannelHandlerContext ctx) {
      if (!inputShutdown) {
        // after the end of input there is nothing to read, and epoll refuses to wait for it
        ctx.read();
      }
    }

    @Override
    public void write(ChannelHandlerContext ctx, Object msg, ChannelPromise promise) {
      if (msg instanceof HttpResponse response
          && response.status().codeClass() != HttpStatusClass.INFORMATIONAL) {
        responsesStarted++;
        if (responsesStarted == closeAfter) {
          response.headers().set(HttpHeaderNames.CONNECTION, HttpHeaderValues.CLOSE);
        }
      }
      if (msg instanceof LastHttpContent && responsesStarted > responsesDone) {
        responsesDone++;
        boolean close =
            responsesDone == closeAfter || (inputShutdown && responsesDone == requestsComplete);
        if (close) {
          ctx.write(msg, promise.unvoid()).addListener(ChannelFutureListener.CLOSE);
          return;
        }
        if (responsesDone == requestsIn && requestsIn == requestsComplete && headStart == 0) {
          idleSince = System.nanoTime();
          arm(idleSince + idleNanos);
        }
      }
      ctx.write(msg, promise);
    }

    /** Makes sure the timer fires by {@code deadline}. */
    private void arm(long deadline) {
      if (timer != null && timerAt <= deadline) {
        return;
      }
      if (timer != null) {
        timer.cancel(false);
      }
      timerAt = deadline;
      timer =
          ctx.executor()
              .schedule(
                  this::check, Math.max(0, deadline - System.nanoTime()), TimeUnit.NANOSECONDS);
    }

    /** The timer: closes the connection if a deadline passed, else sets itself for the next. */
    private void check() {
      timer = null;
      if (!ctx.channel().isActive()) {
        return;
      }
      long now = System.nanoTime();
      if (headStart != 0 && now - headStart >= headerNanos) {
        timedOut("header", "the request's headers did not arrive in time", headerNanos);
        return;
      }
      if (bodyStart != 0 && now - bodyStart >= bodyNanos) {
        timedOut("body", "the request's body did not arrive in time", bodyNanos);
        return;
      }
      if (idleSince != 0 && now - idleSince >= idleNanos) {
        LOG.debug("idle connection closed [channel={}]", ctx.channel());
        ctx.close();
        return;
      }
      long next = Long.MAX_VALUE;
      if (headStart != 0) {
        next = Math.min(next, headStart + headerNanos);
      }
      if (bodyStart != 0) {
        next = Math.min(next, bodyStart + bodyNanos);
      }
      if (idleSince != 0) {
        next = Math.min(next, idleSince + idleNanos);
      }
      if (next != Long.MAX_VALUE) {
        arm(next);
      }
    }

    private void timedOut(String part, String what, long timeoutNanos) {
      rejections.count("timeout");
      LOG.debug(
          "request {} timed out, connection closed [channel={}, timeout={}ms]",
          part,
          ctx.channel(),
          TimeUnit.NANOSECONDS.toMillis(timeoutNanos));
      if (responsesStarted == responsesDone && responsesDone == requestsComplete) {
        // no answer is being written: this one can be
        String message =
            "Request timeout: "
                + what
                + " [timeout="
                + TimeUnit.NANOSECONDS.toMillis(timeoutNanos)
                + "ms]";
        ctx.writeAndFlush(error(HttpResponseStatus.REQUEST_TIMEOUT, message))
            .addListener(ChannelFutureListener.CLOSE);
      } else {
        ctx.close();
      }
    }
  }
}
