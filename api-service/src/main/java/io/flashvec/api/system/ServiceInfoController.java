package io.flashvec.api.system;

import io.flashvec.api.FlashVecProperties;
import io.flashvec.api.metrics.RestResponses;
import io.flashvec.api.metrics.SearchMetrics;
import io.flashvec.api.web.Blocking;
import io.flashvec.api.web.Json;
import io.flashvec.cluster.CollectionService;
import io.flashvec.cluster.node.FlashVecNode;
import io.flashvec.index.ByteSize;
import io.flashvec.index.FlashVecException;
import io.flashvec.index.InvalidInputException;
import java.io.IOException;
import java.lang.management.ManagementFactory;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;
import java.util.UUID;
import org.springframework.http.ResponseEntity;
import org.springframework.web.bind.annotation.DeleteMapping;
import org.springframework.web.bind.annotation.GetMapping;
import org.springframework.web.bind.annotation.PathVariable;
import org.springframework.web.bind.annotation.PostMapping;
import org.springframework.web.bind.annotation.RequestParam;
import org.springframework.web.bind.annotation.RestController;
import reactor.core.publisher.Mono;
import tools.jackson.databind.node.BooleanNode;
import tools.jackson.databind.node.ObjectNode;

/**
 * Qdrant's service reports: {@code GET /telemetry} (this server, its collections and the REST
 * requests it answered), {@code GET /issues} and {@code DELETE /issues} (problems that need a
 * person: collections that failed to open, failed index builds or WALs) and {@code GET /cluster}
 * ({@code {"status": "disabled"}} for a standalone server, as Qdrant answers without distributed
 * mode; the registered nodes in cluster mode).
 */
@RestController
public class ServiceInfoController {

  /** CPU features Qdrant's telemetry lists, as {@code /proc/cpuinfo} names them. */
  private static final List<String> CPU_FLAGS =
      List.of("sse", "sse2", "sse4_1", "sse4_2", "avx", "avx2", "fma", "f16c", "avx512f", "neon");

  private final CollectionService service;
  private final FlashVecNode node;
  private final Blocking blocking;
  private final RestResponses responses;
  private final SearchMetrics searchMetrics;
  private final FlashVecProperties props;
  private final IssueTracker issues = new IssueTracker(Instant::now);

  /** This process's telemetry id, new at each start as Qdrant's. */
  private final String id = UUID.randomUUID().toString();

  ServiceInfoController(
      CollectionService service,
      FlashVecNode node,
      Blocking blocking,
      RestResponses responses,
      SearchMetrics searchMetrics,
      FlashVecProperties props) {
    this.service = service;
    this.node = node;
    this.blocking = blocking;
    this.responses = responses;
    this.searchMetrics = searchMetrics;
    this.props = props;
  }

