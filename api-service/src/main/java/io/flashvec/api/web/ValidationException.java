package io.flashvec.api.web;

import io.flashvec.index.FlashVecException;

/**
 * Maps to HTTP 422: a well-formed value outside its allowed range, which Qdrant answers with 422
 * {@code Validation error in JSON body: [<path>: <problem>]} (a value of the wrong type is a 400).
 */
public class ValidationException extends FlashVecException {

  public ValidationException(String path, String problem) {
    this("JSON body", path, problem);
  }

  /** A value refused in {@code where}: {@code JSON body} or {@code query parameters}. */
  public ValidationException(String where, String path, String problem) {
    super(422, "Validation error in " + where + ": [" + path + ": " + problem + "]", null);
  }
}
