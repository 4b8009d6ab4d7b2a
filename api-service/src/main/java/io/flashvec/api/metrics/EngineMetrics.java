package io.flashvec.api.metrics;

import io.flashvec.cluster.node.FlashVecNode;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.MultiGauge;
import io.micrometer.core.instrument.Tags;
import io.micrometer.core.instrument.binder.MeterBinder;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.function.ToDoubleFunction;
import org.springframework.beans.factory.DisposableBean;
import org.springframework.stereotype.Component;

/**
 * Per-collection gauges ({@code flashvec_collection_points}, {@code flashvec_collection_segments},
 * {@code flashvec_wal_bytes}) of the node's local collections (in a cluster: its shard replicas),
 * read from the engine when scraped; the set of collections is refreshed every second so that
 * collections created or dropped at run time appear and disappear. WAL fsync latency and appended
 * bytes are recorded where they happen (see {@code NodeConfiguration}).
 */
@Component
public class EngineMetrics implements MeterBinder, DisposableBean {

  private final FlashVecNode node;
  private final ScheduledExecutorService scheduler =
      Executors.newSingleThreadScheduledExecutor(
          Thread.ofPlatform().name("flashvec-metrics").daemon(true).factory());

  EngineMetrics(FlashVecNode node) {
    this.node = node;
  }

  @Override
  public void bindTo(MeterRegistry registry) {
    MultiGauge points =
        MultiGauge.builder("flashvec.collection.points")
            .description("Live points per collection")
            .register(registry);
    MultiGauge segments =
        MultiGauge.builder("flashvec.collection.segments")
            .description("Segments per collection")
            .register(registry);
    MultiGauge walBytes =
        MultiGauge.builder("flashvec.wal.bytes")
            .description("WAL bytes on disk per collection")
            .baseUnit("bytes")
            .register(registry);
    Gauge.builder("flashvec.ready", node, n -> n.localReady() ? 1 : 0)
        .description("1 once WAL recovery finished")
        .register(registry);
    // Rows read the collection by name when scraped and are registered without overwriting: a
    // refresh then only adds and removes rows of created and dropped collections. (Overwriting
    // every second removed and re-added each gauge, and a scrape that overlapped it failed with
    // DuplicateLabelsException, i.e. /metrics answered 500.)
    Runnable refresh =
        () -> {
          if (!node.localReady()) {
            return;
          }
          List<MultiGauge.Row<?>> p = new ArrayList<>();
          List<MultiGauge.Row<?>> s = new ArrayList<>();
          List<MultiGauge.Row<?>> w = new ArrayList<>();
          for (String name : node.localNames()) {
            Tags tags = Tags.of("collection", name);
            p.add(MultiGauge.Row.of(tags, name, n -> value(n, FlashVecNode.LocalStats::points)));
            s.add(MultiGauge.Row.of(tags, name, n -> value(n, FlashVecNode.LocalStats::segments)));
            w.add(MultiGauge.Row.of(tags, name, n -> value(n, FlashVecNode.LocalStats::walBytes)));
          }
          points.register(p, false);
          segments.register(s, false);
          walBytes.register(w, false);
        };
    scheduler.scheduleWithFixedDelay(
        () -> {
          try {
            refresh.run();
          } catch (RuntimeException e) {
            // a collection dropped mid-refresh; the next round catches up
          }
        },
        0,
        1,
        TimeUnit.SECONDS);
  }

  /** A collection's figure at scrape time; NaN once it is gone. */
  private double value(String name, ToDoubleFunction<FlashVecNode.LocalStats> f) {
    try {
      FlashVecNode.LocalStats stats = node.localStats(name);
      return stats == null ? Double.NaN : f.applyAsDouble(stats);
    } catch (RuntimeException e) {
      return Double.NaN; // dropped or closing while scraped
    }
  }

  @Override
  public void destroy() {
    scheduler.shutdownNow();
  }
}
