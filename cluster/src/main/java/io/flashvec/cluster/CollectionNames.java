package io.flashvec.cluster;

import io.flashvec.index.FlashVecException;
import java.util.regex.Pattern;

/**
 * Which collection names are allowed: 1–255 characters of letters, digits, {@code _}, {@code -} and
 * {@code .}, not starting with {@code .} — so a name is always one safe directory name and can
 * never climb out of the data directory ({@code ../x}, {@code a/b}, {@code %2F}). Aliases follow
 * the same rule, as they name collections in the same paths.
 */
public final class CollectionNames {

  private static final Pattern VALID = Pattern.compile("[A-Za-z0-9_-][A-Za-z0-9._-]{0,254}");

  private static final String RULE =
      "allowed=1-255 characters of A-Z a-z 0-9 _ - . not starting with .";

  /**
   * Maps to HTTP 422, as Qdrant answers a collection name its validation refuses: {@code Validation
   * error in path parameters: [collection_name: …]}.
   */
  public static final class InvalidNameException extends FlashVecException {
    InvalidNameException(String where, String field, String name) {
      super(
          422,
          "Validation error in "
              + where
              + ": ["
              + field
              + ": invalid collection name [name="
              + name
              + ", "
              + RULE
              + "]]",
          null);
    }
  }

  private CollectionNames() {}

  /** Returns the name, a collection's in a request's path, if valid. */
  public static String validate(String name) {
    if (name == null || !VALID.matcher(name).matches()) {
      throw new InvalidNameException("path parameters", "collection_name", name);
    }
    return name;
  }

  /** Returns {@code name}, the body's {@code field} (an alias), if it is a valid name. */
  public static String validateInBody(String name, String field) {
    if (name == null || !VALID.matcher(name).matches()) {
      throw new InvalidNameException("JSON body", field, name);
    }
    return name;
  }
}
