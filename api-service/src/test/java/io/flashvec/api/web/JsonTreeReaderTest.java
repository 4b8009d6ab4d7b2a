package io.flashvec.api.web;

import static org.assertj.core.api.Assertions.assertThat;

import io.flashvec.testing.TestSeeds;
import java.nio.charset.StandardCharsets;
import java.util.Locale;
import java.util.Random;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;
import tools.jackson.databind.JsonNode;

/** The fast tree reader gives Jackson's tree, or steps aside so Jackson can answer. */
class JsonTreeReaderTest {

  private static JsonNode jackson(String json) {
    return Json.MAPPER.readTree(json.getBytes(StandardCharsets.UTF_8));
  }

  private static JsonNode fast(String json) {
    return JsonTreeReader.read(json.getBytes(StandardCharsets.UTF_8));
  }

  private static void assertSameTree(String json) {
    JsonNode f = fast(json);
    assertThat(f).as("read by the fast path: %s", json).isNotNull();
    JsonNode j = jackson(json);
    assertThat(f).as(json).isEqualTo(j);
    // equal trees of equal node types: IntNode vs LongNode, DoubleNode vs IntNode
    assertThat(f.toString()).as(json).isEqualTo(j.toString());
  }

  @ParameterizedTest
  @ValueSource(
      strings = {
        "0",
        "-0",
        "-0.0",
        "1",
        "2147483647",
        "2147483648",
        "-2147483649",
        "9223372036854775807",
        "9223372036854775808",
        "18446744073709551615",
        "123456789012345678901234567890",
        "0.1",
        "1.0",
        "1e2",
        "1E+2",
        "-1.5e-3",
        "0.30000000000000004",
        "1.7976931348623157e308",
        "1e400",
        "4.9e-324",
        "1e-400",
        "123456789012345678901.5",
        "0.000000000000000000000000000123",
        "9007199254740993",
        "9007199254740993.0",
        "NaN",
        "Infinity",
        "-Infinity",
        "true",
        "false",
        "null",
        "\"\"",
        "\"a\\\"b\\\\c\\/d\\b\\f\\n\\r\\t\\u00e9\\ud83d\\ude00\"",
        "\"h\u00e9llo \u4e16\u754c \ud83d\ude00\"",
        " { \"a\" : [ 1 , 2.5 , { } , [ ] ] , \"b\" : null } ",
        "{\"vector\":[0.1,-0.2,3e-5,1.0E-7],\"limit\":10,\"params\":{\"search_list\":15}}"
      })
  void readsLikeJackson(String json) {
    assertSameTree(json);
  }

  @ParameterizedTest
  @ValueSource(
      strings = {
        "{",
        "[1,]",
        "[1 2]",
        "01",
        "1.",
        ".5",
        "+1",
        "-",
        "1e",
        "nul",
        "tru",
        "NaNx",
        "-NaN",
        "\"\\x\"",
        "\"a\u0001\"",
        "{\"a\" 1}",
        "{'a':1}",
        "{a:1}",
        "[1] x",
        "12abc",
        "// c\n1"
      })
  void leavesWhatItDoesNotTakeToJackson(String json) {
    assertThat(fast(json)).as(json).isNull();
  }

  @Test
  void tooDeepNestingIsLeftToJackson() {
    String deep =
        "[".repeat(JsonTreeReader.MAX_DEPTH + 1) + "]".repeat(JsonTreeReader.MAX_DEPTH + 1);
    assertThat(fast(deep)).isNull();
    String ok = "[".repeat(JsonTreeReader.MAX_DEPTH) + "]".repeat(JsonTreeReader.MAX_DEPTH);
    assertSameTree(ok);
  }

  @Test
  void malformedUtf8IsLeftToJackson() {
    byte[] bad = {'"', (byte) 0xC3, '"'};
    assertThat(JsonTreeReader.read(bad)).isNull();
    byte[] overlong = {'"', (byte) 0xC0, (byte) 0x80, '"'};
    assertThat(JsonTreeReader.read(overlong)).isNull();
  }

