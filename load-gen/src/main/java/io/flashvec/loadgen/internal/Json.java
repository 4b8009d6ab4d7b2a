package io.flashvec.loadgen.internal;

import tools.jackson.databind.DeserializationFeature;
import tools.jackson.databind.SerializationFeature;
import tools.jackson.databind.json.JsonMapper;

/** The one JSON mapper of the load generator (Jackson 3; immutable and thread-safe). */
public final class Json {
  /** Pretty-printing, lenient on unknown properties. */
  public static final JsonMapper MAPPER =
      JsonMapper.builder()
          .enable(SerializationFeature.INDENT_OUTPUT)
          .disable(DeserializationFeature.FAIL_ON_UNKNOWN_PROPERTIES)
          .build();

  private Json() {}

  /**
   * Appends {@code v} as a JSON number; {@link Float#toString} gives the shortest representation
   * that reads back to the same float (JDK 19+), and its {@code 1.0E-5} form is valid JSON.
   */
  public static void appendVector(StringBuilder sb, float[] v) {
    sb.append('[');
    for (int i = 0; i < v.length; i++) {
      if (i > 0) {
        sb.append(',');
      }
      float x = v[i];
      if (!Float.isFinite(x)) {
        throw new IllegalArgumentException(
            "vector element is not finite [index=" + i + ", value=" + x + "]");
      }
      sb.append(x);
    }
    sb.append(']');
  }
}
