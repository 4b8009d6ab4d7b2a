package io.flashvec.cluster;

import io.flashvec.index.InvalidInputException;
import java.util.regex.Pattern;

/**
 * Which collection names are allowed: 1–255 characters of letters, digits, {@code _}, {@code -} and
 * {@code .}, not starting with {@code .} — so a name is always one safe directory name and can
 * never climb out of the data directory ({@code ../x}, {@code a/b}, {@code %2F}).
 */
public final class CollectionNames {

  private static final Pattern VALID = Pattern.compile("[A-Za-z0-9_-][A-Za-z0-9._-]{0,254}");

  private CollectionNames() {}

  /** Returns the name if valid. */
  public static String validate(String name) {
    if (name == null || !VALID.matcher(name).matches()) {
      throw new InvalidInputException(
          "Wrong input: invalid collection name [name="
              + name
              + ", allowed=1-255 characters of A-Z a-z 0-9 _ - . not starting with .]");
    }
    return name;
  }
}
