package io.flashvec.api.system;

import io.flashvec.api.metrics.SearchMetrics;
import io.flashvec.api.web.Json;
import io.flashvec.cluster.CollectionService;
import io.flashvec.cluster.node.FlashVecNode;
import io.flashvec.index.CollectionConfig;
import io.flashvec.index.collection.Collection;
import io.flashvec.index.memory.MemoryPlan;
import java.io.IOException;
import java.lang.management.ManagementFactory;
import java.lang.management.MemoryUsage;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.UUID;
import tools.jackson.databind.node.ArrayNode;
import tools.jackson.databind.node.ObjectNode;

/**
 * The parts of {@code GET /telemetry} beyond the request counts, in the shapes of Qdrant's
 * telemetry, each from what FlashVec measures or enforces:
 *
 * <ul>
 *   <li>{@code memory}: the JVM's heap and non-heap, the process's resident and virtual size, and
 *       the memory budget's slices (ADR 0025);
 *   <li>{@code hardware}: per collection, the search work counted by {@link SearchMetrics};
 *   <li>{@code search_pool}: the threads searches run on and the pipelined searches' page readers
 *       (ADR 0027);
 *   <li>{@code quota}: the limits on which writes are refused with 507 (the disk reserve, ADR 0020,
 *       and the resident index's slice of the budget, ADR 0025) and whether they are over them;
 *   <li>collections at levels 2 and up ({@code config}), 3 and up (shards) and 4 and up (segments).
 * </ul>
 */
final class TelemetryDetails {

  private TelemetryDetails() {}

  /** Qdrant's {@code memory}, the JVM's and the process's; plus the budget as {@code budget}. */
  static ObjectNode memory(FlashVecNode.Resources res) {
    var mx = ManagementFactory.getMemoryMXBean();
    MemoryUsage heap = mx.getHeapMemoryUsage();
    MemoryUsage nonHeap = mx.getNonHeapMemoryUsage();
    ObjectNode m = Json.object();
    m.put("active_bytes", heap.getCommitted() + nonHeap.getCommitted());
    m.put("allocated_bytes", heap.getUsed() + nonHeap.getUsed());
    m.put("metadata_bytes", nonHeap.getUsed());
    Map<String, Long> status = procStatus(Path.of("/proc/self/status"));
    m.put("resident_bytes", status.getOrDefault("VmRSS", 0L));
    m.put("retained_bytes", status.getOrDefault("VmSize", 0L));
    m.put("heap_max_bytes", heap.getMax());
    MemoryPlan plan = res.memoryPlan();
    if (plan != null) {
      ObjectNode b = m.putObject("budget");
      b.put("total_bytes", plan.total());
      b.put("jvm_native_bytes", plan.jvmNative());
      b.put("heap_bytes", plan.heap());
      b.put("resident_index_bytes", plan.resident());
      b.put("growing_bytes", plan.growing());
      b.put("build_bytes", plan.build());
      b.put("working_bytes", plan.working());
      b.put("node_cache_bytes", plan.nodeCache());
      b.put("page_cache_bytes", plan.pageCache());
      b.put("resident_index_used_bytes", res.residentIndexBytes());
    }
    return m;
  }

  /** The {@code kB} figures of {@code /proc/self/status}, in bytes; empty where there is none. */
  static Map<String, Long> procStatus(Path file) {
    Map<String, Long> out = new TreeMap<>();
    try {
      for (String line : Files.readAllLines(file, StandardCharsets.UTF_8)) {
        int colon = line.indexOf(':');
        if (colon < 0 || !line.endsWith(" kB")) {
          continue;
        }
        String v = line.substring(colon + 1, line.length() - 3).trim();
        try {
          out.put(line.substring(0, colon), Long.parseLong(v) * 1024);
        } catch (NumberFormatException e) {
          // not a figure
        }
      }
    } catch (IOException | RuntimeException e) {
      // not Linux: no figures
    }
    return out;
  }

