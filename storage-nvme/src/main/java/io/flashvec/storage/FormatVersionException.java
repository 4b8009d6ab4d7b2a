package io.flashvec.storage;

import java.nio.file.Path;

/**
 * A file is intact but written in a format version this build cannot read: too old (no longer
 * supported) or too new (written by a later release). Distinct from {@link CorruptFileException}.
 */
public class FormatVersionException extends RuntimeException {

  public FormatVersionException(Path file, String format, int version, int min, int max) {
    super(
        "unsupported "
            + format
            + " version ["
            + (version > max ? "too new" : "too old")
            + ", version="
            + version
            + ", supported="
            + min
            + ".."
            + max
            + ", file="
            + file
            + "]");
  }
}
