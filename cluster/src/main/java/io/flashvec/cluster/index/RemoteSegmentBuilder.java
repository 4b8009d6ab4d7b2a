package io.flashvec.cluster.index;

import io.flashvec.cluster.metadata.ClusterMetadata;
import io.flashvec.cluster.metadata.Node;
import io.flashvec.cluster.transport.Protos;
import io.flashvec.cluster.transport.ShardClients;
import io.flashvec.cluster.transport.grpc.BuildChunk;
import io.flashvec.cluster.transport.grpc.BuildReply;
import io.flashvec.cluster.transport.grpc.BuildSpec;
import io.flashvec.cluster.transport.grpc.BuiltFile;
import io.flashvec.cluster.transport.grpc.DropJobRequest;
import io.flashvec.cluster.transport.grpc.FetchFileRequest;
import io.flashvec.cluster.transport.grpc.FileChunk;
import io.flashvec.cluster.transport.grpc.IndexServiceGrpc;
import io.flashvec.index.CollectionConfig;
import io.flashvec.index.CollectionTuning;
import io.flashvec.index.Distance;
import io.flashvec.index.Point;
import io.flashvec.index.payload.PayloadSchema;
import io.flashvec.index.segment.Segment;
import io.flashvec.index.segment.SegmentBuilder;
import io.flashvec.storage.CrashPoint;
import io.flashvec.storage.FileIO;
import io.grpc.ManagedChannel;
import io.grpc.StatusRuntimeException;
import io.grpc.stub.ClientCallStreamObserver;
import io.grpc.stub.ClientResponseObserver;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Iterator;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.zip.CRC32C;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * A query node's {@link SegmentBuilder} in cluster mode: sends the build to a live index node (the
 * points streamed over gRPC, with flow control), fetches the built files back, checks each file's
 * length and CRC-32C, fsyncs them and moves the directory into place — the same atomic result as a
 * local build. With no index node registered, or when the remote build fails for any reason, it
 * builds locally instead, so sealing never waits on the index role.
 *
 * <p>Thread-safe.
 */
public final class RemoteSegmentBuilder implements SegmentBuilder {

  private static final Logger LOG = LoggerFactory.getLogger(RemoteSegmentBuilder.class);
  private static final int POINTS_PER_CHUNK = 256;

  private final String nodeId;
  private final ClusterMetadata meta;
  private final ShardClients clients;
  private final Duration deadline;
  private final SegmentBuilder local;
  private final AtomicInteger roundRobin = new AtomicInteger();

  /**
   * @param deadline for one whole remote build (upload, build, fetch)
   */
  public RemoteSegmentBuilder(
      String nodeId,
      ClusterMetadata meta,
      ShardClients clients,
      Duration deadline,
      SegmentBuilder local) {
    this.local = local;
    this.nodeId = nodeId;
    this.meta = meta;
    this.clients = clients;
    this.deadline = deadline;
  }

  /** Live index nodes other than this one, in a rotating order. */
  private List<Node> indexNodes() {
    List<Node> out = new ArrayList<>();
    for (Node n : meta.nodes().values()) {
      if (n.hasRole("index") && !n.id().equals(nodeId)) {
        out.add(n);
      }
    }
    out.sort(java.util.Comparator.comparing(Node::id));
    if (!out.isEmpty()) {
      java.util.Collections.rotate(out, Math.floorMod(roundRobin.getAndIncrement(), out.size()));
    }
    return out;
  }

  @Override
  public int build(io.flashvec.index.segment.BuildSpec spec) throws IOException {
    for (Node node : indexNodes()) {
      try {
        return buildOn(node, spec);
      } catch (IOException | RuntimeException e) {
        LOG.warn(
            "remote index build failed; trying the next index node or building here"
                + " [dir={}, indexNode={}]: {}",
            spec.dir(),
            node.id(),
            e.toString());
        spec.io().deleteTree(tmpDir(spec.dir()));
      }
    }
    LOG.info("no index node took the build; building locally [dir={}]", spec.dir());
    return local.build(spec);
  }

