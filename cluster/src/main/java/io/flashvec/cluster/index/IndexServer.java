package io.flashvec.cluster.index;

import com.google.protobuf.ByteString;
import io.flashvec.cluster.transport.GrpcErrors;
import io.flashvec.cluster.transport.Protos;
import io.flashvec.cluster.transport.grpc.BuildChunk;
import io.flashvec.cluster.transport.grpc.BuildReply;
import io.flashvec.cluster.transport.grpc.BuildSpec;
import io.flashvec.cluster.transport.grpc.BuiltFile;
import io.flashvec.cluster.transport.grpc.DropJobReply;
import io.flashvec.cluster.transport.grpc.DropJobRequest;
import io.flashvec.cluster.transport.grpc.FetchFileRequest;
import io.flashvec.cluster.transport.grpc.FileChunk;
import io.flashvec.cluster.transport.grpc.IndexServiceGrpc;
import io.flashvec.cluster.transport.grpc.PointMsg;
import io.flashvec.index.Distance;
import io.flashvec.index.InvalidInputException;
import io.flashvec.index.segment.GrowingSegment;
import io.flashvec.index.segment.SegmentBuilder;
import io.flashvec.storage.FileIO;
import io.grpc.Status;
import io.grpc.stub.StreamObserver;
import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.UUID;
import java.util.concurrent.Semaphore;
import java.util.stream.Stream;
import java.util.zip.CRC32C;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The index role: builds disk segments for query nodes ({@code IndexService}). A job receives the
 * points, builds the files with the same {@link SegmentBuilder} a query node runs locally under
 * {@code <jobs dir>/<job>/segment}, and keeps them until the query node fetched them and drops the
 * job. One build at a time (a build already uses every core); the others wait. Jobs left behind by
 * a query node that died are deleted at start and after an hour.
 *
 * <p>Thread-safe.
 */
public final class IndexServer extends IndexServiceGrpc.IndexServiceImplBase {

  private static final Logger LOG = LoggerFactory.getLogger(IndexServer.class);
  private static final int FILE_CHUNK = 1 << 20;
  private static final long ABANDONED_MILLIS = 3_600_000;

  private final Path jobs;
  private final SegmentBuilder builder;
  private final Semaphore builds = new Semaphore(1, true);

  /**
   * Serves jobs under {@code jobsDir} once {@link #prepare()} ran, building with {@code builder}.
   */
  public IndexServer(Path jobsDir, SegmentBuilder builder) {
    this.jobs = jobsDir;
    this.builder = builder;
  }

  /** Empties the jobs directory (jobs of an earlier run were abandoned). */
  public void prepare() {
    try {
      FileIO.DEFAULT.deleteTree(jobs);
      Files.createDirectories(jobs);
    } catch (IOException e) {
      throw new UncheckedIOException("cannot prepare the index jobs directory " + jobs, e);
    }
  }

  @Override
  public StreamObserver<BuildChunk> buildSegment(StreamObserver<BuildReply> out) {
    return new StreamObserver<>() {
      private BuildSpec spec;
      private GrowingSegment points;
      private boolean failed;

      @Override
      public void onNext(BuildChunk chunk) {
        if (failed) {
          return;
        }
        try {
          if (spec == null) {
            if (!chunk.hasSpec()) {
              throw new InvalidInputException("the first chunk of a build must carry its spec");
            }
            spec = chunk.getSpec();
            points = new GrowingSegment(spec.getSegmentId(), spec.getDimension());
          }
          for (PointMsg p : chunk.getPointsList()) {
            points.append(Protos.id(p.getId()), Protos.floats(p.getVectorList()), payload(p));
          }
        } catch (RuntimeException e) {
          failed = true;
          out.onError(GrpcErrors.toStatus(e, "[index build]"));
        }
      }

      @Override
      public void onError(Throwable t) {
        LOG.warn("index build upload aborted by the query node: {}", t.toString());
      }

      @Override
      public void onCompleted() {
        if (failed) {
          return;
        }
        try {
          out.onNext(build(spec, points));
          out.onCompleted();
        } catch (RuntimeException | IOException e) {
          LOG.error("index build failed [source={}]", spec == null ? "?" : spec.getSource(), e);
          out.onError(GrpcErrors.toStatus(e, "[index build, source=" + spec.getSource() + "]"));
        } catch (InterruptedException e) {
          Thread.currentThread().interrupt();
          out.onError(Status.CANCELLED.withDescription("index node stopping").asException());
        }
      }
    };
  }

  private static byte[] payload(PointMsg p) {
    return p.hasPayload() ? p.getPayload().toByteArray() : null;
  }

