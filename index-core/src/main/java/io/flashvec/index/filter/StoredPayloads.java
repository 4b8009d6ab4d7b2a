package io.flashvec.index.filter;

import java.util.concurrent.atomic.AtomicBoolean;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Makes a stored payload readable when an older version let a lone UTF-16 surrogate into it.
 *
 * <p>Versions that did not refuse them stored such strings as JSON escapes ({@code "\uD83D"}, the
 * way Jackson writes a surrogate it cannot pair). Jackson's parser refuses one in a key, so every
 * read of such a payload failed and filters skipped the point; in a value it is read, and then
 * written to clients as text no client can decode. {@link #repair} replaces each lone surrogate
 * escape with {@code \uFFFD} (the replacement character, as a UTF-8 decoder does for bad bytes), so
 * the payload reads, filters and renders; the stored bytes are not changed. New payloads cannot
 * hold one: the REST layer refuses them.
 *
 * <p>The check is a scan for backslashes, so payloads without escapes cost one pass and no copy.
 * Thread-safe.
 */
public final class StoredPayloads {

  private static final Logger LOG = LoggerFactory.getLogger(StoredPayloads.class);
  private static final AtomicBoolean LOGGED = new AtomicBoolean();

  private StoredPayloads() {}

  /**
   * {@code json} itself when it holds no lone surrogate escape, else a copy with each one replaced
   * by {@code \uFFFD} (logged once per process, at WARN).
   */
  public static byte[] repair(byte[] json) {
    if (json == null) {
      return null;
    }
    int first = firstLoneSurrogate(json, 0);
    if (first < 0) {
      return json;
    }
    byte[] out = json.clone();
    for (int at = first; at >= 0; at = firstLoneSurrogate(out, at + 6)) {
      // same length: "\\uD83D" becomes "\\uFFFD"
      out[at + 2] = 'F';
      out[at + 3] = 'F';
      out[at + 4] = 'F';
      out[at + 5] = 'D';
    }
    if (LOGGED.compareAndSet(false, true)) {
      LOG.warn(
          "a stored payload holds a lone UTF-16 surrogate (written by an older version);"
              + " it is read with U+FFFD in its place, and so are any others (logged once)"
              + " [bytes={}]",
          json.length);
    }
    return out;
  }

  /** The offset of the first lone surrogate escape's backslash at or after {@code from}, or -1. */
  static int firstLoneSurrogate(byte[] b, int from) {
    // in JSON a backslash only ever starts an escape inside a string
    for (int i = from; i < b.length; i++) {
      if (b[i] == '\\' && i + 1 < b.length) {
        if (b[i + 1] != 'u') {
          i++; // a two-character escape such as \\ or \"
          continue;
        }
        int unit = hex4(b, i + 2);
        if (unit >= 0 && Character.isSurrogate((char) unit)) {
          int low =
              Character.isHighSurrogate((char) unit)
                      && i + 7 < b.length
                      && b[i + 6] == '\\'
                      && b[i + 7] == 'u'
                  ? hex4(b, i + 8)
                  : -1;
          if (low < 0 || !Character.isLowSurrogate((char) low)) {
            return i;
          }
          i += 11; // the pair
          continue;
        }
        i += 5;
      }
    }
    return -1;
  }

  private static int hex4(byte[] b, int p) {
    if (p + 4 > b.length) {
      return -1;
    }
    int v = 0;
    for (int i = 0; i < 4; i++) {
      int d = Character.digit(b[p + i], 16);
      if (d < 0) {
        return -1;
      }
      v = v << 4 | d;
    }
    return v;
  }
}
