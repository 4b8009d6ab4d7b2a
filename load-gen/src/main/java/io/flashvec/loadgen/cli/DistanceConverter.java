package io.flashvec.loadgen.cli;

import io.flashvec.loadgen.dataset.Distance;
import picocli.CommandLine.ITypeConverter;
import picocli.CommandLine.TypeConversionException;

/** Parses {@code Cosine}, {@code Dot}, {@code Euclid} and their aliases. */
public final class DistanceConverter implements ITypeConverter<Distance> {
  @Override
  public Distance convert(String value) {
    try {
      return Distance.parse(value);
    } catch (IllegalArgumentException e) {
      throw new TypeConversionException(e.getMessage());
    }
  }
}
