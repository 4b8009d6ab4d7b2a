package io.flashvec.api.web;

import java.math.BigInteger;
import java.nio.charset.StandardCharsets;
import tools.jackson.databind.JsonNode;
import tools.jackson.databind.node.ArrayNode;
import tools.jackson.databind.node.JsonNodeFactory;
import tools.jackson.databind.node.ObjectNode;

/**
 * Reads a request body into the same {@link JsonNode} tree as {@code Json.MAPPER.readTree}, faster
 * for the bodies FlashVec gets most: vectors, hundreds of decimal numbers each.
 *
 * <p>Jackson copies every number's characters into a buffer and parses them from there (768-d
 * search bodies: ~100 µs of a ~500 µs request in a JFR profile, a fifth of the server's CPU). This
 * reader parses numbers straight from the bytes: an integer significand of up to 18 digits and a
 * decimal exponent, turned into a double exactly when the significand is below 2^53 and the
 * exponent within ±22 (one correctly rounded multiplication or division, Clinger's fast path), else
 * by {@link Double#parseDouble} on the literal; both give the double Jackson gives.
 *
 * <p>It accepts only strict JSON plus the {@code NaN}/{@code Infinity}/{@code -Infinity} literals
 * that {@code Json.MAPPER} allows. Anything else — a syntax error, a control character in a string,
 * nesting deeper than {@value #MAX_DEPTH}, content after the root value — returns {@code null}, and
 * the caller parses with Jackson, so error messages and edge cases stay Jackson's. Node types
 * follow Jackson's tree rules: {@code IntNode}, {@code LongNode} or {@code BigIntegerNode} by the
 * integer's size, {@code DoubleNode} for anything with a fraction or an exponent.
 *
 * <p>Two things Jackson's tree would take are refused here with a {@link BadJsonException} that
 * names where they are ({@code at=points[0].payload}): a key that appears twice in one object (the
 * tree keeps the last, so the first would be silently dropped), and a string, key or value, that
 * holds a lone UTF-16 surrogate escape such as {@code "\ud83d"} (no Unicode text has one: it cannot
 * be written as UTF-8, and clients in other languages cannot read it back). Qdrant's serde reader
 * refuses both too.
 *
 * <p>Not thread-safe; one instance per parse.
 */
final class JsonTreeReader {

  static final int MAX_DEPTH = 200;

  /** Longer numbers, strings or names go to Jackson, whose read constraints judge them. */
  static final int MAX_NUMBER_CHARS = 500;

  static final int MAX_STRING_BYTES = 1 << 20;

  private static final JsonNodeFactory NODES = JsonNodeFactory.instance;

  /** Exact powers of ten as doubles (10^22 is the largest exact one). */
  private static final double[] POW10 = new double[23];

  static {
    double p = 1;
    for (int i = 0; i < POW10.length; i++) {
      POW10[i] = p;
      p *= 10;
    }
  }

  /**
   * A definite rejection, thrown where it is found and given its place ({@link #under}) by each
   * enclosing object and array on the way out, so that the happy path keeps no path.
   */
  private static final class Rejected extends RuntimeException {
    final String what;
    final String detail;
    final int offset;
    private final java.util.ArrayDeque<Object> at = new java.util.ArrayDeque<>();

    Rejected(String what, String detail, int offset) {
      super(null, null, false, false);
      this.what = what;
      this.detail = detail;
      this.offset = offset;
    }

    /** Called by the enclosing container: {@code key} is a String or an Integer (an index). */
    Rejected under(Object key) {
      at.addFirst(key);
      return this;
    }

    BadJsonException toException() {
      StringBuilder path = new StringBuilder();
      for (Object k : at) {
        if (k instanceof Integer i) {
          path.append('[').append(i).append(']');
        } else {
          path.append(path.isEmpty() ? "" : ".").append(quote((String) k, 40, false));
        }
      }
      return new BadJsonException(
          "Format error in JSON body: "
              + what
              + " ["
              + (path.isEmpty() ? "" : "at=" + path + ", ")
              + detail
              + ", offset="
              + offset
              + "]");
    }
  }

