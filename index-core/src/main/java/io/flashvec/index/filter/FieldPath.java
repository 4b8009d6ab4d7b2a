package io.flashvec.index.filter;

import io.flashvec.index.InvalidInputException;
import java.util.ArrayList;
import java.util.List;

/**
 * A payload key as Qdrant writes it: names separated by dots address nested objects ({@code
 * a.b.c}); {@code name[]} flattens an array at that step and {@code name[3]} picks one element. As
 * in Qdrant, an array is entered only with brackets: {@code a[].b} reaches {@code b} inside every
 * object of an array {@code a}, {@code a.b} reaches nothing there. An array at the end of a path
 * contributes its elements to conditions that compare values.
 *
 * @param key the key as written, for messages
 * @param steps the parsed steps, never empty
 */
public record FieldPath(String key, List<Step> steps) {

  /**
   * One step of a path.
   *
   * @param name the object key
   * @param index {@link #NO_INDEX}, {@link #ALL} ({@code []}) or an element index ({@code [3]})
   */
  public record Step(String name, int index) {}

  /** The step has no brackets. */
  public static final int NO_INDEX = -1;

  /** The step ends in {@code []}. */
  public static final int ALL = -2;

  public FieldPath {
    steps = List.copyOf(steps);
  }

  /**
   * The first object key, the one a payload's top level must hold for the path to reach a value.
   */
  public String head() {
    return steps.getFirst().name();
  }

  /**
   * Parses a key.
   *
   * @param field where the key came from, for messages (e.g. {@code filter.must[0].key})
   * @throws InvalidInputException for an empty key, an empty step or bad brackets
   */
  public static FieldPath parse(String key, String field) {
    if (key == null || key.isEmpty()) {
      throw new InvalidInputException("Wrong input: " + field + ": key must not be empty");
    }
    List<Step> steps = new ArrayList<>();
    for (String part : key.split("\\.", -1)) {
      String name = part;
      int index = NO_INDEX;
      int open = part.indexOf('[');
      if (open >= 0) {
        if (!part.endsWith("]") || part.indexOf('[', open + 1) >= 0) {
          throw bad(key, field);
        }
        name = part.substring(0, open);
        String inside = part.substring(open + 1, part.length() - 1);
        if (inside.isEmpty()) {
          index = ALL;
        } else {
          try {
            index = Integer.parseInt(inside);
          } catch (NumberFormatException e) {
            throw bad(key, field);
          }
          if (index < 0) {
            throw bad(key, field);
          }
        }
      }
      if (name.isEmpty()) {
        throw bad(key, field);
      }
      steps.add(new Step(name, index));
    }
    return new FieldPath(key, steps);
  }

  private static InvalidInputException bad(String key, String field) {
    return new InvalidInputException(
        "Wrong input: "
            + field
            + ": invalid key, expected names separated by dots with optional"
            + " [] or [n] ["
            + field
            + "="
            + key
            + "]");
  }

  @Override
  public String toString() {
    return key;
  }
}
