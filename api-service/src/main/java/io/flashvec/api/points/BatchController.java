package io.flashvec.api.points;

import io.flashvec.api.FlashVecProperties;
import io.flashvec.api.collections.StrictModeGuard;
import io.flashvec.api.web.Blocking;
import io.flashvec.api.web.Json;
import io.flashvec.index.FlashVecException;
import io.flashvec.index.InvalidInputException;
import io.flashvec.index.NotFoundException;
import io.flashvec.index.TooLargeException;
import io.flashvec.index.collection.Collection;
import java.util.ArrayList;
import java.util.List;
import org.springframework.http.ResponseEntity;
import org.springframework.web.bind.annotation.PathVariable;
import org.springframework.web.bind.annotation.PostMapping;
import org.springframework.web.bind.annotation.RequestBody;
import org.springframework.web.bind.annotation.RequestParam;
import org.springframework.web.bind.annotation.RestController;
import reactor.core.publisher.Mono;
import tools.jackson.databind.JsonNode;
import tools.jackson.databind.node.ArrayNode;

/**
 * Qdrant's batch update ({@code POST /collections/{name}/points/batch}): a list of operations
 * ({@code upsert}, {@code delete}, {@code set_payload}, {@code overwrite_payload}, {@code
 * delete_payload}, {@code clear_payload}, {@code update_vectors}, {@code delete_vectors}), each in
 * the shape of its own endpoint's body, applied in order with the request's {@code wait}. The
 * result lists one update result per operation.
 *
 * <p>As in Qdrant, the batch is not a transaction: every operation's shape is checked before the
 * first is applied, but one that fails when applied (a 404 for an id that does not exist, say)
 * stops the batch with the operations before it applied; the error names the operation.
 */
@RestController
public class BatchController {

  private final PointsController points;
  private final PayloadController payloads;
  private final Blocking blocking;
  private final int maxBatch;
  private final StrictModeGuard strict;

  BatchController(
      PointsController points,
      PayloadController payloads,
      Blocking blocking,
      FlashVecProperties props,
      StrictModeGuard strict) {
    this.points = points;
    this.payloads = payloads;
    this.blocking = blocking;
    this.maxBatch = props.limits().maxBatchPoints();
    this.strict = strict;
  }

  private static final List<String> KINDS =
      List.of(
          "upsert",
          "delete",
          "set_payload",
          "overwrite_payload",
          "delete_payload",
          "clear_payload",
          "update_vectors",
          "delete_vectors");

  @PostMapping("/collections/{name}/points/batch")
  Mono<ResponseEntity<byte[]>> batch(
      @PathVariable String name,
      @RequestParam(defaultValue = "false") boolean wait,
      @RequestBody(required = false) byte[] body) {
    return blocking.answerWrite(
        name,
        body,
        b -> {
          JsonNode ops = b.get("operations");
          if (ops == null || !ops.isArray()) {
            throw new InvalidInputException(
                "Wrong input: a batch update needs `operations`, a list of operations");
          }
          if (ops.size() > maxBatch) {
            throw new TooLargeException(
                "Payload too large: too many operations [operations="
                    + ops.size()
                    + ", max="
                    + maxBatch
                    + "]");
          }
          List<String> kinds = new ArrayList<>(ops.size());
          for (int i = 0; i < ops.size(); i++) {
            kinds.add(kind(ops.get(i), i));
          }
          strict.check(name, StrictModeGuard.Route.BATCH, b);
          ArrayNode results = Json.MAPPER.createArrayNode();
          for (int i = 0; i < ops.size(); i++) {
            String kind = kinds.get(i);
            JsonNode op = ops.get(i).get(kind);
            try {
              results.add(PointsController.update(apply(name, kind, op, wait)));
            } catch (FlashVecException e) {
              throw at(e, "operations[" + i + "]." + kind);
            }
          }
          return results;
        });
  }

  /** The one operation key of {@code op}, whose value must be an object. */
  private static String kind(JsonNode op, int i) {
    if (op == null || !op.isObject() || op.size() != 1) {
      throw new InvalidInputException(
          "Wrong input: operations["
              + i
              + "] must be an object with one of "
              + KINDS
              + " [operations["
              + i
              + "]="
              + io.flashvec.api.web.Requests.abbreviate(op)
              + "]");
    }
    String kind = op.propertyNames().iterator().next();
    if (!KINDS.contains(kind)) {
      throw new InvalidInputException(
          "Wrong input: unknown operation [operations["
              + i
              + "]="
              + kind
              + "], expected one of "
              + KINDS);
    }
    if (!op.get(kind).isObject()) {
      throw new InvalidInputException(
          "Wrong input: operations[" + i + "]." + kind + " must be an object");
    }
    return kind;
  }

  /** {@code e} with {@code where} after its kind ("Wrong input: where: …"), same status. */
  private static FlashVecException at(FlashVecException e, String where) {
    String m = e.getMessage();
    int colon = m.indexOf(": ");
    String msg =
        colon > 0 && colon < 24
            ? m.substring(0, colon + 2) + where + ": " + m.substring(colon + 2)
            : where + ": " + m;
    return switch (e) {
      case InvalidInputException x -> new InvalidInputException(msg);
      case NotFoundException x -> new NotFoundException(msg);
      case TooLargeException x -> new TooLargeException(msg);
      default -> e;
    };
  }

  private Collection.UpdateResult apply(String name, String kind, JsonNode op, boolean wait) {
    return switch (kind) {
      case "upsert" -> points.upsert(name, op, wait);
      case "delete" -> points.delete(name, op, wait);
      case "update_vectors" -> points.updateVectors(name, op, wait);
      case "delete_vectors" -> points.deleteVectors(name, op, wait);
      case "set_payload" -> payloads.apply(name, op, wait, PayloadController.SET);
      case "overwrite_payload" -> payloads.apply(name, op, wait, PayloadController.OVERWRITE);
      case "delete_payload" -> payloads.apply(name, op, wait, PayloadController.DELETE_KEYS);
      case "clear_payload" -> payloads.apply(name, op, wait, PayloadController.CLEAR);
      default -> throw new IllegalStateException("unchecked operation " + kind);
    };
  }
}