  /** Thrown inside the reader to abandon the fast path; never escapes it. */
  private static final class Unsupported extends RuntimeException {
    private static final Unsupported INSTANCE = new Unsupported();

    private Unsupported() {
      super(null, null, false, false);
    }
  }

  private final byte[] in;
  private int pos;

  private JsonTreeReader(byte[] in) {
    this.in = in;
  }

  /**
   * The tree of {@code body}, or {@code null} when Jackson must parse it.
   *
   * @throws BadJsonException for a duplicate key or a lone surrogate, naming where it is
   */
  static JsonNode read(byte[] body) {
    JsonTreeReader r = new JsonTreeReader(body);
    try {
      JsonNode root = r.value(0);
      r.skipWhitespace();
      return r.pos == body.length ? root : null;
    } catch (Unsupported | ArrayIndexOutOfBoundsException e) {
      return null;
    } catch (Rejected e) {
      throw e.toException();
    }
  }

  /**
   * {@code s} in double quotes for a message, cut to {@code max} characters, with quotes,
   * backslashes, control characters and surrogates escaped as in JSON; {@code alwaysQuote} false
   * leaves a plain identifier unquoted (a path step).
   */
  static String quote(String s, int max, boolean alwaysQuote) {
    boolean plain = !alwaysQuote && !s.isEmpty();
    StringBuilder sb = new StringBuilder();
    int n = Math.min(s.length(), max);
    for (int i = 0; i < n; i++) {
      char c = s.charAt(i);
      if (c == '"' || c == '\\') {
        sb.append('\\').append(c);
      } else if (c < 0x20 || Character.isSurrogate(c) || c == 0x7f) {
        sb.append(String.format(java.util.Locale.ROOT, "\\u%04x", (int) c));
      } else {
        sb.append(c);
      }
      plain &= Character.isLetterOrDigit(c) || c == '_' || c == '-';
    }
    String cut = n < s.length() ? "..." : "";
    return plain && cut.isEmpty() ? sb.toString() : "\"" + sb + cut + "\"";
  }

  private static Unsupported unsupported() {
    return Unsupported.INSTANCE;
  }

  private void skipWhitespace() {
    byte[] b = in;
    int p = pos;
    while (p < b.length) {
      byte c = b[p];
      if (c != ' ' && c != '\n' && c != '\r' && c != '\t') {
        break;
      }
      p++;
    }
    pos = p;
  }

  private JsonNode value(int depth) {
    skipWhitespace();
    byte c = in[pos];
    switch (c) {
      case '{':
        return object(depth + 1);
      case '[':
        return array(depth + 1);
      case '"':
        return NODES.stringNode(string("a string"));
      case 't':
        literal("true");
        return NODES.booleanNode(true);
      case 'f':
        literal("false");
        return NODES.booleanNode(false);
      case 'n':
        literal("null");
        return NODES.nullNode();
      case 'N':
        literal("NaN");
        return NODES.numberNode(Double.NaN);
      case 'I':
        literal("Infinity");
        return NODES.numberNode(Double.POSITIVE_INFINITY);
      default:
        if (c == '-' && pos + 1 < in.length && in[pos + 1] == 'I') {
          pos++;
          literal("Infinity");
          return NODES.numberNode(Double.NEGATIVE_INFINITY);
        }
        return number();
    }
  }

  private void literal(String word) {
    int n = word.length();
    if (pos + n > in.length) {
      throw unsupported();
    }
    for (int i = 0; i < n; i++) {
      if (in[pos + i] != word.charAt(i)) {
        throw unsupported();
      }
    }
    pos += n;
    // "nullx" or "true1" are errors for Jackson
    if (pos < in.length && isWordByte(in[pos])) {
      throw unsupported();
    }
  }

