package io.flashvec.index.segment;

import io.flashvec.index.Distance;
import io.flashvec.index.SearchStats;
import io.flashvec.index.TurboQuant;
import io.flashvec.storage.ChecksummedFile;
import io.flashvec.storage.CorruptFileException;
import io.flashvec.storage.FileIO;
import io.flashvec.storage.FormatVersionException;
import java.io.IOException;
import java.io.InterruptedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.util.concurrent.Executor;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.ThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.locks.ReentrantLock;
import java.util.function.IntFunction;
import java.util.function.IntPredicate;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The graph index of a sealed segment's dense field other than the primary one (ADR 0040): a {@link
 * LiveGraph} over the points that have the field, navigated by int8 codes in memory (searches by
 * TurboQuant codes with Qdrant's {@code turbo} quantization, ADR 0045) and rescored with the
 * field's full vectors (on the heap or in the mapped vectors file, as the field's {@code on_disk}
 * says).
 *
 * <p>Node {@code i} is the {@code i}-th ordinal having the field ({@link #ordinal}). The graph is
 * built in the background after the segment opens ({@link #startBuild}), on a process-wide pool of
 * low-priority threads; until it is complete, searches take the built nodes from the graph and scan
 * the rest exactly, so results never depend on the build's progress beyond the graph's recall.
 * Sealed segments are immutable but for deletes, which searches filter, so the graph is never
 * changed after its build.
 *
 * <h2>Persistence</h2>
 *
 * With a {@link Store}, a graph is written into its segment's directory once its build completes
 * ({@value #FILE_PREFIX}{@code <hash>.fvs}, see {@link #fileName}), and {@link #open} reads it back
 * instead of building again when it matches: the same field key, segment, ordinals, metric,
 * dimension and settings. A file that is missing, fails its checksum, or was built with other
 * settings is deleted and the graph built again. The file is a {@link ChecksummedFile} ({@value
 * #FORMAT} v{@value #VERSION}), streamed into {@code .tmp}, fsynced and renamed:
 *
 * <pre>
 * body := u16 keyLen | utf8 key | u16 distLen | utf8 distance | u32 dim | u32 m | u32 efConstruct
 *         | f32 quantile | u16 turboLen | utf8 turbo bits (v2) | u32 maxDegree | f32 alpha | u32 nodes | nodes * u32 ordinal
 *         | graph (LiveGraph's codes, sign codes, TurboQuant codes and adjacency)
 * </pre>
 *
 * <p>Thread-safe: one build at a time, any number of searches.
 */
public final class FieldGraph {

  private static final Logger LOG = LoggerFactory.getLogger(FieldGraph.class);

  /** Points below which a field is scanned exactly: cheaper than a graph search. */
  public static final int MIN_POINTS = LiveGraph.MIN_GRAPH_NODES;

  /** Nodes inserted per step of a build, between checks for a closed segment. */
  static final int BUILD_BATCH = 256;

  /**
   * The builds of all segments: low-priority daemon threads, a quarter of the cores (at least one),
   * so index builds never take the cores queries and writes need; with 32 cores, 8 segments' fields
   * are built at once.
   */
  private static final Executor BUILDS = builds();

  /**
   * A field graph's settings.
   *
   * @param m Qdrant's {@code m}: the graph keeps {@code 2m} neighbours per node
   * @param efConstruct the construction search list
   * @param quantile the fraction of the field's values that the int8 codes' range covers without
   *     clipping ({@code NaN}: the largest magnitude of a sample, with 10% headroom)
   * @param turbo the bits of the TurboQuant codes searches navigate by ({@code null}: int8 codes;
   *     ADR 0045)
   */
  public record Params(int m, int efConstruct, float quantile, TurboQuant.Bits turbo) {

    /** Settings of a graph navigated by int8 codes only. */
    public Params(int m, int efConstruct, float quantile) {
      this(m, efConstruct, quantile, null);
    }

    public Params {
      if (m < 1 || efConstruct < 1) {
        throw new IllegalArgumentException(
            "invalid field graph params [m=" + m + ", ef_construct=" + efConstruct + "]");
      }
      if (!Float.isNaN(quantile) && !(quantile >= 0.5f && quantile <= 1f)) {
        throw new IllegalArgumentException("quantile out of range [quantile=" + quantile + "]");
      }
    }
  }

  /** The prefix of a field graph's file name in its segment's directory. */
  public static final String FILE_PREFIX = "field-graph-";

  static final String FORMAT = "field-graph";

  /** 2 adds the TurboQuant bits to the header and the codes to the graph; 1 is read as int8. */
  static final int VERSION = 2;

  /** The robust-prune factor of every field graph. */
  private static final float ALPHA = 1.2f;

  /**
   * Where a sealed segment keeps its field graphs between runs.
   *
   * @param io the file system seam
   * @param dir the segment's directory
   * @param segmentId the segment's id, written into each file's header and checked at open
   * @param room whether that many more bytes may be written there (the free-space reserve, ADR
   *     0020); a graph that does not fit stays in memory only
   */
  public record Store(FileIO io, Path dir, int segmentId, java.util.function.LongPredicate room) {

    /** The file of the graph of the field {@code key}. */
    public Path file(String key) {
      return dir.resolve(fileName(key));
    }
  }

  private final String field;
  private final int[] ordinals;
  private final Distance distance;
  private final int dim;
  private final Params params;
  private final LiveGraph graph;
  private final Store store;
  private final boolean loaded;
  private final ReentrantLock building = new ReentrantLock();
  private volatile boolean closed;
  private volatile long fileBytes;

  /**
   * An unbuilt graph over the points {@code ordinals} (ascending) whose vectors {@code vector}
   * reads by ordinal (a fresh array each call).
   */
  public FieldGraph(
      String field,
      int[] ordinals,
      int dim,
      Distance distance,
      Params params,
      IntFunction<float[]> vector) {
    this(
        field,
        ordinals,
        dim,
        distance,
        params,
        newGraph(field, ordinals, dim, distance, params, vector),
        null,
        false);
  }

  /**
   * The graph of the field {@code field} (its storage key) over the points {@code ordinals}: read
   * from {@code store}'s file when that matches, complete ({@link #loaded()}), else unbuilt, to be
   * written there once {@link #startBuild} completes it. A file that does not match (other
   * settings, other points, a failed checksum) is deleted.
   */
  public static FieldGraph open(
      String field,
      int[] ordinals,
      int dim,
      Distance distance,
      Params params,
      IntFunction<float[]> vector,
      Store store) {
    LiveGraph loaded =
        store == null ? null : load(field, ordinals, dim, distance, params, vector, store);
    if (loaded != null) {
      FieldGraph g = new FieldGraph(field, ordinals, dim, distance, params, loaded, store, true);
      try {
        g.fileBytes = store.io().size(store.file(field));
      } catch (IOException e) {
        // only a statistic
      }
      return g;
    }
    return new FieldGraph(
        field,
        ordinals,
        dim,
        distance,
        params,
        newGraph(field, ordinals, dim, distance, params, vector),
        store,
        false);
  }

  /** The name of the file of the graph of the field {@code key} in its segment's directory. */
  public static String fileName(String key) {
    try {
      byte[] h =
          java.security.MessageDigest.getInstance("SHA-256")
              .digest(key.getBytes(StandardCharsets.UTF_8));
      return FILE_PREFIX + java.util.HexFormat.of().formatHex(h, 0, 8) + ".fvs";
    } catch (java.security.NoSuchAlgorithmException e) {
      throw new IllegalStateException("SHA-256 is missing", e);
    }
  }

  private static LiveGraph.Vectors byNode(int[] ordinals, IntFunction<float[]> vector) {
    return new LiveGraph.Vectors() {
      @Override
      public float[] array(int node) {
        return vector.apply(ordinals[node]);
      }

      @Override
      public int offset(int node) {
        return 0;
      }
    };
  }

  private static LiveGraph.Params liveParams(Params params) {
    return new LiveGraph.Params(Math.max(2, 2 * params.m()), params.efConstruct(), ALPHA);
  }

  private static LiveGraph newGraph(
      String field,
      int[] ordinals,
      int dim,
      Distance distance,
      Params params,
      IntFunction<float[]> vector) {
    if (!distance.graphable()) {
      throw new IllegalArgumentException("no graph indexes " + distance + " [field=" + field + "]");
    }
    return new LiveGraph(
        byNode(ordinals, vector),
        dim,
        liveParams(params),
        distance == Distance.EUCLID,
        distance == Distance.COSINE,
        params.turbo() == null && dim >= LiveGraph.SIGN_MIN_DIM,
        params.quantile(),
        turbo(dim, params));
  }

  /** The encoder of the graph's TurboQuant codes ({@code null}: none). */
  private static TurboQuant turbo(int dim, Params params) {
    return params.turbo() == null ? null : new TurboQuant(dim, params.turbo(), true);
  }

  /**
   * Reads the field's graph from its file when the file matches; {@code null} when there is none or
   * it does not match (then it is deleted).
   */
  private static LiveGraph load(
      String field,
      int[] ordinals,
      int dim,
      Distance distance,
      Params params,
      IntFunction<float[]> vector,
      Store store) {
    if (!distance.graphable()) {
      throw new IllegalArgumentException("no graph indexes " + distance + " [field=" + field + "]");
    }
    Path file = store.file(field);
    String stale = null;
    LiveGraph g = null;
    try (ChecksummedFile.Reader r =
        ChecksummedFile.Reader.open(store.io(), file, FORMAT, 1, VERSION)) {
      LiveGraph.Params lp = liveParams(params);
      stale = mismatch(r, field, ordinals, dim, distance, params, lp, store.segmentId());
      if (stale == null) {
        g =
            LiveGraph.read(
                r,
                ordinals.length,
                byNode(ordinals, vector),
                dim,
                lp,
                distance == Distance.EUCLID,
                distance == Distance.COSINE,
                params.quantile(),
                turbo(dim, params));
        r.finish();
        return g;
      }
    } catch (NoSuchFileException e) {
      return null;
    } catch (CorruptFileException | FormatVersionException e) {
      LOG.warn(
          "field graph file is unreadable; building the graph again [file={}, reason={}]",
          file,
          e.getMessage());
    } catch (IOException | RuntimeException e) {
      LOG.warn("cannot read the field graph file; building the graph again [file={}]", file, e);
    }
    if (stale != null) {
      LOG.info(
          "field graph file was built for other settings; building the graph again [file={},"
              + " differs={}]",
          file,
          stale);
    }
    try {
      store.io().deleteIfExists(file);
    } catch (IOException e) {
      LOG.warn("cannot delete a field graph file [file={}]", file, e);
    }
    return null;
  }

  /** What in the file's header differs from the graph wanted ({@code null}: nothing). */
  private static String mismatch(
      ChecksummedFile.Reader r,
      String field,
      int[] ordinals,
      int dim,
      Distance distance,
      Params params,
      LiveGraph.Params lp,
      int segmentId)
      throws IOException {
    if (r.segmentId() != segmentId) {
      return "segment " + r.segmentId();
    }
    if (!field.equals(string(r))) {
      return "field";
    }
    if (!distance.name().equals(string(r))) {
      return "distance";
    }
    if (r.getInt() != dim) {
      return "dim";
    }
    if (r.getInt() != params.m() || r.getInt() != params.efConstruct()) {
      return "m or ef_construct";
    }
    if (Float.floatToIntBits(r.getFloat()) != Float.floatToIntBits(params.quantile())) {
      return "quantile";
    }
    String turbo = r.version() >= 2 ? string(r) : "";
    if (!turbo.equals(params.turbo() == null ? "" : params.turbo().apiName())) {
      return "turbo";
    }
    if (r.getInt() != lp.maxDegree()
        || Float.floatToIntBits(r.getFloat()) != Float.floatToIntBits(lp.alpha())) {
      return "max degree or alpha";
    }
    int n = r.getInt();
    if (n != ordinals.length) {
      return "nodes " + n;
    }
    int[] ords = new int[Math.min(n, 1 << 16)];
    for (int at = 0; at < n; at += ords.length) {
      int len = Math.min(ords.length, n - at);
      r.getInts(ords, 0, len);
      if (!java.util.Arrays.equals(ords, 0, len, ordinals, at, at + len)) {
        return "ordinals";
      }
    }
    return null;
  }

  private static String string(ChecksummedFile.Reader r) throws IOException {
    int len = Short.toUnsignedInt(r.getShort());
    byte[] b = new byte[len];
    r.get(b, 0, len);
    return new String(b, StandardCharsets.UTF_8);
  }

  private static void putString(ChecksummedFile.Writer w, String s) throws IOException {
    byte[] b = s.getBytes(StandardCharsets.UTF_8);
    w.putShort((short) b.length).put(b, 0, b.length);
  }

  /** Bytes of the graph's file in its segment's directory (0: none, or not written yet). */
  public long fileBytes() {
    return fileBytes;
  }

  /** Whether the graph was read from its file rather than built. */
  public boolean loaded() {
    return loaded;
  }

  /**
   * Writes the complete graph to its store's file (the building lock held); stops without a file
   * when the segment closes meanwhile, and logs rather than throws when it cannot write.
   */
  private void persist(int segment) {
    Path file = store.file(field);
    long bytes = 1024 + 8L * ordinals.length + graph.memoryBytes();
    if (!store.room().test(bytes)) {
      LOG.info(
          "no room for the field graph file; the graph is built again at the next open"
              + " [segment={}, field={}, bytes={}]",
          segment,
          field,
          bytes);
      return;
    }
    long t0 = System.nanoTime();
    try (ChecksummedFile.Writer w =
        ChecksummedFile.Writer.create(store.io(), file, FORMAT, VERSION, store.segmentId())) {
      putString(w, field);
      putString(w, distance.name());
      LiveGraph.Params lp = liveParams(params);
      w.putInt(dim).putInt(params.m()).putInt(params.efConstruct()).putFloat(params.quantile());
      putString(w, params.turbo() == null ? "" : params.turbo().apiName());
      w.putInt(lp.maxDegree())
          .putFloat(lp.alpha())
          .putInt(ordinals.length)
          .putInts(ordinals, 0, ordinals.length);
      graph.write(w, () -> closed);
      w.commit();
      fileBytes = store.io().size(file);
      LOG.info(
          "field graph written [segment={}, field={}, m={}, ef_construct={}, quantile={},"
              + " turbo={}, nodes={}, bytes={}, millis={}]",
          segment,
          field,
          params.m(),
          params.efConstruct(),
          params.quantile(),
          params.turbo(),
          ordinals.length,
          w.bodyBytes(),
          (System.nanoTime() - t0) / 1_000_000);
    } catch (InterruptedIOException e) {
      // the segment closed: no file, the graph is built again at the next open
    } catch (IOException | RuntimeException e) {
      LOG.warn(
          "cannot write the field graph file; it is built again at the next open [file={}]",
          file,
          e);
    }
  }

  private FieldGraph(
      String field,
      int[] ordinals,
      int dim,
      Distance distance,
      Params params,
      LiveGraph graph,
      Store store,
      boolean loaded) {
    this.field = field;
    this.ordinals = ordinals;
    this.dim = dim;
    this.distance = distance;
    this.params = params;
    this.graph = graph;
    this.store = store;
    this.loaded = loaded;
  }

  public String field() {
    return field;
  }

  /** The settings the graph is built with. */
  public Params params() {
    return params;
  }

  /** Points the graph covers when built. */
  public int nodes() {
    return ordinals.length;
  }

  /** Nodes built so far: nodes {@code [0, built())} are in the graph. */
  public int built() {
    return graph.size();
  }

  /** The ordinal of node {@code node}. */
  public int ordinal(int node) {
    return ordinals[node];
  }

  /** Heap bytes of the graph: its adjacency and codes (estimate). */
  public long memoryBytes() {
    return graph.memoryBytes() + 4L * ordinals.length;
  }

  /**
   * Queues the graph's build on the background pool (a no-op for a graph read from its file);
   * {@code segment} names it in logs.
   */
  public void startBuild(int segment) {
    if (loaded) {
      return;
    }
    BUILDS.execute(() -> build(segment));
  }

  /** Builds the graph in batches until it is complete or closed; returns whether it completed. */
  boolean build(int segment) {
    try {
      while (!closed && graph.size() < ordinals.length) {
        building.lock();
        try {
          if (closed) {
            break;
          }
          graph.catchUp(ordinals.length, BUILD_BATCH, () -> closed);
        } finally {
          building.unlock();
        }
      }
      if (!closed) {
        building.lock();
        try {
          if (!closed) {
            graph.trimToMaxDegree();
            graph.seal();
            if (store != null && graph.size() == ordinals.length) {
              persist(segment);
            }
          }
        } finally {
          building.unlock();
        }
      }
    } catch (RuntimeException e) {
      if (!closed) {
        // searches keep scanning the nodes the graph lacks: results stay right, only slower
        LOG.warn(
            "field graph build failed; the field is scanned exactly [segment={}, field={}]",
            segment,
            field,
            e);
      }
      return false;
    }
    return !closed && graph.size() == ordinals.length;
  }

  /**
   * Searches the built nodes for the {@code k} best ordinals {@code accept} takes ({@code null}:
   * all), keeping {@code searchList} candidates; {@code sink} gets each result's ordinal. The nodes
   * not built yet are the caller's to scan ({@link #built()} onwards).
   */
  public void search(
      float[] q, int k, int searchList, IntPredicate accept, IntSink sink, SearchStats stats) {
    search(q, k, searchList, 0, accept, sink, stats);
  }

  /**
   * As above, rescoring the best {@code rerank} nodes by their codes with the full vectors ({@code
   * 0}: {@code 2k + 10}; at least {@code k}).
   */
  public void search(
      float[] q,
      int k,
      int searchList,
      int rerank,
      IntPredicate accept,
      IntSink sink,
      SearchStats stats) {
    graph.search(
        q,
        k,
        searchList,
        rerank,
        accept == null ? null : node -> accept.test(ordinals[node]),
        (d, node) -> sink.accept(ordinals[node]),
        stats);
  }

  /** Receives result ordinals. */
  @FunctionalInterface
  public interface IntSink {
    void accept(int ord);
  }

  public Distance distance() {
    return distance;
  }

  /**
   * Stops the build and waits for its current batch (or its file's write), so no build reads the
   * segment's vectors or writes the file after this returns. Searches may still run on the nodes
   * built so far (a graph replaced by one of other settings).
   */
  public void close() {
    closed = true;
    graph.close();
    building.lock();
    building.unlock();
  }

  private static Executor builds() {
    int threads = Math.max(1, Runtime.getRuntime().availableProcessors() / 4);
    AtomicInteger n = new AtomicInteger();
    ThreadPoolExecutor pool =
        new ThreadPoolExecutor(
            threads,
            threads,
            30,
            TimeUnit.SECONDS,
            new LinkedBlockingQueue<>(),
            r -> {
              Thread t = new Thread(r, "flashvec-field-graph-" + n.incrementAndGet());
              t.setDaemon(true);
              t.setPriority(Thread.MIN_PRIORITY);
              return t;
            });
    pool.allowCoreThreadTimeOut(true);
    return pool;
  }
}
