package io.flashvec.index;

/**
 * Qdrant's {@code update_mode} of an upsert: whether new points, existing points or both are
 * written.
 */
public enum UpsertMode {
  /** Insert new points and overwrite existing ones. */
  UPSERT("upsert"),
  /** Insert new points only; existing ones are left as they are. */
  INSERT_ONLY("insert_only"),
  /** Overwrite existing points only; new ones are not created. */
  UPDATE_ONLY("update_only");

  private final String wire;

  UpsertMode(String wire) {
    this.wire = wire;
  }

  /** The REST spelling. */
  public String wire() {
    return wire;
  }

  /** The mode spelled {@code s}; an {@link InvalidInputException} naming it otherwise. */
  public static UpsertMode parse(String s, String field) {
    for (UpsertMode m : values()) {
      if (m.wire.equals(s)) {
        return m;
      }
    }
    throw new InvalidInputException(
        "Wrong input: unknown variant `"
            + s
            + "`, expected one of `upsert`, `insert_only`, `update_only` ["
            + field
            + "]");
  }
}