  private static Path tmpDir(Path dir) {
    return dir.resolveSibling(dir.getFileName() + ".remote-tmp");
  }

  private int buildOn(Node node, io.flashvec.index.segment.BuildSpec build) throws IOException {
    FileIO io = build.io();
    Path dir = build.dir();
    int dim = build.dimension();
    Distance distance = build.distance();
    long t0 = System.nanoTime();
    long end = t0 + deadline.toNanos();
    ManagedChannel ch = clients.channel(node.grpcAddress());
    int n = build.points();
    BuildSpec spec =
        BuildSpec.newBuilder()
            .setSource(nodeId + ":" + dir)
            .setSegmentId(build.segmentId())
            .setDimension(dim)
            .setDistance(distance.apiName())
            .setIndex(
                Protos.config(
                    new CollectionConfig(dim, distance, 1, 1, build.params()),
                    CollectionTuning.DEFAULT,
                    PayloadSchema.EMPTY))
            .setPoints(n)
            .build();
    BuildReply reply = upload(ch, spec, build.sources(), build.ords(), end);
    long uploaded = System.nanoTime();
    var blocking =
        IndexServiceGrpc.newBlockingStub(ch)
            .withDeadlineAfter(Math.max(1, end - System.nanoTime()), TimeUnit.NANOSECONDS);
    Path tmp = tmpDir(dir);
    io.deleteTree(tmp);
    io.createDirectories(tmp);
    try {
      long bytes = 0;
      for (BuiltFile f : reply.getFilesList()) {
        bytes += fetch(blocking, io, reply.getJob(), f, tmp);
      }
      io.fsyncDirectory(tmp);
      io.crashPoint(CrashPoint.SEGMENT_BUILD_FILES_WRITTEN);
      io.atomicMove(tmp, dir);
      io.crashPoint(CrashPoint.SEGMENT_BUILD_RENAMED);
      io.fsyncDirectory(dir.getParent());
      LOG.info(
          "segment built remotely [dir={}, indexNode={}, points={}, uploadMillis={},"
              + " fetchMillis={}, bytes={}]",
          dir,
          node.id(),
          reply.getPoints(),
          (uploaded - t0) / 1_000_000,
          (System.nanoTime() - uploaded) / 1_000_000,
          bytes);
      return reply.getPoints();
    } finally {
      try {
        IndexServiceGrpc.newBlockingStub(ch)
            .withDeadlineAfter(10, TimeUnit.SECONDS)
            .dropJob(DropJobRequest.newBuilder().setJob(reply.getJob()).build());
      } catch (StatusRuntimeException e) {
        LOG.warn("cannot drop the index job; the index node drops it later: {}", e.getStatus());
      }
    }
  }