  private static boolean isWordByte(byte c) {
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_';
  }

  private ObjectNode object(int depth) {
    if (depth > MAX_DEPTH) {
      throw unsupported();
    }
    pos++; // '{'
    ObjectNode o = NODES.objectNode();
    skipWhitespace();
    if (in[pos] == '}') {
      pos++;
      return o;
    }
    while (true) {
      skipWhitespace();
      if (in[pos] != '"') {
        throw unsupported();
      }
      int keyStart = pos;
      String key = string("an object key");
      skipWhitespace();
      if (in[pos++] != ':') {
        throw unsupported();
      }
      JsonNode v;
      try {
        v = value(depth);
      } catch (Rejected e) {
        throw e.under(key);
      }
      if (o.replace(key, v) != null) {
        throw new Rejected("duplicate key in an object", "key=" + quote(key, 80, true), keyStart);
      }
      skipWhitespace();
      byte c = in[pos++];
      if (c == '}') {
        return o;
      }
      if (c != ',') {
        throw unsupported();
      }
    }
  }

  /** Elements assumed when {@link #numbersAhead} cannot tell. */
  private static final int DEFAULT_ELEMENTS = 16;

  /**
   * The number of elements of the array that starts at {@link #pos} when the bytes up to its first
   * {@code ]} hold no string, array or object (a vector: its values are then stored in arrays of
   * that length, not grown by doubling), else {@value #DEFAULT_ELEMENTS}.
   */
  private int numbersAhead() {
    byte[] b = in;
    int commas = 0;
    for (int p = pos; p < b.length; p++) {
      byte c = b[p];
      if (c == ',') {
        commas++;
      } else if (c == ']') {
        return commas + 1;
      } else if (c == '"' || c == '[' || c == '{') {
        return DEFAULT_ELEMENTS;
      }
    }
    return DEFAULT_ELEMENTS;
  }

  private ArrayNode array(int depth) {
    if (depth > MAX_DEPTH) {
      throw unsupported();
    }
    pos++; // '['
    skipWhitespace();
    if (in[pos] == ']') {
      pos++;
      return NODES.arrayNode();
    }
    // ints and doubles are kept unboxed while every element is one (a vector); the first other
    // element turns them into nodes
    NumberArrayNode.Builder numbers = new NumberArrayNode.Builder(numbersAhead());
    ArrayNode a = null;
    while (true) {
      skipWhitespace();
      byte c = in[pos];
      boolean plainNumber =
          (c >= '0' && c <= '9') || (c == '-' && pos + 1 < in.length && in[pos + 1] != 'I');
      if (a == null && plainNumber) {
        scanNumber();
        if (kind == OTHER) {
          a = numbers.toArrayNode();
          a.add(other);
        } else {
          numbers.add(num, kind == INT);
        }
      } else {
        if (a == null) {
          a = numbers.toArrayNode();
        }
        try {
          a.add(value(depth));
        } catch (Rejected e) {
          throw e.under(a.size());
        }
      }
      skipWhitespace();
      c = in[pos++];
      if (c == ']') {
        return a != null ? a : numbers.build();
      }
      if (c != ',') {
        throw unsupported();
      }
    }
  }

  /**
   * A string at {@code pos} (the opening quote); leaves {@code pos} after the closing one.
   *
   * @param role what the string is, for a rejection's message ("an object key", "a string")
   */
  private String string(String role) {
    byte[] b = in;
    int start = ++pos;
    int p = start;
    while (true) {
      byte c = b[p];
      if (c == '"') {
        if (p - start > MAX_STRING_BYTES) {
          throw unsupported();
        }
        pos = p + 1;
        return new String(b, start, p - start, StandardCharsets.US_ASCII);
      }
      if (c == '\\') {
        return escapedString(start, role);
      }
      if (c >= 0 && c < 0x20) {
        throw unsupported(); // an unescaped control character: Jackson's error
      }
      if (c < 0) {
        return escapedString(start, role); // non-ASCII: decode with validation below
      }
      p++;
    }
  }

