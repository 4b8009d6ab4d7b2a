package io.flashvec.api.web;

import io.flashvec.index.filter.FieldPath;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;
import java.util.function.Predicate;
import tools.jackson.databind.JsonNode;
import tools.jackson.databind.node.ArrayNode;
import tools.jackson.databind.node.ObjectNode;

/**
 * Payload keys as paths (the filter language's {@link FieldPath}: {@code a.b}, {@code arr[].x},
 * {@code arr[2]}), applied to a payload's JSON exactly as Qdrant applies them to {@code
 * delete_payload} keys and to {@code with_payload} include and exclude lists.
 *
 * <p>A path is a list of items: keys, element indexes and {@code []} (every element). A plain key
 * never enters an array: {@code arr.x} reaches nothing when {@code arr} is an array, {@code
 * arr[].x} reaches {@code x} in each of its objects.
 *
 * <ul>
 *   <li>Include and exclude walk the payload, naming each value by its path, with {@code []} for
 *       any array element. Include keeps a value when its path and a pattern agree item by item as
 *       far as both go (so the objects and arrays around a selected value are kept, with only what
 *       was selected inside); an index in a pattern never agrees with {@code []}, so {@code
 *       items[2]} keeps {@code items} empty. Exclude drops a value whose path starts with a
 *       pattern.
 *   <li>Remove ({@code delete_payload}) deletes the last item of the path: a key in an object, or
 *       the elements of an array for a last {@code []} (the array stays, empty). A last element
 *       index removes nothing (removing by index would not be idempotent). A path that reaches
 *       nothing removes nothing.
 * </ul>
 */
public final class PayloadPaths {

  /** The item {@code []} of a path; keys are {@code String}s, element indexes {@code Integer}s. */
  private static final Object EVERY = new Object();

  private PayloadPaths() {}

  /** The payload with only what the {@code include} paths select, as {@code with_payload}. */
  public static ObjectNode include(ObjectNode payload, List<FieldPath> include) {
    List<List<Object>> patterns = include.stream().map(PayloadPaths::items).toList();
    return filter(payload, path -> patterns.stream().anyMatch(p -> agree(p, path)));
  }

  /** The payload without what the {@code exclude} paths address, as {@code with_payload}. */
  public static ObjectNode exclude(ObjectNode payload, List<FieldPath> exclude) {
    List<List<Object>> patterns = exclude.stream().map(PayloadPaths::items).toList();
    return filter(payload, path -> patterns.stream().noneMatch(p -> startsWith(path, p)));
  }

  /** Removes what {@code path} addresses in {@code payload}, as {@code delete_payload}. */
  public static void remove(ObjectNode payload, FieldPath path) {
    List<Object> items = items(path);
    String first = (String) items.getFirst();
    if (items.size() == 1) {
      payload.remove(first);
      return;
    }
    JsonNode value = payload.get(first);
    if (value != null) {
      remove(items, 1, value);
    }
  }

  private static void remove(List<Object> items, int i, JsonNode value) {
    Object head = items.get(i);
    boolean last = i == items.size() - 1;
    if (head instanceof String key && value instanceof ObjectNode o) {
      if (last) {
        o.remove(key);
      } else if (o.get(key) != null) {
        remove(items, i + 1, o.get(key));
      }
    } else if (head instanceof Integer index && value instanceof ArrayNode a) {
      if (!last && index < a.size()) {
        remove(items, i + 1, a.get(index));
      }
    } else if (head == EVERY && value instanceof ArrayNode a) {
      if (last) {
        a.removeAll();
      } else {
        for (JsonNode e : a) {
          remove(items, i + 1, e);
        }
      }
    }
  }

  /**
   * Merges {@code src} into the object at {@code path} in {@code payload}, as Qdrant's {@code
   * set_payload} with a {@code key}: missing objects on the way are created, a value on the way
   * that is not an object is replaced by one; {@code [i]} merges into that element if it exists,
   * {@code []} into every element of an array (a non-array becomes an empty array).
   */
  public static void set(ObjectNode payload, FieldPath path, ObjectNode src) {
    List<Object> items = items(path);
    setInMap(payload, (String) items.getFirst(), items, 1, src);
  }

  private static void setInMap(
      ObjectNode map, String key, List<Object> items, int i, ObjectNode src) {
    JsonNode existing = map.get(key);
    map.set(key, set(existing == null ? map.nullNode() : existing, items, i, src));
  }

  /** Returns the new value of {@code dest} (the same node when changed in place). */
  private static JsonNode set(JsonNode dest, List<Object> items, int i, ObjectNode src) {
    if (i == items.size()) {
      ObjectNode o = dest instanceof ObjectNode d ? d : src.objectNode();
      o.setAll(src.deepCopy());
      return o;
    }
    Object head = items.get(i);
    if (head instanceof String key) {
      ObjectNode o = dest instanceof ObjectNode d ? d : src.objectNode();
      setInMap(o, key, items, i + 1, src);
      return o;
    }
    if (!(dest instanceof ArrayNode a)) {
      return src.arrayNode();
    }
    if (head instanceof Integer index) {
      if (index < a.size()) {
        a.set(index, set(a.get(index), items, i + 1, src));
      }
    } else {
      for (int j = 0; j < a.size(); j++) {
        a.set(j, set(a.get(j), items, i + 1, src));
      }
    }
    return a;
  }

  private static List<Object> items(FieldPath path) {
    List<Object> items = new ArrayList<>();
    for (FieldPath.Step s : path.steps()) {
      items.add(s.name());
      if (s.index() == FieldPath.ALL) {
        items.add(EVERY);
      } else if (s.index() != FieldPath.NO_INDEX) {
        items.add(s.index());
      }
    }
    return items;
  }

  /** Whether the two paths agree item by item as far as the shorter goes. */
  private static boolean agree(List<Object> pattern, List<Object> path) {
    int n = Math.min(pattern.size(), path.size());
    for (int i = 0; i < n; i++) {
      if (!Objects.equals(pattern.get(i), path.get(i))) {
        return false;
      }
    }
    return true;
  }

  private static boolean startsWith(List<Object> path, List<Object> prefix) {
    return path.size() >= prefix.size() && agree(prefix, path);
  }

  /** A copy of {@code map} with the values whose path {@code keep} accepts, recursively. */
  private static ObjectNode filter(ObjectNode map, Predicate<List<Object>> keep) {
    return (ObjectNode) copy(map, new ArrayList<>(), keep);
  }

  private static JsonNode copy(JsonNode value, List<Object> path, Predicate<List<Object>> keep) {
    if (value instanceof ObjectNode o) {
      ObjectNode out = o.objectNode();
      for (var e : o.properties()) {
        path.add(e.getKey());
        if (keep.test(path)) {
          out.set(e.getKey(), copy(e.getValue(), path, keep));
        }
        path.removeLast();
      }
      return out;
    }
    if (value instanceof ArrayNode a) {
      ArrayNode out = a.arrayNode();
      path.add(EVERY);
      if (keep.test(path)) {
        for (JsonNode e : a) {
          out.add(copy(e, path, keep));
        }
      }
      path.removeLast();
      return out;
    }
    return value.deepCopy();
  }
}
