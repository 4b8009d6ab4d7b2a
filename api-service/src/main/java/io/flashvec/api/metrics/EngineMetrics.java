package io.flashvec.api.metrics;

import io.flashvec.cluster.node.FlashVecNode;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.MultiGauge;
import io.micrometer.core.instrument.Tags;
import io.micrometer.core.instrument.binder.MeterBinder;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.function.ToDoubleFunction;
import org.springframework.beans.factory.DisposableBean;
import org.springframework.stereotype.Component;

/**
 * Per-collection gauges of the node's local collections (in a cluster: its shard replicas),
 * labelled {@code collection}, read from the engine when scraped:
 *
 * <ul>
 *   <li>{@code flashvec_collection_points}, {@code flashvec_collection_segments}, {@code
 *       flashvec_wal_bytes}, {@code flashvec_collection_disk_bytes}, {@code
 *       flashvec_collection_memory_bytes};
 *   <li>the index build and merge backlog and progress: {@code flashvec_collection_indexed_points}
 *       (live points an index answers for), {@code flashvec_collection_index_backlog_points} (live
 *       points the shards are indexing now), {@code flashvec_collection_builds_pending} (frozen
 *       segments waiting for or in a build), {@code flashvec_collection_builds_running}, {@code
 *       flashvec_collection_merges_running} and {@code flashvec_collection_merges_planned};
 *   <li>{@code collection_points}: the live points again, labelled {@code id} as Qdrant's, for
 *       dashboards made for Qdrant (one series per collection).
 * </ul>
 *
 * <p>The set of collections is refreshed every second, and before every scrape, so that collections
 * created or dropped at run time appear and disappear (a scrape right after a creation shows it). A
 * scrape reads each collection's figures once (they are kept for {@value #STATS_TTL_MILLIS} ms,
 * shared by its gauges). WAL fsync latency and appended bytes are recorded where they happen (see
 * {@code NodeConfiguration}).
 */
@Component
public class EngineMetrics implements MeterBinder, DisposableBean {

  static final long STATS_TTL_MILLIS = 500;

  /** One gauge per figure: name, description, base unit (or null), and the figure. */
  private record Figure(
      String name, String description, String unit, ToDoubleFunction<FlashVecNode.LocalStats> f) {}

  private static final List<Figure> FIGURES =
      List.of(
          new Figure(
              "flashvec.collection.points", "Live points per collection", null, s -> s.points()),
          new Figure(
              "flashvec.collection.segments", "Segments per collection", null, s -> s.segments()),
          new Figure(
              "flashvec.wal.bytes", "WAL bytes on disk per collection", "bytes", s -> s.walBytes()),
          new Figure(
              "flashvec.collection.disk",
              "Bytes of segments and WAL on disk per collection",
              "bytes",
              s -> s.diskBytes()),
          new Figure(
              "flashvec.collection.memory",
              "Heap bytes per collection: growing segments, codes, id maps",
              "bytes",
              s -> s.memoryBytes()),
          new Figure(
              "flashvec.collection.indexed",
              "Live points an index answers for",
              "points",
              s -> s.indexing().indexed()),
          new Figure(
              "flashvec.collection.index.backlog",
              "Live points the shards are indexing now (live-graph backlog, frozen segments)",
              "points",
              s -> s.indexing().backlog()),
          new Figure(
              "flashvec.collection.builds.pending",
              "Frozen segments waiting for or in an index build",
              null,
              s -> s.indexing().frozenPending()),
          new Figure(
              "flashvec.collection.builds.running",
              "Index builds running",
              null,
              s -> s.indexing().buildsRunning()),
          new Figure(
              "flashvec.collection.merges.running",
              "Merges (compactions) running or queued",
              null,
              s -> s.indexing().compactionsRunning()),
          new Figure(
              "flashvec.collection.merges.planned",
              "Shards whose merge policy has work for a compaction pass",
              null,
              s -> s.indexing().mergesPlanned()));