  private static String rejection(String json) {
    try {
      Json.parse(json.getBytes(StandardCharsets.UTF_8));
    } catch (BadJsonException e) {
      return e.getMessage();
    }
    throw new AssertionError("accepted: " + json);
  }

  @Test
  void aDuplicateKeyIsRefusedNamingTheKeyAndWhereItIs() {
    assertThat(rejection("{\"a\":1,\"a\":2}"))
        .isEqualTo("Format error in JSON body: duplicate key in an object [key=\"a\", offset=7]");
    assertThat(rejection("{\"points\":[{\"id\":1},{\"id\":2,\"payload\":{\"x\":1,\"x\":{}}}]}"))
        .isEqualTo(
            "Format error in JSON body: duplicate key in an object"
                + " [at=points[1].payload, key=\"x\", offset=45]");
    // the same key in different objects is fine
    assertSameTree("[{\"a\":1},{\"a\":2,\"b\":{\"a\":3}}]");
  }

  @Test
  void aDuplicateKeyInWhatJacksonReadsIsRefusedToo() {
    String longString = "x".repeat(JsonTreeReader.MAX_STRING_BYTES + 1);
    String json = "{\"a\":\"" + longString + "\",\"a\":2}";
    assertThat(rejection(json))
        .startsWith("Format error in JSON body: Duplicate Object property \"a\"");
  }

  @ParameterizedTest
  @ValueSource(
      strings = {
        "\"\\ud83d\"",
        "\"\\ude00\"",
        "\"a\\ud83db\"",
        "\"\\ud83d\\ud83d\"",
        "\"\\ude00\\ud83d\"",
        "\"\\ud83d\\n\"",
        "\"\\ud83d\\u0041\"",
        "\"\u00e9\\udbff\"",
      })
  void aLoneSurrogateInAStringIsRefused(String string) {
    assertThat(rejection("{\"payload\":{\"k\":" + string + "}}"))
        .startsWith("Format error in JSON body: lone UTF-16 surrogate in a string [at=payload.k, ")
        .contains("offset=");
    assertThat(rejection("{\"payload\":{" + string + ":1}}"))
        .startsWith(
            "Format error in JSON body: lone UTF-16 surrogate in an object key [at=payload, ");
  }

  @Test
  void aLoneSurrogateIsNamedByItsEscapeAndPosition() {
    assertThat(rejection("{\"points\":[{\"id\":1,\"payload\":{\"\\ud83d\":\"x\"}}]}"))
        .isEqualTo(
            "Format error in JSON body: lone UTF-16 surrogate in an object key"
                + " [at=points[0].payload, escape=\\ud83d, text=\"\", offset=31]");
    assertThat(rejection("[1,2,{\"filter\":{\"key\":\"ab\\ude00\"}}]"))
        .isEqualTo(
            "Format error in JSON body: lone UTF-16 surrogate in a string"
                + " [at=[2].filter.key, escape=\\ude00, text=\"ab\", offset=25]");
  }

  @Test
  void aLoneSurrogateInWhatJacksonReadsIsRefusedToo() {
    String longString = "x".repeat(JsonTreeReader.MAX_STRING_BYTES + 1);
    assertThat(rejection("{\"a\":[\"" + longString + "\",\"\\ud83d\"]}"))
        .isEqualTo("Format error in JSON body: lone UTF-16 surrogate in a key or string [at=a[1]]");
  }

  @Test
  void surrogatePairsAreRead() {
    assertSameTree("{\"\\ud83d\\ude00\":\"\\uD83D\\uDE00 \\udbff\\udfff\"}");
    assertThat(fast("\"\\ud83d\\ude00\"").asString()).isEqualTo("\ud83d\ude00");
  }

  /** Random documents: nested values, every number shape, strings with escapes and non-ASCII. */
  @Test
  void randomDocumentsReadLikeJackson() {
    Random r = TestSeeds.random("json-tree-reader");
    for (int i = 0; i < TestSeeds.atLeast(r, 2000); i++) {
      StringBuilder sb = new StringBuilder();
      value(r, sb, 0);
      assertSameTree(sb.toString());
    }
  }

