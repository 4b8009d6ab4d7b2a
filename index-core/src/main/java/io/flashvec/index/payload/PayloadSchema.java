package io.flashvec.index.payload;

import io.flashvec.index.InvalidInputException;
import io.flashvec.index.filter.FieldPath;
import io.flashvec.index.filter.FilterEvaluator;
import io.flashvec.storage.AtomicFiles;
import io.flashvec.storage.FileIO;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.ArrayList;
import java.util.Collections;
import java.util.HexFormat;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import org.apache.lucene.analysis.Analyzer;
import org.apache.lucene.analysis.CharArraySet;
import org.apache.lucene.analysis.LowerCaseFilter;
import org.apache.lucene.analysis.StopFilter;
import org.apache.lucene.analysis.TokenStream;
import org.apache.lucene.analysis.Tokenizer;
import org.apache.lucene.analysis.core.WhitespaceTokenizer;
import org.apache.lucene.analysis.miscellaneous.ASCIIFoldingFilter;
import org.apache.lucene.analysis.miscellaneous.LengthFilter;
import org.apache.lucene.analysis.ngram.EdgeNGramTokenFilter;
import org.apache.lucene.analysis.snowball.SnowballFilter;
import org.apache.lucene.analysis.standard.StandardTokenizer;
import org.apache.lucene.analysis.tokenattributes.CharTermAttribute;
import org.apache.lucene.analysis.tokenattributes.PositionIncrementAttribute;
import tools.jackson.databind.JsonNode;
import tools.jackson.databind.json.JsonMapper;
import tools.jackson.databind.node.ObjectNode;

/**
 * A collection's payload indexes, keyed by payload key. Immutable: creating or dropping an index
 * makes a new schema. Persisted as {@code payload_schema.json} in the collection directory (written
 * atomically); each segment's Lucene index records the {@link #hash()} of the schema it was built
 * for, so a schema change rebuilds exactly the indexes that no longer match.
 */
public final class PayloadSchema implements FilterEvaluator.TextTokens {

  /** File name in the collection directory. */
  public static final String FILE = "payload_schema.json";

  private static final JsonMapper JSON = JsonMapper.builder().build();
  private static final int FORMAT = 1;

  public static final PayloadSchema EMPTY = new PayloadSchema(Map.of());

  private final Map<String, PayloadFieldSchema> fields;
  private final String hash;

  private PayloadSchema(Map<String, PayloadFieldSchema> fields) {
    this.fields = Collections.unmodifiableMap(new TreeMap<>(fields));
    boolean nestedKeys = false;
    for (PayloadFieldSchema f : this.fields.values()) {
      nestedKeys |= f.path().steps().size() > 1;
    }
    // Keys of more than one step once entered arrays without brackets: their indexes, built that
    // way, get a new directory name and are rebuilt; single-name keys keep theirs.
    this.hash = digest(toJson().toString() + (nestedKeys ? "/brackets-enter-arrays" : ""));
  }

  public boolean isEmpty() {
    return fields.isEmpty();
  }

  /** Indexed fields in key order. */
  public Map<String, PayloadFieldSchema> fields() {
    return fields;
  }

  public PayloadFieldSchema field(String key) {
    return fields.get(key);
  }

  /** A short stable digest of the schema, used to name segment index directories. */
  public String hash() {
    return hash;
  }

  /** This schema with {@code f} added or replaced. */
  public PayloadSchema with(PayloadFieldSchema f) {
    Map<String, PayloadFieldSchema> m = new TreeMap<>(fields);
    m.put(f.field(), f);
    return new PayloadSchema(m);
  }

  /** This schema without the index on {@code key} (unchanged if there is none). */
  public PayloadSchema without(String key) {
    Map<String, PayloadFieldSchema> m = new TreeMap<>(fields);
    m.remove(key);
    return new PayloadSchema(m);
  }

  /** {@code {"format": 1, "fields": {"key": {"data_type": ..., "params": ...}}}}. */
  public ObjectNode toJson() {
    ObjectNode o = JSON.createObjectNode();
    o.put("format", FORMAT);
    ObjectNode f = o.putObject("fields");
    for (PayloadFieldSchema s : fields.values()) {
      f.set(s.field(), s.toJson());
    }
    return o;
  }

  /** Reads the schema persisted in {@code collectionDir}, or {@link #EMPTY} if there is none. */
  public static PayloadSchema read(FileIO io, Path collectionDir) throws IOException {
    Path file = collectionDir.resolve(FILE);
    AtomicFiles.removeStaleTemp(io, file);
    if (!Files.exists(file)) {
      return EMPTY;
    }
    try {
      return fromJson(JSON.readTree(io.readAllBytes(file)));
    } catch (RuntimeException e) {
      throw new IOException("unreadable payload schema [file=" + file + "]", e);
    }
  }