  /**
   * Qdrant's telemetry. Level 0 (the default): {@code id}, {@code app} (name, version, start time),
   * {@code collections.number_of_collections}, {@code cluster.enabled}, {@code
   * requests.rest.responses} by endpoint and status and {@code quota}; level 1 adds {@code
   * app.system}, each collection's aggregated numbers ({@code vectors}, {@code optimizers_status},
   * {@code params}), {@code memory}, {@code hardware} and {@code search_pool}; level 2 gives each
   * collection's {@code config} instead, level 3 its shards, level 4 and up their segments ({@link
   * TelemetryDetails}). {@code per_collection=true} adds {@code
   * requests.rest.per_collection_responses}. {@code anonymize} rounds the sizes and the start time
   * as Qdrant's does.
   */
  @GetMapping("/telemetry")
  Mono<ResponseEntity<byte[]>> telemetry(
      @RequestParam(required = false) Boolean anonymize,
      @RequestParam(name = "details_level", required = false) Integer detailsLevel,
      @RequestParam(name = "per_collection", required = false) Boolean perCollection,
      @RequestParam(required = false) Integer timeout) {
    return blocking.answer(
        () -> {
          if (detailsLevel != null && detailsLevel < 0) {
            throw new InvalidInputException(
                "Wrong input: details_level must be 0 or more [details_level="
                    + detailsLevel
                    + "]");
          }
          int level = detailsLevel == null ? 0 : detailsLevel;
          boolean anon = Boolean.TRUE.equals(anonymize);
          if (timeout != null && timeout < 1) {
            throw new InvalidInputException(
                "Wrong input: timeout must be 1 or more [timeout=" + timeout + "]");
          }
          ObjectNode r = Json.object();
          r.put("id", id);
          ObjectNode app = r.putObject("app");
          app.put("name", "flashvec");
          app.put("version", SystemController.VERSION);
          Instant startup =
              Instant.ofEpochMilli(ManagementFactory.getRuntimeMXBean().getStartTime());
          app.put(
              "startup",
              (anon ? startup.truncatedTo(java.time.temporal.ChronoUnit.MINUTES) : startup)
                  .toString());
          if (level >= 1) {
            features(app.putObject("features"));
            system(app.putObject("system"), anon);
          }
          List<String> names = service.listCollections();
          ObjectNode collections = r.putObject("collections");
          collections.put("number_of_collections", names.size());
          FlashVecNode.Resources res = node.resources();
          if (level >= 1) {
            var list = collections.putArray("collections");
            var snapshots = collections.putArray("snapshots");
            for (String name : names) {
              try {
                CollectionService.CollectionDescription d = service.describe(name);
                if (level == 1) {
                  list.add(aggregated(d, anon));
                  continue;
                }
                list.add(
                    TelemetryDetails.collection(
                        d,
                        level >= 3 ? service.clusterInfo(name) : null,
                        d.info() == null
                            ? null
                            : io.flashvec.api.collections.CollectionsController.configJson(
                                d.config(), d.info(), props),
                        res,
                        level));
                snapshots.addObject().put("id", name);
              } catch (io.flashvec.index.NotFoundException e) {
                // deleted since it was listed
              }
            }
          }
          r.putObject("cluster").put("enabled", props.cluster().enabled());
          ObjectNode requests = r.putObject("requests");
          requests.set("rest", restResponses(responses, Boolean.TRUE.equals(perCollection)));
          ObjectNode grpc = requests.putObject("grpc"); // no gRPC API for clients
          grpc.putObject("responses");
          if (Boolean.TRUE.equals(perCollection)) {
            grpc.putObject("per_collection_responses");
          }
          if (level >= 1) {
            r.set("memory", TelemetryDetails.memory(res));
            r.set("hardware", TelemetryDetails.hardware(names, service.aliases(), searchMetrics));
            r.set("search_pool", TelemetryDetails.searchPool(res));
          }
          r.set("quota", TelemetryDetails.quota(res, props.dataDir()));
          return r;
        });
  }

  /** A collection as Qdrant's level-1 telemetry aggregates it. */
  private static ObjectNode aggregated(CollectionService.CollectionDescription d, boolean anon) {
    ObjectNode o = Json.object();
    long points = d.info() == null ? 0 : d.info().points();
    o.put("vectors", anon ? anonymized(points) : points);
    boolean failed =
        d.info() != null
            && (d.info().buildFailure() != null || d.info().compactionFailure() != null);
    if (failed) {
      o.putObject("optimizers_status").put("error", "an index build or compaction failed");
    } else {
      o.put("optimizers_status", "ok");
    }
    ObjectNode params = o.putObject("params");
    ObjectNode vectors = params.putObject("vectors");
    if (d.config().hasPrimary()) {
      vectors.put("size", d.config().dimension());
      vectors.put("distance", d.config().distance().apiName());
    }
    params.put("shard_number", d.config().shardNumber());
    params.put("replication_factor", d.config().replicationFactor());
    params.put("write_consistency_factor", 1);
    params.put("on_disk_payload", d.info() == null || d.info().tuning().onDiskPayload());
    return o;
  }

  /**
   * A size as Qdrant's {@code anonymize} gives it: kept to its leading digits (about five), the
   * rest zeroed.
   */
  static long anonymized(long v) {
    if (v <= 0) {
      return v;
    }
    long log10 = Math.round(Math.log10(v));
    if (log10 <= 4) {
      return v;
    }
    long coeff = 1;
    for (long i = 0; i < log10 - 4; i++) {
      coeff *= 10;
    }
    return v / coeff * coeff;
  }

  /**
   * Qdrant's build features, as FlashVec has them: a release build without Qdrant's debug endpoints
   * ({@code service_debug_feature}, {@code staging}), recovery mode, GPU indexing or RocksDB, so
   * every one is false.
   */
  static void features(ObjectNode f) {
    f.put("debug", false);
    f.put("service_debug_feature", false);
    f.put("recovery_mode", false);
    f.put("gpu", false);
    f.put("rocksdb", false);
    f.put("staging", false);
  }

  private void system(ObjectNode s, boolean anon) {
    s.put("is_docker", Files.exists(Path.of("/.dockerenv")));
    s.put("cores", Runtime.getRuntime().availableProcessors());
    long cgroup = SystemMemory.cgroupLimit(Path.of("/proc/self/cgroup"), Path.of("/sys/fs/cgroup"));
    long ram = SystemMemory.physicalBytes();
    long ramKib = (cgroup > 0 && cgroup < ram ? cgroup : ram) / 1024;
    s.put("ram_size", anon ? anonymized(ramKib) : ramKib);
    try {
      long disk = Files.getFileStore(props.dataDir()).getTotalSpace() / 1024;
      s.put("disk_size", anon ? anonymized(disk) : disk);
    } catch (IOException | RuntimeException e) {
      // not there (yet): the field is optional
    }
    s.put("cpu_flags", String.join(",", cpuFlags()));
  }