  /**
   * Qdrant's {@code hardware.collection_data}: per collection, {@code cpu} the distance
   * computations of its searches and {@code vector_io_read} the bytes they read from the device;
   * FlashVec does not count payload and write I/O per collection, those stay 0. Searches through an
   * alias count for its collection.
   */
  static ObjectNode hardware(
      List<String> collections, Map<String, String> aliases, SearchMetrics metrics) {
    Map<String, long[]> sums = new TreeMap<>();
    for (String c : collections) {
      sums.put(c, new long[2]);
    }
    metrics
        .hardware()
        .forEach(
            (name, hw) -> {
              long[] s = sums.get(aliases.getOrDefault(name, name));
              if (s != null) {
                s[0] += hw.distanceComputations();
                s[1] += hw.bytesRead();
              }
            });
    ObjectNode h = Json.object();
    ObjectNode data = h.putObject("collection_data");
    sums.forEach(
        (c, s) -> {
          ObjectNode o = data.putObject(c);
          o.put("cpu", s[0]);
          o.put("payload_io_read", 0);
          o.put("payload_io_write", 0);
          o.put("payload_index_io_read", 0);
          o.put("payload_index_io_write", 0);
          o.put("vector_io_read", s[1]);
          o.put("vector_io_write", 0);
        });
    return h;
  }

  /**
   * Qdrant's {@code search_pool}: {@code mode} is the pipelined search setting ({@code auto},
   * {@code on}, {@code off}), {@code high_cpu_threads} the carrier threads the searches' virtual
   * threads run on, {@code high_io_threads} the threads issuing the pipelined searches' page reads;
   * with their queue and what they read since the start.
   */
  static ObjectNode searchPool(FlashVecNode.Resources res) {
    ObjectNode p = Json.object();
    p.put("mode", res.prefetch());
    // the virtual threads' scheduler has one carrier per core (FlashVec does not change it)
    p.put("high_cpu_threads", Runtime.getRuntime().availableProcessors());
    p.put("high_io_threads", res.ioThreads());
    p.put("io_reads_queued", res.ioQueued());
    p.put("io_pages_read", res.ioPagesRead());
    p.put("io_bytes_read", res.ioBytesRead());
    return p;
  }

  /**
   * Qdrant's {@code quota}: FlashVec's limits are sizes, not percentages ({@code min_free_bytes}:
   * the disk reserve, {@code resident_index_limit_bytes}: the resident index's slice of the
   * budget), so the percentage fields are null; writes resume as soon as usage is back under a
   * limit ({@code release_margin_percent} 0). {@code exceeded} is null for a limit not enforced.
   */
  static ObjectNode quota(FlashVecNode.Resources res, Path dataDir) {
    ObjectNode q = Json.object();
    ObjectNode config = q.putObject("config");
    MemoryPlan plan = res.memoryPlan();
    boolean disk = res.minFreeBytes() > 0;
    boolean memory = plan != null;
    config.put("enabled", disk || memory);
    config.putNull("max_resident_memory_percent");
    config.putNull("max_disk_usage_percent");
    config.put("release_margin_percent", 0);
    config.put("min_free_bytes", res.minFreeBytes());
    if (memory) {
      config.put("resident_index_limit_bytes", plan.resident());
    } else {
      config.putNull("resident_index_limit_bytes");
    }
    ObjectNode exceeded = q.putObject("exceeded");
    if (memory) {
      exceeded.put("resident_memory", res.residentIndexBytes() > plan.resident());
    } else {
      exceeded.putNull("resident_memory");
    }
    long usable = usableBytes(dataDir);
    if (disk && usable >= 0) {
      exceeded.put("disk_usage", usable < res.minFreeBytes());
    } else {
      exceeded.putNull("disk_usage");
    }
    return q;
  }

  private static long usableBytes(Path dir) {
    try {
      return Files.getFileStore(dir).getUsableSpace();
    } catch (IOException | RuntimeException e) {
      return -1;
    }
  }

