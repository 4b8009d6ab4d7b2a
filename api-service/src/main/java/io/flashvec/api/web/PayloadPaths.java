package io.flashvec.api.web;

import io.flashvec.index.filter.FieldPath;
import java.util.List;
import tools.jackson.databind.JsonNode;
import tools.jackson.databind.node.ArrayNode;
import tools.jackson.databind.node.ObjectNode;

/**
 * Payload keys as paths (the filter language's {@link FieldPath}: {@code a.b}, {@code arr[].x},
 * {@code arr[2]}), applied to a payload's JSON as Qdrant applies them to {@code delete_payload}
 * keys and to {@code with_payload} include and exclude lists. An array met without brackets is
 * walked into, as with {@code []}. A path that reaches nothing selects or removes nothing.
 */
public final class PayloadPaths {

  private PayloadPaths() {}

  /**
   * Removes what {@code path} addresses below {@code node}: {@code a.b} removes {@code b} inside
   * {@code a}; {@code a[2]} removes one element; a last step {@code a[]} empties the array.
   */
  public static void remove(JsonNode node, FieldPath path) {
    remove(node, path.steps(), 0);
  }

  private static void remove(JsonNode node, List<FieldPath.Step> steps, int i) {
    if (!(node instanceof ObjectNode o)) {
      if (node instanceof ArrayNode a) {
        for (JsonNode e : a) {
          remove(e, steps, i);
        }
      }
      return;
    }
    FieldPath.Step step = steps.get(i);
    boolean last = i == steps.size() - 1;
    JsonNode value = o.get(step.name());
    if (value == null) {
      return;
    }
    if (step.index() == FieldPath.NO_INDEX) {
      if (last) {
        o.remove(step.name());
      } else {
        remove(value, steps, i + 1);
      }
      return;
    }
    if (!(value instanceof ArrayNode a)) {
      return;
    }
    if (step.index() == FieldPath.ALL) {
      if (last) {
        a.removeAll();
      } else {
        for (JsonNode e : a) {
          remove(e, steps, i + 1);
        }
      }
    } else if (step.index() < a.size()) {
      if (last) {
        a.remove(step.index());
      } else {
        remove(a.get(step.index()), steps, i + 1);
      }
    }
  }

  /**
   * Copies what {@code path} addresses in {@code from} into {@code into}, keeping the structure
   * around it: {@code meta.a} of {@code {"meta": {"a": 1, "b": 2}}} gives {@code {"meta": {"a":
   * 1}}}, {@code items[].x} keeps {@code x} in the objects of {@code items} that have it. Several
   * paths copied into one object merge; a path that reaches nothing adds nothing.
   */
  public static void select(JsonNode from, FieldPath path, ObjectNode into) {
    select(from, path.steps(), 0, into);
  }

  /** Returns whether anything was copied. */
  private static boolean select(JsonNode from, List<FieldPath.Step> steps, int i, ObjectNode into) {
    if (!(from instanceof ObjectNode o)) {
      return false;
    }
    FieldPath.Step step = steps.get(i);
    boolean last = i == steps.size() - 1;
    JsonNode value = o.get(step.name());
    if (value == null) {
      return false;
    }
    if (last && step.index() != FieldPath.NO_INDEX) {
      if (!(value instanceof ArrayNode a)) {
        return false;
      }
      if (step.index() == FieldPath.ALL) {
        into.set(step.name(), a.deepCopy());
        return true;
      }
      if (step.index() >= a.size()) {
        return false;
      }
      into.putArray(step.name()).add(a.get(step.index()).deepCopy());
      return true;
    }
    if (last) {
      into.set(step.name(), value.deepCopy());
      return true;
    }
    if (value instanceof ObjectNode child && step.index() == FieldPath.NO_INDEX) {
      ObjectNode target = into.get(step.name()) instanceof ObjectNode e ? e : into.objectNode();
      boolean got = select(child, steps, i + 1, target);
      if (got) {
        into.set(step.name(), target);
      }
      return got;
    }
    if (!(value instanceof ArrayNode a)) {
      return false;
    }
    int from0 = step.index() >= 0 ? step.index() : 0;
    int to = step.index() >= 0 ? Math.min(step.index() + 1, a.size()) : a.size();
    // the elements selected from, in order; merged by position with an earlier path's
    ArrayNode target =
        into.get(step.name()) instanceof ArrayNode e && e.size() == to - from0
            ? e
            : into.arrayNode();
    while (target.size() < to - from0) {
      target.addObject();
    }
    boolean got = false;
    for (int j = from0; j < to; j++) {
      if (target.get(j - from0) instanceof ObjectNode t) { // not when a whole array was copied
        got |= select(a.get(j), steps, i + 1, t);
      }
    }
    if (got) {
      into.set(step.name(), target);
    }
    return got;
  }

  /**
   * Drops the objects that {@link #select} left empty inside arrays (elements that held nothing the
   * path asked for), so {@code items[].x} over {@code [{"x": 1}, {"y": 2}]} gives {@code [{"x":
   * 1}]}.
   */
  public static void pruneEmptyElements(JsonNode node) {
    if (node instanceof ObjectNode o) {
      for (var e : o.properties()) {
        pruneEmptyElements(e.getValue());
      }
    } else if (node instanceof ArrayNode a) {
      for (int j = a.size() - 1; j >= 0; j--) {
        pruneEmptyElements(a.get(j));
        if (a.get(j) instanceof ObjectNode e && e.isEmpty()) {
          a.remove(j);
        }
      }
    }
  }
}
