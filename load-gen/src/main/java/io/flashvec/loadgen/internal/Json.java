package io.flashvec.loadgen.internal;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
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
   * Writes {@code value} as JSON and a newline to {@code file}; {@code what} names the file in the
   * error ("result", "manifest").
   *
   * @throws UncheckedIOException if the file cannot be written
   */
  public static void write(Path file, Object value, String what) {
    writeString(file, MAPPER.writeValueAsString(value), what);
  }

  /** Writes {@code json} and a newline to {@code file}, as {@link #write}. */
  public static void writeString(Path file, String json, String what) {
    try {
      Files.writeString(file, json + "\n");
    } catch (IOException e) {
      throw new UncheckedIOException("cannot write " + what + " [file=" + file + "]", e);
    }
  }

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