  private static List<String> cpuFlags() {
    Set<String> present = new TreeSet<>();
    try {
      for (String line : Files.readAllLines(Path.of("/proc/cpuinfo"))) {
        if (line.startsWith("flags") || line.startsWith("Features")) {
          present.addAll(List.of(line.substring(line.indexOf(':') + 1).trim().split("\\s+")));
          break;
        }
      }
    } catch (IOException | RuntimeException e) {
      return List.of();
    }
    List<String> out = new ArrayList<>();
    for (String f : CPU_FLAGS) {
      if (present.contains(f) || (f.equals("neon") && present.contains("asimd"))) {
        out.add(f);
      }
    }
    return out;
  }

  /**
   * {@code {"responses": {"PUT /collections/{collection_name}/points": {"200": {"count", ...}}}}}
   * from {@link RestResponses}, and with {@code perCollection} the same by collection as {@code
   * per_collection_responses} (routes that name an existing collection).
   */
  static ObjectNode restResponses(RestResponses responses, boolean perCollection) {
    ObjectNode rest = Json.object();
    endpoints(rest.putObject("responses"), responses.byEndpoint());
    if (perCollection) {
      ObjectNode per = rest.putObject("per_collection_responses");
      responses.byCollection().forEach((c, e) -> endpoints(per.putObject(c), e));
    }
    return rest;
  }

  private static void endpoints(
      ObjectNode out, Map<String, Map<Integer, RestResponses.Stats>> byEndpoint) {
    byEndpoint.forEach(
        (endpoint, statuses) -> {
          ObjectNode e = out.putObject(endpoint);
          statuses.forEach(
              (status, sum) -> {
                ObjectNode st = e.putObject(Integer.toString(status));
                st.put("count", sum.count());
                st.put("avg_duration_micros", (float) sum.avgMicros());
                st.put("min_duration_micros", (float) sum.minMicros());
                st.put("max_duration_micros", (float) sum.maxMicros());
                st.put("total_duration_micros", sum.totalMicros());
                st.put("last_responded", sum.lastResponded().toString());
              });
        });
  }

  @GetMapping("/issues")
  Mono<ResponseEntity<byte[]>> issues() {
    return blocking.answer(
        () -> {
          ObjectNode r = Json.object();
          var arr = r.putArray("issues");
          for (IssueTracker.Dated d : issues.report(currentIssues())) {
            ObjectNode o = arr.addObject();
            o.put("id", d.issue().id());
            o.put("description", d.issue().description());
            o.putObject("solution").put("refactor", d.issue().solution());
            o.put("timestamp", d.since().toString());
            o.put("related_collection", d.issue().relatedCollection());
          }
          return r;
        });
  }

  @DeleteMapping("/issues")
  Mono<ResponseEntity<byte[]>> clearIssues() {
    return blocking.answer(
        () -> {
          issues.clear(currentIssues());
          return BooleanNode.TRUE;
        });
  }

  /** What needs a person now: collections that failed to open, failed builds and WALs. */
  private List<IssueTracker.Issue> currentIssues() {
    List<IssueTracker.Issue> out = new ArrayList<>();
    node.failedCollections()
        .keySet()
        .forEach(
            name ->
                out.add(
                    new IssueTracker.Issue(
                        "collection_failed_to_open/" + name,
                        "Collection `"
                            + name
                            + "` could not be opened at start-up and answers 503;"
                            + " GET /collections/"
                            + name
                            + " says why",
                        "Repair or restore the file it names, then restart; or delete the"
                            + " collection (DELETE /collections/"
                            + name
                            + ")",
                        name)));
    for (String name : service.listCollections()) {
      if (node.failedCollections().containsKey(name)) {
        continue;
      }
      String failure;
      try {
        failure = service.describe(name).info().buildFailure();
      } catch (FlashVecException e) {
        continue; // deleted meanwhile, or a shard out of reach: not this report's business
      }
      if (failure != null) {
        out.add(
            new IssueTracker.Issue(
                "collection_failed/" + name,
                "Collection `" + name + "` is red: " + failure,
                failure.contains("WAL")
                    ? "Free or fix the disk, then restart the server: writes are refused until then"
                    : "Searches scan the segment exactly meanwhile; free memory or disk, then"
                        + " compact the collection (POST /collections/"
                        + name
                        + "/compact) or restart",
                name));
      }
    }
    out.addAll(memoryIssues(node.resources()));
    return out;
  }