  /** The schema as a JSON string ({@link #toJson()}), as cluster nodes exchange it. */
  public String toJsonString() {
    return toJson().toString();
  }

  /**
   * Reads {@link #toJson()} or {@link #toJsonString()} back; {@link #EMPTY} for {@code ""}.
   *
   * @throws IllegalArgumentException for an unknown format or a bad entry
   */
  public static PayloadSchema fromJsonString(String json) {
    return json == null || json.isEmpty() ? EMPTY : fromJson(JSON.readTree(json));
  }

  /** Reads {@link #toJson()} back. */
  public static PayloadSchema fromJson(JsonNode root) {
    if (root.path("format").asInt() != FORMAT) {
      throw new IllegalArgumentException(
          "unsupported payload schema format [format=" + root.path("format") + "]");
    }
    Map<String, PayloadFieldSchema> m = new TreeMap<>();
    for (Map.Entry<String, JsonNode> e : root.path("fields").properties()) {
      try {
        m.put(e.getKey(), PayloadFieldSchema.fromJson(e.getKey(), e.getValue()));
      } catch (InvalidInputException ex) {
        throw new IllegalArgumentException(
            "bad payload schema entry [field=" + e.getKey() + "]", ex);
      }
    }
    return new PayloadSchema(m);
  }

  /** Persists the schema atomically (temp file, fsync, rename, fsync directory). */
  public void write(FileIO io, Path collectionDir) throws IOException {
    AtomicFiles.write(
        io, collectionDir.resolve(FILE), toJson().toString().getBytes(StandardCharsets.UTF_8));
  }

  /** Lucene analyzer for the values of text field {@code key} (index time). */
  Analyzer indexAnalyzer(String key) {
    PayloadFieldSchema f = fields.get(key);
    return analyzer(f.text(), true);
  }

  /**
   * The payload index {@code order_by} uses on {@code key} in collection {@code collection}.
   *
   * @throws InvalidInputException if there is no integer, float or datetime index on {@code key},
   *     or {@code limit} is not positive
   */
  public PayloadFieldSchema orderField(String collection, String key, int limit) {
    PayloadFieldSchema f = field(key);
    if (f == null
        || !(f.type() == PayloadFieldSchema.Type.INTEGER
            || f.type() == PayloadFieldSchema.Type.FLOAT
            || f.type() == PayloadFieldSchema.Type.DATETIME)
        || !f.servesRange()) {
      // an integer index given `range: false` lacks the capability, as in Qdrant
      throw new InvalidInputException(
          "Wrong input: order_by needs an integer (with range), float or datetime payload index on"
              + " its key [key="
              + key
              + "]; create one with PUT /collections/"
              + collection
              + "/index");
    }
    if (limit < 1) {
      throw new InvalidInputException("limit must be positive [limit=" + limit + "]");
    }
    return f;
  }

  /**
   * The tokens of {@code text} as a query on text field {@code key}, in order, without duplicates.
   * Prefix indexes store every prefix of a word, so a query token matches words it begins.
   */
  public List<String> textQuery(String key, String text) {
    PayloadFieldSchema f = fields.get(key);
    if (f == null || f.type() != PayloadFieldSchema.Type.TEXT) {
      throw new InvalidInputException(
          "Wrong input: a text query needs a text payload index on its field [field="
              + key
              + "]; create one with PUT /collections/{name}/index");
    }
    return tokens(analyzer(f.text(), false), text);
  }

  @Override
  public List<String> queryTokens(FieldPath key, String text) {
    PayloadFieldSchema f = fields.get(key.key());
    if (f == null || f.type() != PayloadFieldSchema.Type.TEXT) {
      return null;
    }
    return tokens(analyzer(f.text(), false), text);
  }

  @Override
  public List<String> valueTokens(FieldPath key, String value) {
    return tokens(indexAnalyzer(key.key()), value);
  }

  @Override
  public List<FilterEvaluator.Token> phraseTokens(FieldPath key, String phrase) {
    PayloadFieldSchema f = fields.get(key.key());
    if (f == null || f.type() != PayloadFieldSchema.Type.TEXT) {
      return null;
    }
    if (!f.text().phraseMatching()) {
      return List.of();
    }
    List<FilterEvaluator.Token> t = positions(analyzer(f.text(), false), phrase);
    if (t.isEmpty()) {
      return t;
    }
    int first = t.getFirst().position();
    return t.stream().map(x -> new FilterEvaluator.Token(x.term(), x.position() - first)).toList();
  }

  /**
   * The words of a value with their positions, as a phrase compares them: a {@code prefix} index
   * stores every prefix of a word, but a phrase matches whole words only, as in Qdrant ({@code
   * quick brown} does not match {@code quickly brown}).
   */
  @Override
  public List<FilterEvaluator.Token> valuePositions(FieldPath key, String value) {
    return positions(analyzer(fields.get(key.key()).text(), false), value);
  }

