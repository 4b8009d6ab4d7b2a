package io.flashvec.loadgen.dataset;

/** A dataset file is malformed (bad header, truncated record, unsupported dtype, ...). */
public final class DatasetFormatException extends RuntimeException {
  private static final long serialVersionUID = 1L;

  /** Creates the exception; the message should read {@code what failed [file=..., key=value]}. */
  public DatasetFormatException(String message) {
    super(message);
  }
}