  private final FlashVecNode node;
  private final ScheduledExecutorService scheduler =
      Executors.newSingleThreadScheduledExecutor(
          Thread.ofPlatform().name("flashvec-metrics").daemon(true).factory());
  private final Map<String, Cached> cache = new ConcurrentHashMap<>();
  private volatile Runnable refresh;

  private record Cached(long atNanos, FlashVecNode.LocalStats stats) {}

  EngineMetrics(FlashVecNode node) {
    this.node = node;
  }

  @Override
  public void bindTo(MeterRegistry registry) {
    List<MultiGauge> gauges = new ArrayList<>();
    for (Figure f : FIGURES) {
      MultiGauge.Builder b = MultiGauge.builder(f.name()).description(f.description());
      if (f.unit() != null) {
        b.baseUnit(f.unit());
      }
      gauges.add(b.register(registry));
    }
    // Qdrant's name and label for the same figure, which dashboards made for Qdrant read
    MultiGauge qdrantPoints =
        MultiGauge.builder("collection.points")
            .description("Live points per collection, labelled id as Qdrant's")
            .register(registry);
    Gauge.builder("flashvec.ready", node, n -> n.localReady() ? 1 : 0)
        .description("1 once WAL recovery finished")
        .register(registry);
    // Rows read the collection by name when scraped and are registered without overwriting: a
    // refresh then only adds and removes rows of created and dropped collections. (Overwriting
    // every second removed and re-added each gauge, and a scrape that overlapped it failed with
    // DuplicateLabelsException, i.e. /metrics answered 500.)
    this.refresh =
        () -> {
          if (!node.localReady()) {
            return;
          }
          List<String> names = node.localNames();
          cache.keySet().retainAll(names);
          for (int i = 0; i < FIGURES.size(); i++) {
            ToDoubleFunction<FlashVecNode.LocalStats> f = FIGURES.get(i).f();
            List<MultiGauge.Row<?>> rows = new ArrayList<>();
            for (String name : names) {
              rows.add(MultiGauge.Row.of(Tags.of("collection", name), name, n -> value(n, f)));
            }
            gauges.get(i).register(rows, false);
          }
          List<MultiGauge.Row<?>> rows = new ArrayList<>();
          for (String name : names) {
            rows.add(MultiGauge.Row.of(Tags.of("id", name), name, n -> value(n, s -> s.points())));
          }
          qdrantPoints.register(rows, false);
        };
    scheduler.scheduleWithFixedDelay(this::refresh, 0, 1, TimeUnit.SECONDS);
  }

  /**
   * Adds the rows of collections created and removes those of collections dropped since the last
   * refresh: every second, and before each scrape ({@link MetricsController}), so a scrape right
   * after a collection's creation shows it. One refresh at a time (two overlapping registrations of
   * a row fail).
   */
  public void refresh() {
    Runnable r = refresh;
    if (r == null) {
      return; // not bound to a registry yet
    }
    synchronized (this) {
      try {
        r.run();
      } catch (RuntimeException e) {
        // a collection dropped mid-refresh; the next round catches up
      }
    }
  }

  /** A collection's figure at scrape time; NaN once it is gone. */
  private double value(String name, ToDoubleFunction<FlashVecNode.LocalStats> f) {
    try {
      FlashVecNode.LocalStats stats = stats(name);
      return stats == null ? Double.NaN : f.applyAsDouble(stats);
    } catch (RuntimeException e) {
      return Double.NaN; // dropped or closing while scraped
    }
  }

  /** The collection's figures, read at most once per {@link #STATS_TTL_MILLIS}. */
  private FlashVecNode.LocalStats stats(String name) {
    long now = System.nanoTime();
    Cached c = cache.get(name);
    if (c == null || now - c.atNanos() > TimeUnit.MILLISECONDS.toNanos(STATS_TTL_MILLIS)) {
      FlashVecNode.LocalStats s = node.localStats(name);
      if (s == null) {
        cache.remove(name);
        return null;
      }
      c = new Cached(now, s);
      cache.put(name, c);
    }
    return c.stats();
  }

  @Override
  public void destroy() {
    scheduler.shutdownNow();
  }
}
