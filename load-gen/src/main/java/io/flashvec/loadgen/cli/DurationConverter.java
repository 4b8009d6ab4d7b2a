package io.flashvec.loadgen.cli;

import java.time.Duration;
import java.util.Locale;
import picocli.CommandLine.ITypeConverter;
import picocli.CommandLine.TypeConversionException;

/**
 * Parses {@code 500ms}, {@code 10s}, {@code 2m}, {@code 1h}, a bare number (seconds) or ISO-8601.
 */
public final class DurationConverter implements ITypeConverter<Duration> {
  @Override
  public Duration convert(String value) {
    return parse(value);
  }

  /** Parses a duration; see the class comment for the accepted forms. */
  public static Duration parse(String value) {
    String v = value.trim().toLowerCase(Locale.ROOT);
    try {
      if (v.startsWith("p")) {
        return Duration.parse(value.trim().toUpperCase(Locale.ROOT));
      }
      if (v.endsWith("ms")) {
        return Duration.ofMillis(Long.parseLong(v.substring(0, v.length() - 2).trim()));
      }
      char unit = v.charAt(v.length() - 1);
      String num = Character.isDigit(unit) ? v : v.substring(0, v.length() - 1).trim();
      double d = Double.parseDouble(num);
      double seconds =
          switch (unit) {
            case 's' -> d;
            case 'm' -> d * 60;
            case 'h' -> d * 3600;
            default -> {
              if (!Character.isDigit(unit) && unit != '.') {
                throw new NumberFormatException("unit");
              }
              yield d;
            }
          };
      if (seconds < 0) {
        throw new NumberFormatException("negative");
      }
      return Duration.ofNanos(Math.round(seconds * 1e9));
    } catch (RuntimeException e) {
      throw new TypeConversionException(
          "invalid duration [value=" + value + ", expected e.g. 500ms, 10s, 2m, 1h]");
    }
  }
}