  /** Streams the points, waiting whenever the transport buffers are full; returns the reply. */
  private static BuildReply upload(
      ManagedChannel ch,
      BuildSpec spec,
      List<? extends Segment> sources,
      List<int[]> ords,
      long endNanos)
      throws IOException {
    CompletableFuture<BuildReply> done = new CompletableFuture<>();
    Object ready = new Object();
    @SuppressWarnings("unchecked")
    ClientCallStreamObserver<BuildChunk>[] req = new ClientCallStreamObserver[1];
    IndexServiceGrpc.newStub(ch)
        .withDeadlineAfter(Math.max(1, endNanos - System.nanoTime()), TimeUnit.NANOSECONDS)
        .withMaxOutboundMessageSize(ShardClients.MAX_MESSAGE_BYTES)
        .buildSegment(
            new ClientResponseObserver<BuildChunk, BuildReply>() {
              @Override
              public void beforeStart(ClientCallStreamObserver<BuildChunk> r) {
                req[0] = r;
                r.setOnReadyHandler(
                    () -> {
                      synchronized (ready) {
                        ready.notifyAll();
                      }
                    });
              }

              @Override
              public void onNext(BuildReply value) {
                done.complete(value);
              }

              @Override
              public void onError(Throwable t) {
                done.completeExceptionally(t);
                synchronized (ready) {
                  ready.notifyAll();
                }
              }

              @Override
              public void onCompleted() {
                if (!done.isDone()) {
                  done.completeExceptionally(new IOException("index node sent no reply"));
                }
              }
            });
    ClientCallStreamObserver<BuildChunk> r = req[0];
    BuildChunk.Builder chunk = BuildChunk.newBuilder().setSpec(spec);
    try {
      for (int s = 0; s < sources.size(); s++) {
        Segment src = sources.get(s);
        for (int ord : ords.get(s)) {
          chunk.addPoints(
              Protos.point(new Point(src.idAt(ord), src.vectorAt(ord), src.payloadAt(ord))));
          if (chunk.getPointsCount() == POINTS_PER_CHUNK) {
            send(r, chunk.build(), ready, done, endNanos);
            chunk = BuildChunk.newBuilder();
          }
        }
      }
      if (chunk.getPointsCount() > 0 || chunk.hasSpec()) {
        send(r, chunk.build(), ready, done, endNanos);
      }
      r.onCompleted();
    } catch (IOException | RuntimeException e) {
      r.cancel("upload failed", e);
      throw e;
    }
    try {
      return done.get(Math.max(1, endNanos - System.nanoTime()), TimeUnit.NANOSECONDS);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      r.cancel("interrupted", e);
      throw new IOException("interrupted while the index node built", e);
    } catch (ExecutionException e) {
      throw new IOException("index node failed the build: " + e.getCause(), e.getCause());
    } catch (TimeoutException e) {
      r.cancel("deadline", e);
      throw new IOException("index build deadline passed", e);
    }
  }

  private static void send(
      ClientCallStreamObserver<BuildChunk> r,
      BuildChunk chunk,
      Object ready,
      CompletableFuture<BuildReply> done,
      long endNanos)
      throws IOException {
    synchronized (ready) {
      while (!r.isReady()) {
        if (done.isDone()) {
          break; // failed early: the reply explains, below
        }
        if (System.nanoTime() > endNanos) {
          throw new IOException("index build deadline passed during the upload");
        }
        try {
          ready.wait(100);
        } catch (InterruptedException e) {
          Thread.currentThread().interrupt();
          throw new IOException("interrupted during the upload", e);
        }
      }
    }
    if (done.isCompletedExceptionally()) {
      try {
        done.join();
      } catch (RuntimeException e) {
        throw new IOException("index node failed the build: " + e.getCause(), e.getCause());
      }
    }
    r.onNext(chunk);
  }

  /** Fetches one file into {@code tmp}, checking length and CRC-32C; returns its length. */
  private static long fetch(
      IndexServiceGrpc.IndexServiceBlockingStub stub, FileIO io, String job, BuiltFile f, Path tmp)
      throws IOException {
    if (f.getName().contains("/") || f.getName().startsWith(".")) {
      throw new IOException("bad file name from the index node [name=" + f.getName() + "]");
    }
    Path target = tmp.resolve(f.getName());
    CRC32C crc = new CRC32C();
    long length = 0;
    try (FileChannel out =
        io.open(target, StandardOpenOption.CREATE_NEW, StandardOpenOption.WRITE)) {
      Iterator<FileChunk> it =
          stub.fetchFile(FetchFileRequest.newBuilder().setJob(job).setName(f.getName()).build());
      while (it.hasNext()) {
        ByteBuffer b = it.next().getData().asReadOnlyByteBuffer();
        crc.update(b.duplicate());
        length += b.remaining();
        while (b.hasRemaining()) {
          out.write(b);
        }
      }
      if (length != f.getLength() || (int) crc.getValue() != f.getCrc32C()) {
        throw new IOException(
            "segment file from the index node is damaged [name="
                + f.getName()
                + ", length="
                + length
                + ", expected="
                + f.getLength()
                + ", crc32c="
                + Integer.toHexString((int) crc.getValue())
                + ", expected="
                + Integer.toHexString(f.getCrc32C())
                + "]");
      }
      io.force(out, true);
    } catch (StatusRuntimeException e) {
      throw new IOException("fetching " + f.getName() + " failed: " + e.getStatus(), e);
    }
    return length;
  }
}
