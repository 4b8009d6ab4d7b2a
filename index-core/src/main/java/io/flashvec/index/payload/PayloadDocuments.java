package io.flashvec.index.payload;

import io.flashvec.index.filter.Condition;
import io.flashvec.index.filter.FieldPath;
import io.flashvec.index.filter.FilterEvaluator;
import io.flashvec.index.filter.FilterParser;
import io.flashvec.index.filter.Geo;
import io.flashvec.index.filter.StoredPayloads;
import java.time.Instant;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import org.apache.lucene.analysis.Analyzer;
import org.apache.lucene.analysis.core.KeywordAnalyzer;
import org.apache.lucene.analysis.miscellaneous.PerFieldAnalyzerWrapper;
import org.apache.lucene.document.Document;
import org.apache.lucene.document.DoublePoint;
import org.apache.lucene.document.Field;
import org.apache.lucene.document.LatLonPoint;
import org.apache.lucene.document.LongPoint;
import org.apache.lucene.document.SortedNumericDocValuesField;
import org.apache.lucene.document.StringField;
import org.apache.lucene.document.TextField;
import org.apache.lucene.util.NumericUtils;
import tools.jackson.core.JacksonException;
import tools.jackson.databind.JsonNode;
import tools.jackson.databind.json.JsonMapper;

/**
 * Turns a point's payload into the Lucene document of its ordinal. For every indexed key, the
 * values the key reaches (as {@link FilterEvaluator#values} finds them, arrays flattened) are
 * indexed by the key's type, under a field name with a type prefix:
 *
 * <ul>
 *   <li>{@code kw.<key>}: strings of a keyword or uuid index, as exact terms;
 *   <li>{@code int.<key>}: integers of an integer index, as long points;
 *   <li>{@code num.<key>}: every number of an integer or float index, as double points and sortable
 *       doc values (ranges and {@code order_by});
 *   <li>{@code bool.<key>}: booleans as {@code true}/{@code false} terms;
 *   <li>{@code dt.<key>}: strings that parse as datetimes, as epoch-nanosecond long points and doc
 *       values (clamped to the years 1677–2262);
 *   <li>{@code txt.<key>}: strings of a text index, tokenized by its analyzer, with positions
 *       (BM25, {@code match.text}, {@code text_any} and {@code phrase}); the values of an array are
 *       {@link PayloadSchema#POSITION_GAP} positions apart;
 *   <li>{@code geo.<key>}: geo points of a geo index ({@link Geo#point}) as Lucene {@link
 *       LatLonPoint}s;
 *   <li>{@code _has}: a term {@code <key>} when the key has a non-null value ({@code is_empty}).
 * </ul>
 *
 * Values of another type than the index's are not indexed; filters on them fall back to the
 * evaluator (see {@link FilterQueries}).
 */
public final class PayloadDocuments {

  static final String KEYWORD = "kw.";
  static final String INTEGER = "int.";
  static final String NUMBER = "num.";
  static final String BOOL = "bool.";
  static final String DATETIME = "dt.";
  static final String TEXT = "txt.";
  static final String GEO = "geo.";
  static final String HAS = "_has";

  private static final JsonMapper JSON = JsonMapper.builder().build();

  private final PayloadSchema schema;
  private final Map<String, FieldPath> paths = new HashMap<>();

  PayloadDocuments(PayloadSchema schema) {
    this.schema = schema;
    for (PayloadFieldSchema f : schema.fields().values()) {
      paths.put(f.field(), f.path());
    }
  }

  /** The analyzer for indexing: each text field with its tokenizer, everything else verbatim. */
  Analyzer analyzer() {
    Map<String, Analyzer> per = new HashMap<>();
    for (PayloadFieldSchema f : schema.fields().values()) {
      if (f.type() == PayloadFieldSchema.Type.TEXT) {
        per.put(TEXT + f.field(), schema.indexAnalyzer(f.field()));
      }
    }
    return new PerFieldAnalyzerWrapper(new KeywordAnalyzer(), per);
  }

