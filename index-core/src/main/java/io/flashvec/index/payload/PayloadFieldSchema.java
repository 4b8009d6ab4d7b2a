package io.flashvec.index.payload;

import io.flashvec.index.InvalidInputException;
import io.flashvec.index.filter.FieldPath;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import tools.jackson.databind.JsonNode;
import tools.jackson.databind.json.JsonMapper;
import tools.jackson.databind.node.ObjectNode;

/**
 * One payload index: a payload key and how its values are indexed, as Qdrant's {@code PUT
 * /collections/{c}/index} names them ({@code field_schema}: a type name, or an object with {@code
 * type} and parameters).
 *
 * @param field the payload key as written (dots for nested objects, {@code []} for arrays)
 * @param type what the index holds
 * @param text tokenizer settings of a {@code text} index, else {@code null}
 * @param prefix for a {@code keyword} index, whether {@code prefix: true} was given (Qdrant's
 *     switch for {@code match.prefix}; FlashVec's keyword index serves prefix queries either way,
 *     the flag is kept and shown as given); {@code false} for other types
 * @param lookup for an {@code integer} index, Qdrant's {@code lookup} capability as given ({@code
 *     null}: not given, which is {@code true}); {@code null} for other types. FlashVec's integer
 *     index is one structure (Lucene points) serving exact matches and ranges alike, so the flag
 *     builds nothing and saves nothing: it is kept, shown as given, and strict mode's {@code
 *     unindexed_filtering_*} treat a match on the key as unindexed when it is {@code false}, as
 *     Qdrant does
 * @param range the same for Qdrant's {@code range} capability (range conditions, formulas)
 */
