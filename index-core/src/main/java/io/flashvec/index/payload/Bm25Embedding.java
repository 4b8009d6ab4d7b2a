package io.flashvec.index.payload;

import io.flashvec.index.InvalidInputException;
import io.flashvec.index.SparseVector;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import org.apache.lucene.analysis.Analyzer;
import org.apache.lucene.analysis.CharArraySet;
import org.apache.lucene.analysis.LowerCaseFilter;
import org.apache.lucene.analysis.StopFilter;
import org.apache.lucene.analysis.TokenStream;
import org.apache.lucene.analysis.Tokenizer;
import org.apache.lucene.analysis.snowball.SnowballFilter;
import org.apache.lucene.analysis.standard.StandardTokenizer;
import org.apache.lucene.analysis.tokenattributes.CharTermAttribute;
import org.apache.lucene.util.StringHelper;
import tools.jackson.databind.JsonNode;

/**
 * Qdrant's built-in BM25 model ({@code "model": "qdrant/bm25"} or {@code "bm25"}): a text turned
 * into a sparse vector on the server, for a sparse vector field. A document's tokens are weighted
 * by BM25's term-frequency part, {@code n·(k+1) / (n + k·(1 − b + b·len/avg_len))} for a token seen
 * {@code n} times in a text of {@code len} tokens; a query's unique tokens weigh 1. The inverse
 * document frequency is the field's {@code modifier: idf}, applied at search time over the
 * collection's points. A token's index is its MurmurHash3 (x86, 32-bit, seed 0) of its UTF-8 bytes
 * taken as a signed integer's absolute value, as Qdrant computes it, so sparse vectors Qdrant made
 * match.
 *
 * <p>Tokens are the text analysis of a text index: Unicode word boundaries, lower-cased, English
 * stop words (Lucene's list) dropped, stemmed by Snowball's English stemmer (Qdrant's defaults).
 * The {@code options} {@code k}, {@code b} and {@code avg_len} are honoured; Qdrant's other options
 * (tokenizer and language settings) are refused, naming the option.
 *
 * @param k term-frequency saturation (default 1.2)
 * @param b length normalisation in [0, 1] (default 0.75)
 * @param avgLen the expected average document length in tokens (default 256)
 */
public record Bm25Embedding(double k, double b, double avgLen) {

  /** The model names Qdrant gives its built-in BM25. */
  public static final List<String> MODELS = List.of("qdrant/bm25", "bm25");

  public static final Bm25Embedding DEFAULT = new Bm25Embedding(1.2, 0.75, 256);

  private static final Analyzer ENGLISH =
      new Analyzer() {
        private final CharArraySet stop = TextAnalysis.stopSet(List.of("english"), List.of(), true);

        @Override
        protected TokenStreamComponents createComponents(String fieldName) {
          Tokenizer src = new StandardTokenizer();
          TokenStream ts = new LowerCaseFilter(src);
          ts = new StopFilter(ts, stop);
          ts = new SnowballFilter(ts, TextAnalysis.newStemmer("english"));
          return new TokenStreamComponents(src, ts);
        }
      };

  public Bm25Embedding {
    if (!Double.isFinite(k) || k < 0) {
      throw new InvalidInputException(
          "Wrong input: options.k must be a finite number >= 0 [k=" + k + "]");
    }
    if (!Double.isFinite(b) || b < 0 || b > 1) {
      throw new InvalidInputException("Wrong input: options.b must be in [0, 1] [b=" + b + "]");
    }
    if (!Double.isFinite(avgLen) || avgLen <= 0) {
      throw new InvalidInputException(
          "Wrong input: options.avg_len must be a finite number > 0 [avg_len=" + avgLen + "]");
    }
  }

  /** Whether {@code model} names the built-in BM25 (case-insensitively, as Qdrant). */
  public static boolean isModel(String model) {
    return model != null && MODELS.contains(model.toLowerCase(java.util.Locale.ROOT));
  }

