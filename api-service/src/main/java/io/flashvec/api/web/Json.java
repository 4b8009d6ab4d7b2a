package io.flashvec.api.web;

import io.flashvec.index.PointId;
import io.flashvec.index.filter.StoredPayloads;
import java.math.BigInteger;
import org.springframework.http.HttpStatus;
import org.springframework.http.MediaType;
import org.springframework.http.ResponseEntity;
import org.springframework.web.server.ServerWebExchange;
import reactor.core.publisher.Mono;
import tools.jackson.core.JacksonException;
import tools.jackson.core.StreamReadFeature;
import tools.jackson.core.json.JsonReadFeature;
import tools.jackson.databind.JsonNode;
import tools.jackson.databind.json.JsonMapper;
import tools.jackson.databind.node.ArrayNode;
import tools.jackson.databind.node.ObjectNode;

/**
 * JSON in and out, and the Qdrant envelope {@code {"result": …, "status": "ok", "time": s}}.
 *
 * <p>Reading accepts {@code NaN} and {@code Infinity} literals (Python's {@code json} writes them)
 * so that validation can reject them with a message naming the value rather than a parse error. It
 * refuses a key that appears twice in one object and a string holding a lone UTF-16 surrogate
 * ({@link JsonTreeReader}), so that what is stored is what the client meant and can be read back by
 * any client.
 */
public final class Json {

  public static final JsonMapper MAPPER =
      JsonMapper.builder()
          .enable(JsonReadFeature.ALLOW_NON_NUMERIC_NUMBERS)
          .enable(StreamReadFeature.STRICT_DUPLICATE_DETECTION)
          .build();

  private static final BigInteger TWO_64 = BigInteger.ONE.shiftLeft(64);

  private Json() {}

  public static ObjectNode object() {
    return MAPPER.createObjectNode();
  }

  public static ArrayNode array() {
    return MAPPER.createArrayNode();
  }

  /**
   * Parses a request body; an empty or malformed body, a duplicate key or a lone surrogate is a 400
   * ({@link BadJsonException}) naming the problem.
   */
  public static JsonNode parse(byte[] body) {
    if (body == null || body.length == 0) {
      throw new BadJsonException("Format error in JSON body: request body is empty");
    }
    JsonNode fast = JsonTreeReader.read(body);
    if (fast != null) {
      return Requests.refuseShardKey(fast);
    }
    JsonNode tree;
    try {
      tree = MAPPER.readTree(body);
    } catch (JacksonException e) {
      throw new BadJsonException("Format error in JSON body: " + e.getOriginalMessage());
    }
    // what the fast reader left to Jackson (a very long string, say) is held to its rules too
    String lone = loneSurrogatePath(tree, "");
    if (lone != null) {
      throw new BadJsonException(
          "Format error in JSON body: lone UTF-16 surrogate in a key or string [at=" + lone + "]");
    }
    return Requests.refuseShardKey(tree);
  }

  /** Where in {@code n} a key or string holds a lone surrogate ({@code ""}: the root), or null. */
  private static String loneSurrogatePath(JsonNode n, String path) {
    if (n.isString()) {
      return hasLoneSurrogate(n.asString()) ? path : null;
    }
    if (n.isArray()) {
      for (int i = 0; i < n.size(); i++) {
        String p = loneSurrogatePath(n.get(i), path + "[" + i + "]");
        if (p != null) {
          return p;
        }
      }
    } else if (n.isObject()) {
      for (var e : n.properties()) {
        String p = path + (path.isEmpty() ? "" : ".") + JsonTreeReader.quote(e.getKey(), 40, false);
        if (hasLoneSurrogate(e.getKey())) {
          return p;
        }
        p = loneSurrogatePath(e.getValue(), p);
        if (p != null) {
          return p;
        }
      }
    }
    return null;
  }

  /** Whether {@code s} holds a surrogate that is not half of a pair. */
  static boolean hasLoneSurrogate(String s) {
    for (int i = 0; i < s.length(); i++) {
      char c = s.charAt(i);
      if (Character.isHighSurrogate(c)
          && i + 1 < s.length()
          && Character.isLowSurrogate(s.charAt(i + 1))) {
        i++;
      } else if (Character.isSurrogate(c)) {
        return true;
      }
    }
    return false;
  }

  /**
   * A stored payload's tree. Payloads stored by versions that let lone surrogates in are read with
   * U+FFFD in their place ({@link StoredPayloads#repair}), so that they can be returned and
   * updated.
   */
  public static JsonNode readStored(byte[] payload) {
    return MAPPER.readTree(StoredPayloads.repair(payload));
  }

  /** Parses a body that may be absent (treated as {@code {}}). */
  public static JsonNode parseOptional(byte[] body) {
    if (body == null || body.length == 0) {
      return object();
    }
    return parse(body);
  }

  /** A successful response in the envelope. */
  public static ResponseEntity<byte[]> ok(JsonNode result, long startNanos) {
    ObjectNode o = object();
    o.set("result", result);
    o.put("status", "ok");
    o.put("time", seconds(startNanos));
    return raw(HttpStatus.OK, o);
  }

  /**
   * A successful response with FlashVec's extra envelope fields (e.g. {@code flashvec_stats}),
   * which Qdrant clients ignore.
   */
  public static ResponseEntity<byte[]> ok(JsonNode result, long startNanos, ObjectNode extra) {
    ObjectNode o = object();
    o.set("result", result);
    o.put("status", "ok");
    o.put("time", seconds(startNanos));
    if (extra != null) {
      o.setAll(extra);
    }
    return raw(HttpStatus.OK, o);
  }

  /** An error response: {@code {"status": {"error": message}, "time": s}}. */
  public static ResponseEntity<byte[]> error(HttpStatus status, String message, long startNanos) {
    ObjectNode o = object();
    o.putObject("status").put("error", message);
    o.put("time", seconds(startNanos));
    return raw(status, o);
  }

  /** Writes a Qdrant-style error straight to the response (web filters, before any handler). */
  public static Mono<Void> writeError(
      ServerWebExchange exchange, HttpStatus status, String message) {
    HttpRejections.reject(exchange, HttpRejections.reasonOf(status.value()), message);
    ResponseEntity<byte[]> r = error(status, message, System.nanoTime());
    var response = exchange.getResponse();
    response.setStatusCode(r.getStatusCode());
    response.getHeaders().putAll(r.getHeaders());
    if (status == HttpStatus.CONTENT_TOO_LARGE) {
      // not worth reading to its end: the connection closes after the answer
      response.getHeaders().setConnection("close");
      return response.writeWith(Mono.just(response.bufferFactory().wrap(r.getBody())));
    }
    return UnreadBodyFilter.drainIfUnread(exchange)
        .then(response.writeWith(Mono.just(response.bufferFactory().wrap(r.getBody()))));
  }

  public static ResponseEntity<byte[]> raw(HttpStatus status, JsonNode body) {
    return ResponseEntity.status(status)
        .contentType(MediaType.APPLICATION_JSON)
        .body(MAPPER.writeValueAsBytes(body));
  }

  public static double seconds(long startNanos) {
    return (System.nanoTime() - startNanos) / 1e9;
  }

  /** Writes an id as Qdrant does: a JSON number (unsigned 64-bit) or a UUID string. */
  public static void putId(ObjectNode o, String field, PointId id) {
    if (id.isUuid()) {
      o.put(field, id.toString());
    } else if (id.number() >= 0) {
      o.put(field, id.number());
    } else {
      o.put(field, BigInteger.valueOf(id.number()).add(TWO_64));
    }
  }
}