  /**
   * A collection as Qdrant's telemetry gives it at {@code level} 2 and up: {@code id}, {@code
   * init_time_ms} (not measured: null) and {@code config}; from level 3 its shards and their
   * replicas ({@code transfers} and {@code resharding} are empty: FlashVec moves no shards), from
   * level 4 each local shard's segments.
   */
  static ObjectNode collection(
      CollectionService.CollectionDescription d,
      CollectionService.ClusterInfo cluster,
      ObjectNode config,
      FlashVecNode.Resources res,
      int level) {
    ObjectNode o = Json.object();
    o.put("id", d.name());
    o.putNull("init_time_ms");
    if (config == null) {
      o.putNull("config"); // no statistics from the node that holds it
    } else {
      o.set("config", config);
    }
    if (level < 3) {
      return o;
    }
    ArrayNode shards = o.putArray("shards");
    Map<Integer, List<Collection.SegmentInfo>> segments = new TreeMap<>();
    if (d.info() != null) {
      for (Collection.SegmentInfo s : d.info().segmentInfos()) {
        segments.computeIfAbsent(s.shard(), k -> new java.util.ArrayList<>()).add(s);
      }
    }
    for (int shard = 0; shard < d.config().shardNumber(); shard++) {
      ObjectNode sh = shards.addObject();
      sh.put("id", shard);
      sh.putNull("key");
      ObjectNode states = Json.object();
      CollectionService.LocalShard local = null;
      if (cluster != null) {
        for (CollectionService.LocalShard l : cluster.localShards()) {
          if (l.shardId() == shard) {
            local = l;
            states.put(Long.toString(cluster.peerId()), l.state());
          }
        }
      }
      if (local == null) {
        sh.putNull("local");
      } else {
        sh.set("local", localShard(d, local, segments.getOrDefault(shard, List.of()), res, level));
      }
      ArrayNode remote = sh.putArray("remote");
      if (cluster != null) {
        for (CollectionService.RemoteShard r : cluster.remoteShards()) {
          if (r.shardId() == shard) {
            ObjectNode ro = remote.addObject();
            ro.put("shard_id", r.shardId());
            ro.put("peer_id", r.peerId());
            states.put(Long.toString(r.peerId()), r.state());
          }
        }
      }
      sh.set("replicate_states", states);
      sh.putNull("partial_snapshot");
    }
    o.putArray("transfers");
    o.putArray("resharding");
    return o;
  }

  /**
   * Qdrant's local shard telemetry: {@code total_optimized_points} is the points in the shard's
   * ANN-indexed segments now (FlashVec does not count builds since the start); {@code num_vectors}
   * counts each point once; {@code vectors_size_bytes} estimates the dense vectors' float32 bytes
   * as Qdrant's estimate does; {@code optimizations} is null (compactions are counted per
   * collection); {@code update_queue} has the writes in flight and the WAL sequence number of the
   * newest applied one; {@code async_scorer} says whether searches read pages asynchronously
   * (prefetch not {@code off}).
   */
  private static ObjectNode localShard(
      CollectionService.CollectionDescription d,
      CollectionService.LocalShard local,
      List<Collection.SegmentInfo> segments,
      FlashVecNode.Resources res,
      int level) {
    CollectionConfig c = d.config();
    long vectorBytesPerPoint = 4L * denseDimensions(c);
    long points = 0;
    long indexed = 0;
    long payloadBytes = 0;
    long vectorBytes = 0;
    for (Collection.SegmentInfo s : segments) {
      points += s.points();
      if (s.indexed()) {
        indexed += s.points();
      }
      payloadBytes += s.payloadBytes();
      vectorBytes += vectorBytesPerPoint * (s.points() + s.deleted());
    }
    if (segments.isEmpty()) {
      points = local.pointsCount();
    }
    ObjectNode l = Json.object();
    l.put("variant_name", "local");
    l.put(
        "status",
        d.info() == null ? "green" : io.flashvec.api.collections.CollectionStatus.of(d.info()));
    l.put("total_optimized_points", indexed);
    l.put("vectors_size_bytes", vectorBytes);
    l.put("payloads_size_bytes", payloadBytes);
    l.put("num_points", points);
    l.put("num_vectors", points);
    ObjectNode byName = l.putObject("num_vectors_by_name");
    if (c.hasPrimary()) {
      byName.put(c.vectorName(), points);
    }
    if (level >= 4) {
      ArrayNode segs = l.putArray("segments");
      for (Collection.SegmentInfo s : segments) {
        segs.add(segment(d, s, vectorBytesPerPoint));
      }
    }
    l.putNull("optimizations");
    l.put("async_scorer", !"off".equals(res.prefetch()));
    if (level >= 4) {
      // unindexed points are scanned exactly: no vector is left out of a search
      l.putObject("indexed_only_excluded_vectors");
    }
    // Qdrant's update queue: the writes received and not applied yet (FlashVec applies a write
    // before answering it, so only writes in flight count) and the newest applied one
    ObjectNode queue = l.putObject("update_queue");
    queue.put("length", local.pendingWrites());
    queue.put("op_num", local.lastOperation());
    return l;
  }