  private BuildReply build(BuildSpec spec, GrowingSegment points)
      throws IOException, InterruptedException {
    if (spec == null) {
      throw new InvalidInputException("empty build: no spec and no points");
    }
    if (points.size() != spec.getPoints()) {
      throw new InvalidInputException(
          "build received "
              + points.size()
              + " points, the spec announced "
              + spec.getPoints()
              + " [source="
              + spec.getSource()
              + "]");
    }
    dropAbandoned();
    String job = UUID.randomUUID().toString();
    Path dir = jobs.resolve(job).resolve("segment");
    Files.createDirectories(dir.getParent());
    int[] all = new int[points.size()];
    for (int i = 0; i < all.length; i++) {
      all[i] = i;
    }
    builds.acquire();
    long t0 = System.nanoTime();
    try {
      builder.build(
          new io.flashvec.index.segment.BuildSpec(
              FileIO.DEFAULT,
              dir,
              spec.getSegmentId(),
              List.of(points),
              List.<int[]>of(all),
              spec.getDimension(),
              Distance.parse(spec.getDistance()),
              Protos.config(spec.getIndex()).index(),
              null,
              null));
    } finally {
      builds.release();
    }
    BuildReply.Builder reply = BuildReply.newBuilder().setJob(job).setPoints(points.size());
    try (Stream<Path> files = Files.list(dir)) {
      for (Path f : files.sorted().toList()) {
        reply.addFiles(
            BuiltFile.newBuilder()
                .setName(f.getFileName().toString())
                .setLength(Files.size(f))
                .setCrc32C((int) crc32c(f))
                .build());
      }
    }
    LOG.info(
        "segment built for a query node [source={}, segment={}, points={}, millis={}, job={}]",
        spec.getSource(),
        spec.getSegmentId(),
        points.size(),
        (System.nanoTime() - t0) / 1_000_000,
        job);
    return reply.build();
  }

  static long crc32c(Path f) throws IOException {
    CRC32C crc = new CRC32C();
    byte[] buf = new byte[FILE_CHUNK];
    try (InputStream in = Files.newInputStream(f)) {
      for (int n; (n = in.read(buf)) > 0; ) {
        crc.update(buf, 0, n);
      }
    }
    return crc.getValue();
  }

  private Path jobFile(String job, String name) {
    // Names come from the network: only a plain file of an existing job.
    if (!job.matches("[0-9a-f-]{36}") || name.contains("/") || name.startsWith(".")) {
      throw new InvalidInputException("bad job or file name [job=" + job + ", name=" + name + "]");
    }
    return jobs.resolve(job).resolve("segment").resolve(name);
  }

  @Override
  public void fetchFile(FetchFileRequest req, StreamObserver<FileChunk> out) {
    try {
      Path f = jobFile(req.getJob(), req.getName());
      if (!Files.isRegularFile(f)) {
        out.onError(
            Status.NOT_FOUND
                .withDescription(
                    "no such job file [job=" + req.getJob() + ", name=" + req.getName() + "]")
                .asException());
        return;
      }
      byte[] buf = new byte[FILE_CHUNK];
      try (InputStream in = Files.newInputStream(f)) {
        for (int n; (n = in.readNBytes(buf, 0, buf.length)) > 0; ) {
          out.onNext(FileChunk.newBuilder().setData(ByteString.copyFrom(buf, 0, n)).build());
        }
      }
      out.onCompleted();
    } catch (IOException | RuntimeException e) {
      out.onError(GrpcErrors.toStatus(e, "[index fetch, job=" + req.getJob() + "]"));
    }
  }

  @Override
  public void dropJob(DropJobRequest req, StreamObserver<DropJobReply> out) {
    boolean dropped = false;
    try {
      if (req.getJob().matches("[0-9a-f-]{36}")) {
        Path dir = jobs.resolve(req.getJob());
        dropped = Files.exists(dir);
        FileIO.DEFAULT.deleteTree(dir);
      }
      out.onNext(DropJobReply.newBuilder().setDropped(dropped).build());
      out.onCompleted();
    } catch (IOException e) {
      out.onError(Status.INTERNAL.withDescription(e.toString()).asException());
    }
  }

  /** Deletes jobs that nobody fetched within an hour (their query node died or gave up). */
  private void dropAbandoned() throws IOException {
    long cutoff = System.currentTimeMillis() - ABANDONED_MILLIS;
    List<Path> old = new ArrayList<>();
    try (Stream<Path> s = Files.list(jobs)) {
      for (Path p : s.toList()) {
        if (Files.getLastModifiedTime(p).toMillis() < cutoff) {
          old.add(p);
        }
      }
    }
    for (Path p : old) {
      LOG.warn("dropping an index job nobody fetched [dir={}]", p);
      FileIO.DEFAULT.deleteTree(p);
    }
  }
}
