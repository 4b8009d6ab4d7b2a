package io.flashvec.index.segment;

import io.flashvec.index.Distance;
import io.flashvec.index.SearchStats;
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
 * LiveGraph} over the points that have the field, navigated by int8 codes in memory and rescored
 * with the field's full vectors (on the heap or in the mapped vectors file, as the field's {@code
 * on_disk} says).
 *
 * <p>Node {@code i} is the {@code i}-th ordinal having the field ({@link #ordinal}). The graph is
 * built in the background after the segment opens ({@link #startBuild}), on a process-wide pool of
 * low-priority threads; until it is complete, searches take the built nodes from the graph and scan
 * the rest exactly, so results never depend on the build's progress beyond the graph's recall.
 * Sealed segments are immutable but for deletes, which searches filter, so the graph is never
 * changed after its build.
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
   */
  public record Params(int m, int efConstruct, float quantile) {
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

  private final String field;
  private final int[] ordinals;
  private final Distance distance;
  private final LiveGraph graph;
  private final ReentrantLock building = new ReentrantLock();
  private volatile boolean closed;

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
    if (!distance.graphable()) {
      throw new IllegalArgumentException("no graph indexes " + distance + " [field=" + field + "]");
    }
    this.field = field;
    this.ordinals = ordinals;
    this.distance = distance;
    LiveGraph.Vectors byNode =
        new LiveGraph.Vectors() {
          @Override
          public float[] array(int node) {
            return vector.apply(ordinals[node]);
          }

          @Override
          public int offset(int node) {
            return 0;
          }
        };
    this.graph =
        new LiveGraph(
            byNode,
            dim,
            new LiveGraph.Params(Math.max(2, 2 * params.m()), params.efConstruct(), 1.2f),
            distance == Distance.EUCLID,
            distance == Distance.COSINE,
            dim >= LiveGraph.SIGN_MIN_DIM,
            params.quantile());
  }

  public String field() {
    return field;
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

  /** Queues the graph's build on the background pool; {@code segment} names it in logs. */
  public void startBuild(int segment) {
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
   * Stops the build and waits for its current batch, so no build reads the segment's vectors after
   * this returns; searches must have ended (the segment is closing).
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