  /**
   * An array of ints and doubles is read into a {@link NumberArrayNode}: Jackson's tree to every
   * reader (node types included), changeable like any array node, and its values reach {@link
   * Requests#vector} without nodes, with the same result and errors as through the nodes.
   */
  @Test
  void aVectorIsReadAsValuesAndBehavesLikeJacksonsArray() {
    String json = "{\"vector\":[0.25,-1,3e2,-0.0,1.5E-3,7,2147483647,0.1]}";
    JsonNode f = fast(json);
    JsonNode j = jackson(json);
    assertThat(f.get("vector")).isInstanceOf(NumberArrayNode.class);
    assertThat(f).isEqualTo(j);
    assertThat(j).isEqualTo(f);
    assertThat(f.toString()).isEqualTo(j.toString());
    assertThat(f.get("vector").get(1).isInt()).isTrue();
    assertThat(f.get("vector").get(0).isDouble()).isTrue();
    assertThat(Requests.vector(f.get("vector"), "vector"))
        .containsExactly(Requests.vector(j.get("vector"), "vector"));
    // changes turn the values into nodes, and the array stays Jackson's
    tools.jackson.databind.node.ArrayNode fa =
        (tools.jackson.databind.node.ArrayNode) f.get("vector");
    tools.jackson.databind.node.ArrayNode ja =
        (tools.jackson.databind.node.ArrayNode) j.get("vector");
    fa.add(5);
    ja.add(5);
    fa.set(0, Json.MAPPER.getNodeFactory().stringNode("x"));
    ja.set(0, Json.MAPPER.getNodeFactory().stringNode("x"));
    fa.remove(2);
    ja.remove(2);
    assertThat(f).isEqualTo(j);
    assertThat(f.toString()).isEqualTo(j.toString());
    assertThat(((NumberArrayNode) fa).doubles()).isNull();
    // a value outside the float range is refused the same way on both paths
    String big = "[1.0,1e39]";
    assertThat(catchMessage(() -> Requests.vector(fast(big), "v")))
        .isEqualTo(catchMessage(() -> Requests.vector(jackson(big), "v")))
        .contains("outside the float range [field=v, index=1, value=1.0E39]");
    // an array with other elements is a plain array node
    assertThat(fast("[1,2,\"a\",3]")).isNotInstanceOf(NumberArrayNode.class);
    assertSameTree("[1,2,\"a\",3.5,9223372036854775807,[1,2]]");
  }

  /**
   * Number arrays of every length up to past a 384-d vector, alone or followed by elements of other
   * kinds, are read into Jackson's tree whatever size the reader guessed for them, and a vector
   * holding NaN, an infinity, a value past the float range or a non-number is refused with the
   * message Jackson's tree gives.
   */
  @Test
  void numberArraysOfAnyLengthReadLikeJacksonAndRefuseTheSameValues() {
    Random r = TestSeeds.random("json-tree-reader-arrays");
    String[] bad = {"NaN", "Infinity", "-Infinity", "1e39", "-3.5e38", "\"x\"", "true", "null"};
    for (int n = 0; n <= 400; n += 1 + r.nextInt(7)) {
      StringBuilder sb = new StringBuilder();
      for (int i = 0; i < n; i++) {
        sb.append(i == 0 ? "" : (r.nextBoolean() ? "," : " , "));
        sb.append(
            r.nextInt(4) == 0
                ? Integer.toString(r.nextInt())
                : Float.toString((float) r.nextGaussian()));
      }
      String list = sb.toString();
      String tail = n == 0 ? "" : ",";
      assertSameTree("{\"vector\":[" + list + "],\"limit\":10}");
      assertSameTree("{\"vector\":[" + list + tail + "\"s\",[1,2],{\"a\":[3]}]}");
      assertSameTree("[[" + list + "],[[1],[2,3]]]");
      String bodyWithBad = "{\"vector\":[" + list + tail + bad[r.nextInt(bad.length)] + ",0.5]}";
      String viaFast =
          catchMessage(
              () -> Requests.vector(Json.parse(bytes(bodyWithBad)).get("vector"), "vector"));
      String viaJackson =
          catchMessage(() -> Requests.vector(jackson(bodyWithBad).get("vector"), "vector"));
      assertThat(viaFast).as(bodyWithBad).isEqualTo(viaJackson).contains("index=" + n);
    }
  }