  /** The document for a payload ({@code null}: none); empty when no indexed key has a value. */
  Document document(byte[] payload) {
    Document d = new Document();
    JsonNode root = parse(payload);
    if (root == null) {
      return d;
    }
    for (PayloadFieldSchema f : schema.fields().values()) {
      String key = f.field();
      boolean has = false;
      for (JsonNode v : FilterEvaluator.values(paths.get(key), root)) {
        if (v.isNull()) {
          continue;
        }
        has = true;
        add(d, f, v);
      }
      if (has) {
        d.add(new StringField(HAS, key, Field.Store.NO));
      }
    }
    return d;
  }

  private static void add(Document d, PayloadFieldSchema f, JsonNode v) {
    String key = f.field();
    switch (f.type()) {
      case KEYWORD, UUID -> {
        if (v.isString()) {
          d.add(new StringField(KEYWORD + key, v.asString(), Field.Store.NO));
        }
      }
      case INTEGER, FLOAT -> {
        if (f.type() == PayloadFieldSchema.Type.INTEGER
            && v.isIntegralNumber()
            && v.canConvertToLong()) {
          d.add(new LongPoint(INTEGER + key, v.longValue()));
        }
        if (v.isNumber()) {
          double x = v.doubleValue();
          d.add(new DoublePoint(NUMBER + key, x));
          d.add(
              new SortedNumericDocValuesField(NUMBER + key, NumericUtils.doubleToSortableLong(x)));
        }
      }
      case BOOL -> {
        if (v.isBoolean()) {
          d.add(new StringField(BOOL + key, Boolean.toString(v.booleanValue()), Field.Store.NO));
        }
      }
      case DATETIME -> {
        if (v.isString()) {
          Instant t = FilterParser.parseDatetime(v.asString());
          if (t != null) {
            long n = nanos(t);
            d.add(new LongPoint(DATETIME + key, n));
            d.add(new SortedNumericDocValuesField(DATETIME + key, n));
          }
        }
      }
      case TEXT -> {
        if (v.isString()) {
          d.add(new TextField(TEXT + key, v.asString(), Field.Store.NO));
        }
      }
      case GEO -> {
        Condition.GeoPoint p = Geo.point(v);
        if (p != null) {
          d.add(new LatLonPoint(GEO + key, p.lat(), p.lon()));
        }
      }
    }
  }

  /** Nanoseconds since the epoch, clamped to the range of a long. */
  public static long nanos(Instant t) {
    try {
      return Math.addExact(Math.multiplyExact(t.getEpochSecond(), 1_000_000_000L), t.getNano());
    } catch (ArithmeticException e) {
      return t.getEpochSecond() < 0 ? Long.MIN_VALUE : Long.MAX_VALUE;
    }
  }

  /**
   * The value {@code order_by} sorts a payload by: the smallest ({@code asc}) or largest number or
   * datetime (epoch nanoseconds) of {@code key}, or {@code null} when it has none. The slow path,
   * for segments without an index.
   */
  /** Every value of the order-by field in {@code payload}, in payload order (none: empty). */
  static double[] orderValues(byte[] payload, PayloadFieldSchema f) {
    JsonNode root = parse(payload);
    if (root == null) {
      return new double[0];
    }
    List<JsonNode> values = FilterEvaluator.values(f.path(), root);
    double[] out = new double[values.size()];
    int n = 0;
    for (JsonNode v : values) {
      if (f.type() == PayloadFieldSchema.Type.DATETIME) {
        if (v.isString()) {
          Instant t = FilterParser.parseDatetime(v.asString());
          if (t != null) {
            out[n++] = nanos(t);
          }
        }
      } else if (v.isNumber()) {
        out[n++] = v.doubleValue();
      }
    }
    return java.util.Arrays.copyOf(out, n);
  }

  private static JsonNode parse(byte[] payload) {
    if (payload == null || payload.length == 0) {
      return null;
    }
    try {
      JsonNode n = JSON.readTree(StoredPayloads.repair(payload));
      return n.isObject() ? n : null;
    } catch (JacksonException e) {
      return null; // payloads are validated JSON objects on the way in
    }
  }
}