  /**
   * Whether a phrase query on the text index of {@code key} matches exactly the values whose words
   * hold the phrase: not for a {@code prefix} index, whose stored prefixes make it match more.
   */
  boolean exactPhrases(String key) {
    return !fields.get(key).text().tokenizer().equals("prefix");
  }

  /**
   * Positions left empty between two values of one text field (an array of strings), so that a
   * phrase shorter than this never matches across two values.
   */
  static final int POSITION_GAP = 1_000;

  /** The tokens of {@code text} in order, with repeats, each with its position. */
  static List<FilterEvaluator.Token> positions(Analyzer a, String text) {
    List<FilterEvaluator.Token> out = new ArrayList<>();
    try (TokenStream ts = a.tokenStream("t", text)) {
      CharTermAttribute term = ts.addAttribute(CharTermAttribute.class);
      PositionIncrementAttribute inc = ts.addAttribute(PositionIncrementAttribute.class);
      ts.reset();
      int pos = -1;
      while (ts.incrementToken()) {
        pos += inc.getPositionIncrement();
        out.add(new FilterEvaluator.Token(term.toString(), pos));
      }
      ts.end();
    } catch (IOException e) {
      throw new IllegalStateException("tokenizing a string cannot fail", e);
    }
    return out;
  }

  static List<String> tokens(Analyzer a, String text) {
    List<String> out = new ArrayList<>();
    Set<String> seen = new java.util.HashSet<>();
    try (TokenStream ts = a.tokenStream("t", text)) {
      CharTermAttribute term = ts.addAttribute(CharTermAttribute.class);
      ts.reset();
      while (ts.incrementToken()) {
        String t = term.toString();
        if (seen.add(t)) {
          out.add(t);
        }
      }
      ts.end();
    } catch (IOException e) {
      throw new IllegalStateException("tokenizing a string cannot fail", e);
    }
    return out;
  }

  private final Map<String, Analyzer> analyzers = new java.util.concurrent.ConcurrentHashMap<>();

  private Analyzer analyzer(PayloadFieldSchema.TextOptions o, boolean indexing) {
    boolean prefixes = indexing && o.tokenizer().equals("prefix");
    return analyzers.computeIfAbsent(
        o + "/" + prefixes,
        k -> {
          CharArraySet stopSet =
              o.stopwordLanguages().isEmpty() && o.customStopwords().isEmpty()
                  ? null
                  : TextAnalysis.stopSet(o.stopwordLanguages(), o.customStopwords(), o.lowercase());
          return new Analyzer() {
            @Override
            protected TokenStreamComponents createComponents(String fieldName) {
              Tokenizer src =
                  o.tokenizer().equals("whitespace")
                      ? new WhitespaceTokenizer()
                      : new StandardTokenizer();
              TokenStream ts = src;
              if (o.lowercase()) {
                ts = new LowerCaseFilter(ts);
              }
              // the same at index and query time: folded, stop words dropped, stemmed
              if (o.asciiFolding()) {
                ts = new ASCIIFoldingFilter(ts);
              }
              if (stopSet != null) {
                ts = new StopFilter(ts, stopSet);
              }
              if (o.stemmer() != null) {
                ts = new SnowballFilter(ts, TextAnalysis.newStemmer(o.stemmer()));
              }
              if (prefixes) {
                int max = o.maxTokenLen() > 0 ? o.maxTokenLen() : 255;
                ts = new EdgeNGramTokenFilter(ts, Math.max(1, o.minTokenLen()), max, true);
              } else if (o.minTokenLen() > 0 || o.maxTokenLen() > 0) {
                ts =
                    new LengthFilter(
                        ts,
                        o.minTokenLen(),
                        o.maxTokenLen() > 0 ? o.maxTokenLen() : Integer.MAX_VALUE);
              }
              return new TokenStreamComponents(src, ts);
            }

            @Override
            public int getPositionIncrementGap(String fieldName) {
              return POSITION_GAP;
            }
          };
        });
  }

  private static String digest(String s) {
    try {
      byte[] d = MessageDigest.getInstance("SHA-256").digest(s.getBytes(StandardCharsets.UTF_8));
      return HexFormat.of().formatHex(d, 0, 6);
    } catch (NoSuchAlgorithmException e) {
      throw new IllegalStateException(e);
    }
  }

  @Override
  public boolean equals(Object o) {
    return o instanceof PayloadSchema p && p.fields.equals(fields);
  }

  @Override
  public int hashCode() {
    return fields.hashCode();
  }

  @Override
  public String toString() {
    return "PayloadSchema" + fields.values();
  }
}