  private static byte[] bytes(String s) {
    return s.getBytes(StandardCharsets.UTF_8);
  }

  private static String catchMessage(Runnable r) {
    try {
      r.run();
    } catch (RuntimeException e) {
      return e.getMessage();
    }
    throw new AssertionError("no exception");
  }

  private static void value(Random r, StringBuilder sb, int depth) {
    int kind = depth > 4 ? 3 + r.nextInt(5) : r.nextInt(8);
    switch (kind) {
      case 0, 1 -> {
        sb.append('{');
        int n = r.nextInt(5);
        for (int i = 0; i < n; i++) {
          sb.append(i > 0 ? "," : "").append(ws(r));
          string(r, sb);
          sb.insert(sb.length() - 1, i); // keys differ: a duplicate is refused
          sb.append(ws(r)).append(':').append(ws(r));
          value(r, sb, depth + 1);
        }
        sb.append(ws(r)).append('}');
      }
      case 2 -> {
        sb.append('[');
        int n = r.nextInt(6);
        for (int i = 0; i < n; i++) {
          sb.append(i > 0 ? "," : "").append(ws(r));
          value(r, sb, depth + 1);
        }
        sb.append(ws(r)).append(']');
      }
      case 3, 4 -> number(r, sb);
      case 5 -> string(r, sb);
      case 6 -> sb.append(new String[] {"true", "false", "null", "NaN", "-Infinity"}[r.nextInt(5)]);
      default -> {
        sb.append('[');
        int n = 1 + r.nextInt(40);
        for (int i = 0; i < n; i++) {
          sb.append(i > 0 ? "," : "");
          number(r, sb);
        }
        sb.append(']');
      }
    }
  }

  private static String ws(Random r) {
    return new String[] {"", "", " ", "\n\t", "\r\n  "}[r.nextInt(5)];
  }

  private static void number(Random r, StringBuilder sb) {
    switch (r.nextInt(9)) {
      case 0 -> sb.append(r.nextInt());
      case 1 -> sb.append(r.nextLong());
      case 2 -> sb.append(Float.toString((float) r.nextGaussian() * 0.1f));
      case 3 -> sb.append(Double.toString(r.nextGaussian() * Math.pow(10, r.nextInt(40) - 20)));
      case 4 -> sb.append(new java.math.BigInteger(70 + r.nextInt(40), r).toString());
      case 5 -> {
        sb.append(r.nextBoolean() ? "-" : "").append(r.nextInt(10));
        sb.append('.');
        int digits = 1 + r.nextInt(25);
        for (int i = 0; i < digits; i++) {
          sb.append(r.nextInt(10));
        }
        if (r.nextBoolean()) {
          sb.append(r.nextBoolean() ? 'e' : 'E')
              .append(new String[] {"", "+", "-"}[r.nextInt(3)])
              .append(r.nextInt(330));
        }
      }
      case 6 -> sb.append(String.format(java.util.Locale.ROOT, "%.9f", r.nextGaussian()));
      case 7 -> sb.append(r.nextInt(100)).append('e').append(r.nextInt(25) - 12);
      default -> sb.append(r.nextBoolean() ? "0" : "-0").append(r.nextBoolean() ? ".0" : "");
    }
  }

  private static void string(Random r, StringBuilder sb) {
    sb.append('"');
    int n = r.nextInt(12);
    for (int i = 0; i < n; i++) {
      switch (r.nextInt(10)) {
        case 0 -> sb.append("\\\"");
        case 1 -> sb.append("\\\\");
        case 2 -> sb.append("\\n");
        case 3 -> sb.append(String.format(Locale.ROOT, "\\u%04x", r.nextInt(0xD800)));
        case 4 -> sb.append("\u00e9\u4e16");
        case 5 -> sb.appendCodePoint(0x1F600 + r.nextInt(50));
        default -> sb.append((char) ('a' + r.nextInt(26)));
      }
    }
    sb.append('"');
  }
}