  /** The slow path of {@link #string}: escapes, surrogate pairs and UTF-8 validation. */
  private String escapedString(int start, String role) {
    byte[] b = in;
    StringBuilder sb = new StringBuilder();
    int p = start;
    while (true) {
      int c = b[p] & 0xff;
      if (c == '"') {
        if (p - start > MAX_STRING_BYTES) {
          throw unsupported();
        }
        pos = p + 1;
        return sb.toString();
      }
      if (c == '\\') {
        byte e = b[p + 1];
        p += 2;
        switch (e) {
          case '"' -> sb.append('"');
          case '\\' -> sb.append('\\');
          case '/' -> sb.append('/');
          case 'b' -> sb.append('\b');
          case 'f' -> sb.append('\f');
          case 'n' -> sb.append('\n');
          case 'r' -> sb.append('\r');
          case 't' -> sb.append('\t');
          case 'u' -> {
            int v = hex4(p);
            p += 4;
            if (Character.isSurrogate((char) v)) {
              // a pair is a high surrogate escape and a low one right after it
              int low =
                  Character.isHighSurrogate((char) v) && b[p] == '\\' && b[p + 1] == 'u'
                      ? hex4(p + 2)
                      : -1;
              if (low < 0 || !Character.isLowSurrogate((char) low)) {
                throw loneSurrogate(start, p - 6, v, role);
              }
              sb.append((char) v);
              v = low;
              p += 6;
            }
            sb.append((char) v);
          }
          default -> throw unsupported();
        }
        continue;
      }
      if (c < 0x20) {
        throw unsupported();
      }
      if (c < 0x80) {
        sb.append((char) c);
        p++;
        continue;
      }
      // a UTF-8 sequence: decode it strictly, leave malformed input to Jackson
      int len = c >= 0xF0 ? 4 : c >= 0xE0 ? 3 : c >= 0xC2 ? 2 : 0;
      if (len == 0 || c > 0xF4) {
        throw unsupported();
      }
      int cp = c & (0x3F >> (len - 1));
      for (int i = 1; i < len; i++) {
        int cc = b[p + i] & 0xff;
        if ((cc & 0xC0) != 0x80) {
          throw unsupported();
        }
        cp = cp << 6 | (cc & 0x3F);
      }
      if ((len == 3 && (cp < 0x800 || (cp >= 0xD800 && cp <= 0xDFFF)))
          || (len == 4 && (cp < 0x10000 || cp > 0x10FFFF))) {
        throw unsupported();
      }
      sb.appendCodePoint(cp);
      p += len;
    }
  }

  /** The value of the four hex digits at {@code p}. */
  private int hex4(int p) {
    int v = 0;
    for (int i = 0; i < 4; i++) {
      int d = Character.digit(in[p + i], 16);
      if (d < 0) {
        throw unsupported();
      }
      v = v << 4 | d;
    }
    return v;
  }

  /** A rejection of the string starting at {@code start} for the escape at {@code escape}. */
  private Rejected loneSurrogate(int start, int escape, int unit, String role) {
    // the string's text up to the escape, then the escape as written, for the message
    String before = new String(in, start, escape - start, StandardCharsets.UTF_8);
    String shown = before.length() > 40 ? "..." + before.substring(before.length() - 37) : before;
    return new Rejected(
        "lone UTF-16 surrogate in " + role,
        "escape=\\u"
            + String.format(java.util.Locale.ROOT, "%04x", unit)
            + ", text=\""
            + shown
            + "\"",
        escape);
  }

  /** {@link #scanNumber} results: an int, a double, or another node (long, big integer). */
  private static final int INT = 0;

  private static final int DOUBLE = 1;
  private static final int OTHER = 2;