  /**
   * The BM25 of a document's {@code options} ({@code null} or absent: the defaults).
   *
   * @param at where the options are in the request, for errors
   */
  public static Bm25Embedding parse(JsonNode options, String at) {
    if (options == null || options.isNull() || options.isMissingNode()) {
      return DEFAULT;
    }
    if (!options.isObject()) {
      throw new InvalidInputException(
          "Wrong input: " + at + " must be an object [" + at + "=" + options + "]");
    }
    double k = DEFAULT.k;
    double b = DEFAULT.b;
    double avgLen = DEFAULT.avgLen;
    for (Map.Entry<String, JsonNode> e : options.properties()) {
      JsonNode v = e.getValue();
      String name = at + "." + e.getKey();
      if (v == null || v.isNull()) {
        continue;
      }
      switch (e.getKey()) {
        case "k" -> k = number(v, name);
        case "b" -> b = number(v, name);
        case "avg_len" -> avgLen = number(v, name);
        default ->
            throw new InvalidInputException(
                "Wrong input: "
                    + name
                    + ": not supported by FlashVec's BM25, which tokenizes by word boundaries,"
                    + " lower-cases, drops English stop words and stems in English; only k, b and"
                    + " avg_len are options ["
                    + name
                    + "="
                    + v
                    + "]");
      }
    }
    return new Bm25Embedding(k, b, avgLen);
  }

  private static double number(JsonNode v, String name) {
    if (!v.isNumber()) {
      throw new InvalidInputException(
          "Wrong input: " + name + " must be a number [" + name + "=" + v + "]");
    }
    return v.doubleValue();
  }

  /** A document's sparse vector: each distinct token's BM25 term-frequency weight. */
  public SparseVector document(String text) {
    List<String> tokens = tokens(text);
    Map<String, Integer> perToken = new TreeMap<>();
    for (String t : tokens) {
      perToken.merge(t, 1, Integer::sum);
    }
    // as Qdrant: counted per token, then keyed by the token's index (two tokens of one index, a
    // hash collision, keep one weight)
    double len = tokens.size();
    Map<Long, Float> weights = new TreeMap<>();
    for (Map.Entry<String, Integer> e : perToken.entrySet()) {
      double n = e.getValue();
      double tf = n * (k + 1) / (k * (1 - b + b * len / avgLen) + n);
      weights.put(tokenId(e.getKey()), (float) tf);
    }
    return vector(weights);
  }

  /** A query's sparse vector: each distinct token with weight 1. */
  public SparseVector query(String text) {
    Map<Long, Float> weights = new TreeMap<>();
    for (String t : tokens(text)) {
      weights.put(tokenId(t), 1f);
    }
    return vector(weights);
  }

  private static SparseVector vector(Map<Long, Float> weights) {
    long[] indices = new long[weights.size()];
    float[] values = new float[weights.size()];
    int i = 0;
    for (Map.Entry<Long, Float> e : weights.entrySet()) {
      indices[i] = e.getKey();
      values[i++] = e.getValue();
    }
    return SparseVector.of(indices, values, "bm25");
  }

  /** Qdrant's token index: MurmurHash3 x86 32-bit (seed 0) of the UTF-8 bytes, |as i32|. */
  public static long tokenId(String token) {
    byte[] bytes = token.getBytes(StandardCharsets.UTF_8);
    int h = StringHelper.murmurhash3_x86_32(bytes, 0, bytes.length, 0);
    return Math.abs((long) h);
  }

  /** The text's tokens, in order, repeats included. */
  static List<String> tokens(String text) {
    List<String> out = new ArrayList<>();
    try (TokenStream ts = ENGLISH.tokenStream("t", text)) {
      CharTermAttribute term = ts.addAttribute(CharTermAttribute.class);
      ts.reset();
      while (ts.incrementToken()) {
        out.add(term.toString());
      }
      ts.end();
    } catch (IOException e) {
      throw new IllegalStateException("tokenizing a string cannot fail", e);
    }
    return out;
  }
}
