package io.flashvec.api.web;

import io.flashvec.index.InvalidInputException;

/**
 * A request body that is not acceptable JSON: malformed, empty where a body is needed, a duplicate
 * key, a lone UTF-16 surrogate. A 400 like any {@link InvalidInputException}; its own type so that
 * rejections are counted as {@code bad_json} rather than as a wrong value.
 */
public final class BadJsonException extends InvalidInputException {

  public BadJsonException(String message) {
    super(message);
  }
}