  private int kind;
  private double num;
  private JsonNode other;

  /** A number at {@code pos} as its node. */
  private JsonNode number() {
    scanNumber();
    return kind == INT
        ? NODES.numberNode((int) num)
        : kind == DOUBLE ? NODES.numberNode(num) : other;
  }

  /**
   * Reads a number at {@code pos}, by JSON's grammar {@code -?(0|[1-9]\d*)(\.\d+)?([eE][+-]?\d+)?},
   * into {@code kind} and {@code num} (or {@code other}).
   */
  private void scanNumber() {
    byte[] b = in;
    int start = pos;
    int p = pos;
    boolean negative = false;
    if (b[p] == '-') {
      negative = true;
      p++;
    }
    int intStart = p;
    long significand = 0;
    int digits = 0; // significant digits in the significand (leading zeros not counted)
    boolean overflow = false; // more than 18 digits (may not fit a long): the slow path
    if (b[p] == '0') {
      p++;
      if (p < b.length && b[p] >= '0' && b[p] <= '9') {
        throw unsupported(); // leading zero
      }
    } else if (b[p] >= '1' && b[p] <= '9') {
      while (p < b.length && b[p] >= '0' && b[p] <= '9') {
        if (digits < 18) {
          significand = significand * 10 + (b[p] - '0');
          digits++;
        } else {
          overflow = true;
        }
        p++;
      }
    } else {
      throw unsupported();
    }
    int intDigitsDropped = overflow ? (p - intStart) - 18 : 0;
    boolean fraction = false;
    int exponent = intDigitsDropped;
    if (p < b.length && b[p] == '.') {
      fraction = true;
      p++;
      if (p >= b.length || b[p] < '0' || b[p] > '9') {
        throw unsupported();
      }
      while (p < b.length && b[p] >= '0' && b[p] <= '9') {
        if (digits < 18 && !overflow) {
          if (significand != 0 || b[p] != '0') {
            digits++;
          }
          significand = significand * 10 + (b[p] - '0');
          exponent--;
        } else {
          overflow = true;
        }
        p++;
      }
    }
    boolean hasExponent = false;
    if (p < b.length && (b[p] == 'e' || b[p] == 'E')) {
      hasExponent = true;
      p++;
      boolean expNegative = false;
      if (p < b.length && (b[p] == '+' || b[p] == '-')) {
        expNegative = b[p] == '-';
        p++;
      }
      if (p >= b.length || b[p] < '0' || b[p] > '9') {
        throw unsupported();
      }
      int e = 0;
      while (p < b.length && b[p] >= '0' && b[p] <= '9') {
        if (e < 100_000) {
          e = e * 10 + (b[p] - '0');
        }
        p++;
      }
      exponent += expNegative ? -e : e;
    }
    if ((p < b.length && isWordByte(b[p])) || p - start > MAX_NUMBER_CHARS) {
      throw unsupported(); // "12abc", or a number Jackson may find too long
    }
    pos = p;
    if (!fraction && !hasExponent) {
      if (!overflow) {
        long v = negative ? -significand : significand;
        if (v == (int) v) {
          kind = INT;
          num = v;
        } else {
          kind = OTHER;
          other = NODES.numberNode(v);
        }
        return;
      }
      BigInteger big = new BigInteger(new String(b, start, p - start, StandardCharsets.US_ASCII));
      kind = OTHER;
      other = big.bitLength() <= 63 ? NODES.numberNode(big.longValue()) : NODES.numberNode(big);
      return;
    }
    kind = DOUBLE;
    if (!overflow && significand < (1L << 53) && exponent >= -22 && exponent <= 22) {
      double d = exponent >= 0 ? significand * POW10[exponent] : significand / POW10[-exponent];
      num = negative ? -d : d;
      return;
    }
    // the literal, sign included
    num = Double.parseDouble(new String(b, start, p - start, StandardCharsets.US_ASCII));
  }
}
