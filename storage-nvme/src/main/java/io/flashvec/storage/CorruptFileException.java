package io.flashvec.storage;

import java.nio.file.Path;

/**
 * A file's bytes do not match what its format promises (bad magic, checksum mismatch, impossible
 * length). Distinct from {@link java.io.IOException}: the device worked, the content is wrong.
 */
public class CorruptFileException extends RuntimeException {

  private final transient Path file;

  public CorruptFileException(String message, Path file) {
    super(message + " [file=" + file + "]");
    this.file = file;
  }

  public CorruptFileException(String message, Path file, Throwable cause) {
    super(message + " [file=" + file + "]", cause);
    this.file = file;
  }

  /** The file whose content is corrupt. */
  public Path file() {
    return file;
  }
}