  private static long denseDimensions(CollectionConfig c) {
    long dims = c.hasPrimary() ? c.dimension() : 0;
    for (var v : c.denseVectors().values()) {
      if (!v.multivector()) {
        dims += v.dimension();
      }
    }
    return dims;
  }

  /**
   * A segment as Qdrant's telemetry gives it: its figures ({@code uuid} is derived from the
   * collection, shard and segment id, FlashVec's segments have none of their own), its payload
   * storage; FlashVec keeps no per-segment search timings or payload index figures, those lists are
   * empty.
   */
  private static ObjectNode segment(
      CollectionService.CollectionDescription d, Collection.SegmentInfo s, long vectorBytes) {
    ObjectNode seg = Json.object();
    ObjectNode info = seg.putObject("info");
    info.put(
        "uuid",
        UUID.nameUUIDFromBytes(
                (d.name() + "/" + s.shard() + "/" + s.id()).getBytes(StandardCharsets.UTF_8))
            .toString());
    info.put("segment_type", s.indexed() ? "indexed" : "plain");
    info.put("num_vectors", s.points());
    info.put("num_points", s.points());
    long indexedVectors =
        s.indexed() ? s.points() : Math.max(0, Math.min(s.points(), s.graphPoints() - s.deleted()));
    info.put("num_indexed_vectors", indexedVectors);
    info.put("num_deleted_vectors", s.deleted());
    info.put("vectors_size_bytes", vectorBytes * (s.points() + s.deleted()));
    info.put("payloads_size_bytes", s.payloadBytes());
    info.put("ram_usage_bytes", s.memoryBytes());
    info.put("disk_usage_bytes", s.diskBytes());
    info.put("is_appendable", s.state() == io.flashvec.index.segment.Segment.State.GROWING);
    info.putObject("index_schema");
    ObjectNode vd = info.putObject("vector_data");
    if (d.config().hasPrimary()) {
      ObjectNode v = vd.putObject(d.config().vectorName());
      v.put("num_vectors", s.points());
      v.put("num_indexed_vectors", indexedVectors);
      v.put("num_deleted_vectors", s.deleted());
    }
    info.put("flashvec_state", s.state().name().toLowerCase(java.util.Locale.ROOT));
    boolean onDiskPayload = d.info() == null || d.info().tuning().onDiskPayload();
    seg.putObject("config")
        .putObject("payload_storage_type")
        .put("type", onDiskPayload ? "mmap" : "in_ram_mmap");
    seg.putArray("vector_index_searches");
    seg.putArray("payload_field_indices");
    return seg;
  }
}