  /**
   * The PQ code sizes the memory budget shrank (ADR 0025): a search steered by smaller codes finds
   * fewer of the true neighbours, and the segments written meanwhile keep those codes until a merge
   * or a recode rewrites them, so the report stays until the server restarts (or it is dismissed).
   * The id names both sizes: a smaller size after a dismissal is reported again.
   */
  static List<IssueTracker.Issue> memoryIssues(FlashVecNode.Resources res) {
    List<IssueTracker.Issue> out = new ArrayList<>();
    new TreeMap<>(res.pqBytesShrunk())
        .forEach(
            (preferred, chosen) ->
                out.add(
                    new IssueTracker.Issue(
                        "pq_codes_shrunk_by_memory_budget/" + preferred + "-to-" + chosen,
                        "Segments were written with "
                            + chosen
                            + "-byte PQ codes instead of the default "
                            + preferred
                            + ": the codes of the "
                            + res.pointsHeld()
                            + " points held must fit half of the memory budget's resident slice"
                            + (res.memoryPlan() == null
                                ? ""
                                : " (" + ByteSize.human(res.memoryPlan().resident()) + ")")
                            + ". Searches steered by smaller codes find fewer of the true"
                            + " neighbours (96-d, search_list 100: recall@10 0.99 with 32 bytes,"
                            + " 0.90 with 16, 0.52 with 8)",
                        "Raise the memory budget (flashvec.memory.budget,"
                            + " FLASHVEC_MEMORY_BUDGET, Helm memory.budget): segments merged from then"
                            + " on get larger codes; or set the collection's"
                            + " index.pq_subspaces to keep a size. Once writes stop for 20 s, codes"
                            + " grow back as far as 70% of the resident slice holds them",
                        null)));
    return out;
  }

  /**
   * Qdrant's Raft recovery of this peer: a standalone server answers 405 as Qdrant does without
   * distributed mode; FlashVec's cluster keeps its state in etcd and has no Raft log to recover.
   */
  @PostMapping("/cluster/recover")
  Mono<ResponseEntity<byte[]>> recover() {
    return blocking.answer(
        () -> {
          throw clusterOperation(
              "a node's state is in etcd and its replicas resync by themselves, there is no Raft"
                  + " log to recover");
        });
  }

  /**
   * Qdrant's removal of a peer: 405 standalone; in a FlashVec cluster a node leaves by stopping
   * (its registration lease expires) and its replicas are resynced elsewhere when it returns.
   */
  @DeleteMapping("/cluster/peer/{peer_id}")
  Mono<ResponseEntity<byte[]>> removePeer(@PathVariable("peer_id") String peerId) {
    return blocking.answer(
        () -> {
          throw clusterOperation(
              "a node leaves the cluster by stopping: its registration expires with its lease"
                  + " [peer_id="
                  + peerId
                  + "]");
        });
  }

  /** 405 on a standalone server, as Qdrant's; 400 naming why in cluster mode. */
  private FlashVecException clusterOperation(String clusterWhy) {
    if (!props.cluster().enabled()) {
      return new StandaloneMode();
    }
    return new InvalidInputException("Wrong input: not supported: " + clusterWhy);
  }

  /** Qdrant's answer to a cluster operation without distributed mode. */
  static final class StandaloneMode extends FlashVecException {
    StandaloneMode() {
      super(405, "FlashVec is running in standalone mode", null);
    }
  }

  /**
   * Qdrant's cluster status: {@code {"status": "disabled"}} standalone; in cluster mode {@code
   * "enabled"}, this node's peer id and every registered node.
   */
  @GetMapping("/cluster")
  Mono<ResponseEntity<byte[]>> cluster() {
    return blocking.answer(
        () -> {
          ObjectNode r = Json.object();
          CollectionService.Peers peers = service.peers();
          if (peers == null) {
            r.put("status", "disabled");
            return r;
          }
          r.put("status", "enabled");
          r.put("peer_id", peers.self());
          ObjectNode ps = r.putObject("peers");
          for (CollectionService.Peer p : peers.peers()) {
            ObjectNode o = ps.putObject(Long.toString(p.peerId()));
            o.put("uri", p.uri());
            o.put("node_id", p.nodeId());
            var roles = o.putArray("roles");
            p.roles().forEach(roles::add);
          }
          // FlashVec's nodes agree through etcd, not Raft: there is no term, log or consensus
          // thread of their own to report
          ObjectNode raft = r.putObject("raft_info");
          raft.put("term", 0);
          raft.put("commit", 0);
          raft.put("pending_operations", 0);
          raft.putNull("leader");
          raft.putNull("role");
          raft.put("is_voter", false);
          r.putObject("consensus_thread_status").put("consensus_thread_status", "stopped");
          r.putObject("message_send_failures");
          r.put("metadata_store", "etcd");
          return r;
        });
  }
}