public record PayloadFieldSchema(
    String field, Type type, TextOptions text, boolean prefix, Boolean lookup, Boolean range) {

  /** Index types. */
  public enum Type {
    /** Strings, matched exactly ({@code match.value}, {@code any}). */
    KEYWORD,
    /** Integers: exact matches, and ranges over every numeric value of the field. */
    INTEGER,
    /** Numbers: ranges. */
    FLOAT,
    /** Booleans: {@code match.value}. */
    BOOL,
    /** RFC 3339 strings: datetime ranges. */
    DATETIME,
    /** UUID strings, matched exactly. */
    UUID,
    /**
     * Tokenized text: {@code match.text}, {@code text_any}, {@code phrase} and BM25 text queries.
     */
    TEXT,
    /** Geo points {@code {"lon": x, "lat": y}}: geo radius, bounding box and polygon conditions. */
    GEO;

    /** The name used in the API. */
    public String apiName() {
      return name().toLowerCase(Locale.ROOT);
    }
  }

  /**
   * Tokenizer settings of a text index, as Qdrant's {@code TextIndexParams}.
   *
   * @param tokenizer {@code word} (Unicode word boundaries), {@code whitespace}, {@code prefix}
   *     (words indexed with all their prefixes, for prefix matching) or {@code multilingual} (the
   *     same as {@code word} here)
   * @param lowercase whether tokens are lower-cased (default true)
   * @param minTokenLen tokens shorter than this are dropped (0: no limit)
   * @param maxTokenLen tokens longer than this are dropped (0: no limit)
   * @param phraseMatching whether {@code match.phrase} is served (Qdrant's {@code phrase_matching},
   *     default false: then a phrase matches nothing, as in Qdrant)
   * @param asciiFolding whether letters are folded to ASCII ({@code é} to {@code e}; Qdrant's
   *     {@code ascii_folding})
   * @param stopwordLanguages languages whose stop words are dropped (Lucene's list for each), in
   *     Qdrant's names ({@code english}); empty for none
   * @param customStopwords further words dropped (Qdrant's {@code stopwords.custom})
   * @param stemmer the Snowball stemmer's language ({@code english}), or {@code null} for none
   */
  public record TextOptions(
      String tokenizer,
      boolean lowercase,
      int minTokenLen,
      int maxTokenLen,
      boolean phraseMatching,
      boolean asciiFolding,
      List<String> stopwordLanguages,
      List<String> customStopwords,
      String stemmer) {

    public static final TextOptions DEFAULT = new TextOptions("word", true, 0, 0, false);
    static final Set<String> TOKENIZERS = Set.of("word", "whitespace", "prefix", "multilingual");

    public TextOptions {
      stopwordLanguages = List.copyOf(stopwordLanguages);
      customStopwords = List.copyOf(customStopwords);
    }

    /** Options without folding, stop words or stemming. */
    public TextOptions(
        String tokenizer,
        boolean lowercase,
        int minTokenLen,
        int maxTokenLen,
        boolean phraseMatching) {
      this(
          tokenizer,
          lowercase,
          minTokenLen,
          maxTokenLen,
          phraseMatching,
          false,
          List.of(),
          List.of(),
          null);
    }
  }

  private static final JsonMapper JSON = JsonMapper.builder().build();

  /** Text index parameters FlashVec honours. */
  private static final Set<String> TEXT_PARAMS =
      Set.of(
          "tokenizer",
          "lowercase",
          "min_token_len",
          "max_token_len",
          "phrase_matching",
          "ascii_folding",
          "stopwords",
          "stemmer");

  public PayloadFieldSchema {
    FieldPath.parse(field, "field_name");
    if (type == Type.TEXT && text == null) {
      text = TextOptions.DEFAULT;
    }
    if (type != Type.TEXT) {
      text = null;
    }
    if (type != Type.KEYWORD) {
      prefix = false;
    }
    if (type != Type.INTEGER) {
      lookup = null;
      range = null;
    }
    if (Boolean.FALSE.equals(lookup) && Boolean.FALSE.equals(range)) {
      // Qdrant's validation error (422)
      throw new io.flashvec.index.filter.FilterParser.ValidationException(
          "Validation error: the 'lookup' and 'range' capabilities can't be both disabled"
              + " [field_schema.lookup=false, field_schema.range=false]");
    }
  }

  /** A schema without integer capabilities (both, as by default). */
  public PayloadFieldSchema(String field, Type type, TextOptions text, boolean prefix) {
    this(field, type, text, prefix, null, null);
  }

  /** A schema without type parameters. */
  public PayloadFieldSchema(String field, Type type) {
    this(field, type, null, false);
  }

  /**
   * Whether the index has Qdrant's {@code lookup} capability (exact matches): every index but an
   * integer one given {@code lookup: false}.
   */
  public boolean servesLookup() {
    return !Boolean.FALSE.equals(lookup);
  }

  /**
   * Whether the index has Qdrant's {@code range} capability: every index but an integer one given
   * {@code range: false}.
   */
  public boolean servesRange() {
    return !Boolean.FALSE.equals(range);
  }

  /** The parsed key. */
  public FieldPath path() {
    return FieldPath.parse(field, "field_name");
  }

  /**
   * Parses Qdrant's {@code field_schema}: {@code "keyword"} or {@code {"type": "text", "tokenizer":
   * "word", "lowercase": true, "min_token_len": 2, "max_token_len": 20}}. Qdrant's storage and
   * planning hints are accepted only with the value that is what FlashVec does ({@link
   * #checkHint}), and refused otherwise.
   */
  public static PayloadFieldSchema parse(String field, JsonNode schema) {
    if (field == null || field.isEmpty()) {
      throw new InvalidInputException("Wrong input: missing field `field_name`");
    }
    if (schema == null || schema.isNull() || schema.isMissingNode()) {
      throw new InvalidInputException(
          "Wrong input: missing field `field_schema` [field_name=" + field + "]");
    }
    if (schema.isString()) {
      return new PayloadFieldSchema(field, type(schema.asString()));
    }
    if (!schema.isObject() || !schema.has("type") || !schema.get("type").isString()) {
      throw new InvalidInputException(
          "Wrong input: field_schema must be a type name or an object with `type` [field_schema="
              + schema
              + "]");
    }
    Type type = type(schema.get("type").asString());
    if (schema.path("lookup").isBoolean()
        && !schema.path("lookup").booleanValue()
        && schema.path("range").isBoolean()
        && !schema.path("range").booleanValue()) {
      // Qdrant's validation error (422), before the other checks
      throw new io.flashvec.index.filter.FilterParser.ValidationException(
          "Validation error: the 'lookup' and 'range' capabilities can't be both disabled"
              + " [field_schema.lookup=false, field_schema.range=false]");
    }
    TextOptions text = null;
    if (type == Type.TEXT) {
      String tokenizer = schema.path("tokenizer").asString("word");
      if (!TextOptions.TOKENIZERS.contains(tokenizer)) {
        throw new InvalidInputException(
            "Wrong input: field_schema.tokenizer must be one of word, whitespace, prefix,"
                + " multilingual [tokenizer="
                + tokenizer
                + "]");
      }
      List<String> languages = new ArrayList<>();
      List<String> custom = new ArrayList<>();
      TextAnalysis.stopwords(schema.get("stopwords"), languages, custom);
      text =
          new TextOptions(
              tokenizer,
              bool(schema, "lowercase", true),
              length(schema, "min_token_len"),
              length(schema, "max_token_len"),
              bool(schema, "phrase_matching", false),
              bool(schema, "ascii_folding", false),
              languages,
              custom,
              TextAnalysis.stemmer(schema.get("stemmer")));
      if (text.maxTokenLen() > 0 && text.minTokenLen() > text.maxTokenLen()) {
        throw new InvalidInputException(
            "Wrong input: field_schema.min_token_len must not exceed max_token_len [min_token_len="
                + text.minTokenLen()
                + ", max_token_len="
                + text.maxTokenLen()
                + "]");
      }
    }
    for (Map.Entry<String, JsonNode> e : schema.properties()) {
      String k = e.getKey();
      boolean textParam = TEXT_PARAMS.contains(k);
      boolean keywordParam = k.equals("prefix");
      boolean integerCapability = type == Type.INTEGER && (k.equals("lookup") || k.equals("range"));
      if (integerCapability) {
        bool(schema, k, true);
        continue;
      }
      if (checkHint(k, e.getValue())) {
        continue;
      }
      if (!k.equals("type")
          && !(textParam && type == Type.TEXT)
          && !(keywordParam && type == Type.KEYWORD)) {
        throw new InvalidInputException(
            "Wrong input: field_schema: unknown parameter for a "
                + type.apiName()
                + " index ["
                + k
                + "="
                + e.getValue()
                + "]");
      }
    }
    return new PayloadFieldSchema(
        field,
        type,
        text,
        type == Type.KEYWORD && bool(schema, "prefix", false),
        type == Type.INTEGER ? given(schema, "lookup") : null,
        type == Type.INTEGER ? given(schema, "range") : null);
  }

  /** A boolean parameter as given, {@code null} when absent. */
  private static Boolean given(JsonNode n, String key) {
    JsonNode v = n.get(key);
    return v == null || v.isNull() ? null : bool(n, key, true);
  }

  /**
   * Checks one of Qdrant's storage and planning hints ({@code on_disk}, {@code memory}, {@code
   * is_tenant}, {@code is_principal}, {@code lookup}, {@code range}, {@code enable_hnsw}): absent,
   * {@code null} or the value that is what FlashVec does is accepted, another value is refused
   * naming it.
   *
   * @return whether {@code key} is such a hint
   */
  private static boolean checkHint(String key, JsonNode v) {
    String why =
        switch (key) {
          case "on_disk" ->
              v.isBoolean() && v.booleanValue()
                  ? null
                  : "only true is supported: the payload indexes of sealed segments are on disk,"
                      + " memory-mapped";
          case "memory" ->
              v.isString() && v.asString().equals("cold")
                  ? null
                  : "only cold is supported: the payload indexes of sealed segments are on disk,"
                      + " memory-mapped and read on demand";
          case "is_tenant", "is_principal" ->
              v.isBoolean() && !v.booleanValue()
                  ? null
                  : "only false is supported: FlashVec does not group a segment's points by a"
                      + " tenant or principal field (a sealed segment orders them for its graph's"
                      + " page locality); a filter on the field is served by its index either way";
          case "lookup", "range" ->
              v.isBoolean() && v.booleanValue()
                  ? null
                  : "only true is supported: lookup and range are capabilities of an integer"
                      + " index";
          case "enable_hnsw" ->
              v.isBoolean() && !v.booleanValue()
                  ? null
                  : "only false is supported: FlashVec builds no payload-aware graph links"
                      + " (Qdrant's payload_m); a filtered search follows the vector graph over the"
                      + " points the payload index accepts, or scans them when they are few";
          default -> "";
        };
    if (why != null && why.isEmpty()) {
      return false;
    }
    if (why != null && !v.isNull()) {
      throw new InvalidInputException(
          "Wrong input: field_schema." + key + ": " + why + " [" + key + "=" + v + "]");
    }
    return true;
  }

  private static Type type(String name) {
    try {
      return Type.valueOf(name.toUpperCase(Locale.ROOT));
    } catch (IllegalArgumentException e) {
      throw new InvalidInputException(
          "Wrong input: field_schema type must be one of keyword, integer, float, bool, geo,"
              + " datetime, uuid, text [type="
              + name
              + "]");
    }
  }

  private static boolean bool(JsonNode n, String key, boolean dflt) {
    JsonNode v = n.get(key);
    if (v == null || v.isNull()) {
      return dflt;
    }
    if (!v.isBoolean()) {
      throw new InvalidInputException(
          "Wrong input: field_schema." + key + " must be a boolean [" + key + "=" + v + "]");
    }
    return v.booleanValue();
  }

  private static int length(JsonNode n, String key) {
    JsonNode v = n.get(key);
    if (v == null || v.isNull()) {
      return 0;
    }
    if (!v.isIntegralNumber()
        || !v.canConvertToLong()
        || v.longValue() < 0
        || v.longValue() > 1_000) {
      throw new InvalidInputException(
          "Wrong input: field_schema."
              + key
              + " must be an integer in [0, 1000] ["
              + key
              + "="
              + v
              + "]");
    }
    return v.intValue();
  }

  /**
   * The schema as {@code GET /collections/{c}} shows it ({@code data_type}, {@code params}) and as
   * it is persisted.
   */
  public ObjectNode toJson() {
    ObjectNode o = JSON.createObjectNode();
    o.put("data_type", type.apiName());
    if (text != null) {
      ObjectNode p = o.putObject("params");
      p.put("type", "text");
      p.put("tokenizer", text.tokenizer());
      p.put("lowercase", text.lowercase());
      if (text.minTokenLen() > 0) {
        p.put("min_token_len", text.minTokenLen());
      }
      if (text.maxTokenLen() > 0) {
        p.put("max_token_len", text.maxTokenLen());
      }
      // the options below only when set, so older schemas keep their hash
      if (text.phraseMatching()) {
        p.put("phrase_matching", true);
      }
      if (text.asciiFolding()) {
        p.put("ascii_folding", true);
      }
      if (!text.stopwordLanguages().isEmpty() || !text.customStopwords().isEmpty()) {
        ObjectNode stop = p.putObject("stopwords");
        text.stopwordLanguages().forEach(stop.putArray("languages")::add);
        if (!text.customStopwords().isEmpty()) {
          text.customStopwords().forEach(stop.putArray("custom")::add);
        }
      }
      if (text.stemmer() != null) {
        p.putObject("stemmer").put("type", "snowball").put("language", text.stemmer());
      }
    }
    if (prefix) {
      ObjectNode p = o.putObject("params");
      p.put("type", "keyword");
      p.put("prefix", true);
    }
    // only when given, so older schemas keep their hash
    if (lookup != null || range != null) {
      ObjectNode p = o.putObject("params");
      p.put("type", "integer");
      if (lookup != null) {
        p.put("lookup", lookup);
      }
      if (range != null) {
        p.put("range", range);
      }
    }
    return o;
  }

  /** Reads {@link #toJson()} back. */
  public static PayloadFieldSchema fromJson(String field, JsonNode o) {
    JsonNode params = o.get("params");
    if (params != null && params.isObject()) {
      return parse(field, params);
    }
    return parse(field, o.get("data_type"));
  }
}
