package io.flashvec.api.collections;

import io.flashvec.api.web.Blocking;
import io.flashvec.api.web.Json;
import io.flashvec.api.web.Requests;
import io.flashvec.cluster.Aliases;
import io.flashvec.cluster.CollectionNames;
import io.flashvec.cluster.CollectionService;
import io.flashvec.index.InvalidInputException;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.springframework.http.ResponseEntity;
import org.springframework.web.bind.annotation.GetMapping;
import org.springframework.web.bind.annotation.PathVariable;
import org.springframework.web.bind.annotation.PostMapping;
import org.springframework.web.bind.annotation.RequestBody;
import org.springframework.web.bind.annotation.RestController;
import reactor.core.publisher.Mono;
import tools.jackson.databind.JsonNode;
import tools.jackson.databind.node.ArrayNode;
import tools.jackson.databind.node.BooleanNode;
import tools.jackson.databind.node.ObjectNode;

/**
 * Qdrant's collection aliases: {@code POST /collections/aliases} with {@code {"actions":
 * [{"create_alias": {"collection_name", "alias_name"}}, {"delete_alias": {"alias_name"}},
 * {"rename_alias": {"old_alias_name", "new_alias_name"}}]}}, applied all together or not at all,
 * and the listings {@code GET /aliases} and {@code GET /collections/{name}/aliases}.
 */
@RestController
public class AliasesController {

  private final CollectionService service;
  private final Blocking blocking;

  AliasesController(CollectionService service, Blocking blocking) {
    this.service = service;
    this.blocking = blocking;
  }

  @PostMapping("/collections/aliases")
  Mono<ResponseEntity<byte[]>> update(@RequestBody(required = false) byte[] body) {
    return blocking.answer(
        () -> {
          service.updateAliases(parse(Json.parse(body)));
          return BooleanNode.TRUE;
        });
  }

  @GetMapping("/aliases")
  Mono<ResponseEntity<byte[]>> list() {
    return blocking.answer(() -> describe(service.aliases()));
  }

  /**
   * The aliases of collection {@code name}; none (not a 404) for a collection that is not there.
   */
  @GetMapping("/collections/{name}/aliases")
  Mono<ResponseEntity<byte[]>> ofCollection(@PathVariable String name) {
    return blocking.answer(
        () -> {
          CollectionNames.validate(name);
          Map<String, String> all = new java.util.TreeMap<>(service.aliases());
          all.values().removeIf(c -> !c.equals(name));
          return describe(all);
        });
  }

  /** {@code {"aliases": [{"alias_name", "collection_name"}]}} by collection, then alias. */
  private static ObjectNode describe(Map<String, String> aliases) {
    List<Map.Entry<String, String>> sorted = new ArrayList<>(aliases.entrySet());
    sorted.sort(
        Map.Entry.<String, String>comparingByValue().thenComparing(Map.Entry.comparingByKey()));
    ObjectNode r = Json.object();
    ArrayNode arr = r.putArray("aliases");
    for (Map.Entry<String, String> e : sorted) {
      arr.addObject().put("alias_name", e.getKey()).put("collection_name", e.getValue());
    }
    return r;
  }

  /** The actions of a request body; a 400 names the first part that is not one. */
  static List<Aliases.Change> parse(JsonNode body) {
    if (!body.isObject()) {
      throw new InvalidInputException("Wrong input: alias update must be a JSON object");
    }
    onlyFields(body, "", Set.of("actions"));
    JsonNode actions = body.get("actions");
    if (actions == null || !actions.isArray()) {
      throw Requests.invalid("actions must be a list of alias actions", "actions", actions);
    }
    List<Aliases.Change> out = new ArrayList<>();
    for (int i = 0; i < actions.size(); i++) {
      String at = "actions[" + i + "]";
      JsonNode a = actions.get(i);
      if (!a.isObject() || a.size() != 1) {
        throw Requests.invalid(
            "each action must be an object with one of create_alias, delete_alias, rename_alias",
            at,
            a);
      }
      String kind = a.propertyNames().iterator().next();
      JsonNode args = a.get(kind);
      if (!args.isObject()) {
        throw Requests.invalid(kind + " must be an object", at + "." + kind, args);
      }
      String path = at + "." + kind;
      out.add(
          switch (kind) {
            case "create_alias" -> {
              onlyFields(args, path, Set.of("collection_name", "alias_name"));
              yield new Aliases.Create(
                  string(args, path, "alias_name"), string(args, path, "collection_name"));
            }
            case "delete_alias" -> {
              onlyFields(args, path, Set.of("alias_name"));
              yield new Aliases.Delete(string(args, path, "alias_name"));
            }
            case "rename_alias" -> {
              onlyFields(args, path, Set.of("old_alias_name", "new_alias_name"));
              yield new Aliases.Rename(
                  string(args, path, "old_alias_name"), string(args, path, "new_alias_name"));
            }
            default ->
                throw new InvalidInputException(
                    "Wrong input: unknown alias action ["
                        + at
                        + "="
                        + kind
                        + ", supported=create_alias, delete_alias, rename_alias]");
          });
    }
    return out;
  }

  private static String string(JsonNode args, String path, String field) {
    JsonNode v = args.get(field);
    if (v == null || !v.isString()) {
      throw Requests.invalid(field + " must be a string", path + "." + field, v);
    }
    return v.asString();
  }

  private static void onlyFields(JsonNode o, String path, Set<String> allowed) {
    for (String f : o.propertyNames()) {
      if (!allowed.contains(f)) {
        throw new InvalidInputException(
            "Wrong input: unknown field ["
                + (path.isEmpty() ? f : path + "." + f)
                + ", supported="
                + String.join(", ", allowed.stream().sorted(Comparator.naturalOrder()).toList())
                + "]");
      }
    }
  }
}
