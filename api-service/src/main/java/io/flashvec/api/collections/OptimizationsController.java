package io.flashvec.api.collections;

import io.flashvec.api.web.Blocking;
import io.flashvec.api.web.Json;
import io.flashvec.cluster.CollectionNames;
import io.flashvec.cluster.CollectionService;
import io.flashvec.index.InvalidInputException;
import io.flashvec.index.Optimizations;
import io.flashvec.index.Optimizations.Optimization;
import io.flashvec.index.Optimizations.SegmentRef;
import java.time.Duration;
import java.util.EnumSet;
import java.util.List;
import java.util.Locale;
import java.util.Set;
import org.springframework.http.ResponseEntity;
import org.springframework.web.bind.annotation.GetMapping;
import org.springframework.web.bind.annotation.PathVariable;
import org.springframework.web.bind.annotation.RequestParam;
import org.springframework.web.bind.annotation.RestController;
import reactor.core.publisher.Mono;
import tools.jackson.databind.node.ArrayNode;
import tools.jackson.databind.node.ObjectNode;

/**
 * Qdrant 1.19's {@code GET /collections/{name}/optimizations}: the index builds and compactions
 * running now, and with {@code ?with=queued,completed,idle_segments} (comma-separated, spaces
 * around items allowed) the work waiting, the finished ones (newest first, at most {@code
 * ?completed_limit}, default 16) and the segments that need nothing. A standalone server only; a
 * cluster proxy refuses it ({@link CollectionService#optimizations}).
 */
@RestController
public class OptimizationsController {

  /** The optional parts of the answer, as {@code ?with} names them. */
  enum Part {
    QUEUED("queued"),
    COMPLETED("completed"),
    IDLE_SEGMENTS("idle_segments");

    final String param;

    Part(String param) {
      this.param = param;
    }
  }

  /** Qdrant's default of {@code completed_limit}. */
  static final int DEFAULT_COMPLETED_LIMIT = 16;

  private final CollectionService service;
  private final Blocking blocking;

  OptimizationsController(CollectionService service, Blocking blocking) {
    this.service = service;
    this.blocking = blocking;
  }

  @GetMapping("/collections/{name}/optimizations")
  Mono<ResponseEntity<byte[]>> optimizations(
      @PathVariable String name,
      @RequestParam(name = "with", required = false) String with,
      @RequestParam(name = "completed_limit", required = false) String completedLimit) {
    return blocking.answer(
        () -> {
          Set<Part> parts = parseWith(with);
          int limit = parseLimit(completedLimit);
          Optimizations o = service.optimizations(CollectionNames.validate(name), limit);
          return render(o, parts);
        });
  }

  /**
   * The parts {@code with} names ({@code null}: none); 400 naming an unknown one. Empty items (a
   * trailing comma) are skipped.
   */
  static Set<Part> parseWith(String with) {
    Set<Part> parts = EnumSet.noneOf(Part.class);
    if (with == null) {
      return parts;
    }
    for (String item : with.split(",", -1)) {
      String v = item.strip();
      if (v.isEmpty()) {
        continue;
      }
      Part found = null;
      for (Part p : Part.values()) {
        if (p.param.equals(v)) {
          found = p;
        }
      }
      if (found == null) {
        throw new InvalidInputException(
            "Query deserialize error: unknown value `"
                + v
                + "` of `with`, expected one of `queued`, `completed`, `idle_segments`");
      }
      parts.add(found);
    }
    return parts;
  }

  /** {@code completed_limit}: a whole number of at least 0 ({@code null}: 16); else 400. */
  static int parseLimit(String limit) {
    if (limit == null) {
      return DEFAULT_COMPLETED_LIMIT;
    }
    try {
      int n = Integer.parseInt(limit.strip());
      if (n >= 0) {
        return n;
      }
    } catch (NumberFormatException e) {
      // answered below
    }
    throw new InvalidInputException(
        "Query deserialize error: invalid value `"
            + limit
            + "` of `completed_limit`, expected a whole number of at least 0");
  }

  /** Qdrant's {@code OptimizationsResponse} of {@code o} with the optional {@code parts}. */
  static ObjectNode render(Optimizations o, Set<Part> parts) {
    ObjectNode r = Json.object();
    ObjectNode summary = r.putObject("summary");
    summary.put("queued_optimizations", o.queued().size());
    summary.put("queued_segments", o.queuedSegments());
    summary.put("queued_points", o.queuedPoints());
    summary.put("idle_segments", o.idle().size());
    optimizations(r.putArray("running"), o.running());
    if (parts.contains(Part.QUEUED)) {
      ArrayNode queued = r.putArray("queued");
      for (Optimizations.Queued q : o.queued()) {
        ObjectNode n = queued.addObject();
        n.put("optimizer", q.optimizer());
        segments(n.putArray("segments"), q.segments());
      }
    }
    if (parts.contains(Part.COMPLETED)) {
      optimizations(r.putArray("completed"), o.completed());
    }
    if (parts.contains(Part.IDLE_SEGMENTS)) {
      segments(r.putArray("idle_segments"), o.idle());
    }
    return r;
  }

  private static void optimizations(ArrayNode out, List<Optimization> list) {
    for (Optimization op : list) {
      ObjectNode n = out.addObject();
      n.put("uuid", op.uuid().toString());
      n.put("optimizer", op.optimizer());
      switch (op.status()) {
        case OPTIMIZING -> n.put("status", "optimizing");
        case DONE -> n.put("status", "done");
        case CANCELLED -> n.putObject("status").put("cancelled", String.valueOf(op.reason()));
        case ERROR -> n.putObject("status").put("error", String.valueOf(op.reason()));
      }
      segments(n.putArray("segments"), op.segments());
      ObjectNode progress = n.putObject("progress");
      progress.put("name", op.optimizer().toLowerCase(Locale.ROOT));
      progress.put("started_at", op.startedAt().toString());
      if (op.finishedAt() == null) {
        progress.putNull("finished_at");
        progress.putNull("duration_sec");
      } else {
        progress.put("finished_at", op.finishedAt().toString());
        Duration d = Duration.between(op.startedAt(), op.finishedAt());
        progress.put("duration_sec", d.toNanos() / 1e9);
      }
      if (op.done() < 0) {
        progress.putNull("done");
      } else {
        progress.put("done", op.done());
      }
      progress.put("total", op.total());
    }
  }

  private static void segments(ArrayNode out, List<SegmentRef> refs) {
    for (SegmentRef s : refs) {
      out.addObject().put("uuid", s.uuid().toString()).put("points_count", s.points());
    }
  }
}
