package io.flashvec.index.payload;

import io.flashvec.index.filter.Condition;
import io.flashvec.index.filter.FieldPath;
import io.flashvec.index.filter.Filter;
import io.flashvec.index.filter.FilterEvaluator;
import io.flashvec.index.filter.Geo;
import io.flashvec.index.payload.PayloadFieldSchema.Type;
import java.util.ArrayList;
import java.util.List;
import org.apache.lucene.document.DoublePoint;
import org.apache.lucene.document.LatLonPoint;
import org.apache.lucene.document.LongPoint;
import org.apache.lucene.index.Term;
import org.apache.lucene.search.BooleanClause.Occur;
import org.apache.lucene.search.BooleanQuery;
import org.apache.lucene.search.MatchAllDocsQuery;
import org.apache.lucene.search.MatchNoDocsQuery;
import org.apache.lucene.search.PhraseQuery;
import org.apache.lucene.search.PrefixQuery;
import org.apache.lucene.search.Query;
import org.apache.lucene.search.TermInSetQuery;
import org.apache.lucene.search.TermQuery;
import org.apache.lucene.util.BytesRef;

/**
 * Translates a {@link Filter} into a Lucene query over a segment's payload index.
 *
 * <p>The query always matches a <em>superset</em> of the points the filter accepts; it is {@link
 * Translation#exact() exact} when it matches precisely the same points as {@link
 * io.flashvec.index.filter.FilterEvaluator}. Conditions on indexed keys translate exactly ({@code
 * match.value}/{@code any} of the index's type, {@code match.text} on a text index, {@code range}
 * on integer and float indexes, datetime ranges on a datetime index, {@code is_empty}, {@code
 * text_any} and {@code phrase} on a text index, {@code prefix} on a keyword index). Geo conditions
 * on a geo index translate to a slightly larger area (a box around a polygon), inexact: the
 * evaluator decides on the candidates. Anything else ({@code has_id}, {@code except}, {@code
 * is_null}, {@code values_count}, {@code nested}, unindexed keys, a value of another type than the
 * index) becomes "match all, inexact", and the caller checks the candidates with the evaluator.
 * Inexact parts under {@code must_not}, {@code should} and {@code min_should} widen to match-all,
 * so the superset property holds.
 */
public final class FilterQueries {

  /**
   * A query and whether it is exact.
   *
   * @param query matches every point the filter accepts
   * @param exact it matches no other point
   */
  public record Translation(Query query, boolean exact) {

    static final Translation ALL_EXACT = new Translation(new MatchAllDocsQuery(), true);
    static final Translation ALL_INEXACT = new Translation(new MatchAllDocsQuery(), false);

    /** Whether the query narrows nothing (then evaluating directly is cheaper). */
    public boolean useless() {
      return !exact && query instanceof MatchAllDocsQuery;
    }
  }

  private FilterQueries() {}

  public static Translation translate(Filter filter, PayloadSchema schema) {
    return condition(filter, schema);
  }

  private static Translation condition(Condition c, PayloadSchema schema) {
    return switch (c) {
      case Filter f -> filter(f, schema);
      case Condition.MatchValue m -> {
        PayloadFieldSchema f = schema.field(m.key().key());
        yield f == null ? Translation.ALL_INEXACT : matchValue(f, m.value());
      }
      case Condition.MatchAny m -> {
        PayloadFieldSchema f = schema.field(m.key().key());
        if (f == null) {
          yield Translation.ALL_INEXACT;
        }
        if (m.values().isEmpty()) {
          yield new Translation(new MatchNoDocsQuery(), true);
        }
        yield matchAny(f, m.values());
      }
      case Condition.MatchText m -> {
        PayloadFieldSchema f = schema.field(m.key().key());
        if (f == null || f.type() != Type.TEXT) {
          yield Translation.ALL_INEXACT;
        }
        List<String> tokens = schema.queryTokens(m.key(), m.text());
        if (tokens.isEmpty()) {
          // as Qdrant: a query with no words (empty, or only stop words) matches nothing
          yield new Translation(new MatchNoDocsQuery(), true);
        }
        BooleanQuery.Builder b = new BooleanQuery.Builder();
        for (String t : tokens) {
          b.add(new TermQuery(new Term(PayloadDocuments.TEXT + f.field(), t)), Occur.FILTER);
        }
        yield new Translation(b.build(), true);
      }
      case Condition.MatchTextAny m -> {
        PayloadFieldSchema f = schema.field(m.key().key());
        if (f == null || f.type() != Type.TEXT) {
          yield Translation.ALL_INEXACT;
        }
        List<String> tokens = schema.queryTokens(m.key(), m.text());
        if (tokens.isEmpty()) {
          yield new Translation(new MatchNoDocsQuery(), true);
        }
        BooleanQuery.Builder b = new BooleanQuery.Builder();
        for (String t : tokens) {
          b.add(new TermQuery(new Term(PayloadDocuments.TEXT + f.field(), t)), Occur.SHOULD);
        }
        yield new Translation(b.build(), true);
      }
      case Condition.MatchPhrase m -> {
        PayloadFieldSchema f = schema.field(m.key().key());
        if (f == null || f.type() != Type.TEXT) {
          yield Translation.ALL_INEXACT;
        }
        List<FilterEvaluator.Token> tokens = schema.phraseTokens(m.key(), m.phrase());
        if (tokens.isEmpty()) {
          yield new Translation(new MatchNoDocsQuery(), true);
        }
        PhraseQuery.Builder b = new PhraseQuery.Builder();
        for (FilterEvaluator.Token t : tokens) {
          b.add(new Term(PayloadDocuments.TEXT + f.field(), t.term()), t.position());
        }
        // a phrase longer than the gap between array values could join two values, and prefixes
        // stored by a prefix index match more than whole words: then the evaluator decides
        yield new Translation(
            b.build(),
            tokens.getLast().position() < PayloadSchema.POSITION_GAP
                && schema.exactPhrases(f.field()));
      }
      case Condition.MatchPrefix m -> {
        PayloadFieldSchema f = schema.field(m.key().key());
        if (f == null || f.type() != Type.KEYWORD) {
          yield Translation.ALL_INEXACT;
        }
        yield new Translation(
            new PrefixQuery(new Term(PayloadDocuments.KEYWORD + f.field(), m.prefix())), true);
      }
      case Condition.GeoRadius g -> {
        PayloadFieldSchema f = geo(schema, g.key());
        if (f == null) {
          yield Translation.ALL_INEXACT;
        }
        double r = g.radius() * (1 + 1e-6) + 1.0;
        if (r >= Math.PI * Geo.EARTH_RADIUS_METERS) {
          yield new Translation(hasValue(f), false);
        }
        yield new Translation(
            LatLonPoint.newDistanceQuery(
                PayloadDocuments.GEO + f.field(), g.center().lat(), g.center().lon(), r),
            false);
      }
      case Condition.GeoBoundingBox g -> {
        PayloadFieldSchema f = geo(schema, g.key());
        if (f == null) {
          yield Translation.ALL_INEXACT;
        }
        double south = g.bottomRight().lat();
        double north = g.topLeft().lat();
        double west = g.topLeft().lon();
        double east = g.bottomRight().lon();
        if (south >= north || west == east) {
          yield new Translation(new MatchNoDocsQuery(), true); // strictly inside nothing
        }
        double minLon;
        double maxLon;
        if (west < east) {
          minLon = Math.max(-180, west - SLACK_DEGREES);
          maxLon = Math.min(180, east + SLACK_DEGREES);
        } else if (west - SLACK_DEGREES > east + SLACK_DEGREES) {
          minLon = west - SLACK_DEGREES; // crosses the antimeridian: minLon > maxLon
          maxLon = east + SLACK_DEGREES;
        } else {
          minLon = -180;
          maxLon = 180;
        }
        yield new Translation(
            LatLonPoint.newBoxQuery(
                PayloadDocuments.GEO + f.field(),
                Math.max(-90, south - SLACK_DEGREES),
                Math.min(90, north + SLACK_DEGREES),
                minLon,
                maxLon),
            false);
      }
      case Condition.GeoPolygon g -> {
        PayloadFieldSchema f = geo(schema, g.key());
        if (f == null) {
          yield Translation.ALL_INEXACT;
        }
        // candidates from the exterior ring's bounds; the evaluator tests the polygon itself
        double minLat = 90;
        double maxLat = -90;
        double minLon = 180;
        double maxLon = -180;
        for (Condition.GeoPoint p : g.exterior()) {
          minLat = Math.min(minLat, p.lat());
          maxLat = Math.max(maxLat, p.lat());
          minLon = Math.min(minLon, p.lon());
          maxLon = Math.max(maxLon, p.lon());
        }
        yield new Translation(
            LatLonPoint.newBoxQuery(
                PayloadDocuments.GEO + f.field(),
                Math.max(-90, minLat - SLACK_DEGREES),
                Math.min(90, maxLat + SLACK_DEGREES),
                Math.max(-180, minLon - SLACK_DEGREES),
                Math.min(180, maxLon + SLACK_DEGREES)),
            false);
      }
      case Condition.ValuesCount v -> Translation.ALL_INEXACT;
      case Condition.FieldIsEmpty e -> Translation.ALL_INEXACT;
      case Condition.FieldIsNull n -> Translation.ALL_INEXACT;
      case Condition.Range r -> {
        PayloadFieldSchema f = schema.field(r.key().key());
        if (f == null || (f.type() != Type.INTEGER && f.type() != Type.FLOAT)) {
          yield Translation.ALL_INEXACT;
        }
        double lo = Double.NEGATIVE_INFINITY;
        double hi = Double.POSITIVE_INFINITY;
        if (!Double.isNaN(r.gte())) {
          lo = Math.max(lo, r.gte());
        }
        if (!Double.isNaN(r.gt())) {
          lo = Math.max(lo, Math.nextUp(r.gt()));
        }
        if (!Double.isNaN(r.lte())) {
          hi = Math.min(hi, r.lte());
        }
        if (!Double.isNaN(r.lt())) {
          hi = Math.min(hi, Math.nextDown(r.lt()));
        }
        yield new Translation(
            DoublePoint.newRangeQuery(PayloadDocuments.NUMBER + f.field(), lo, hi), true);
      }
      case Condition.DatetimeRange r -> {
        PayloadFieldSchema f = schema.field(r.key().key());
        if (f == null || f.type() != Type.DATETIME) {
          yield Translation.ALL_INEXACT;
        }
        long lo = Long.MIN_VALUE;
        long hi = Long.MAX_VALUE;
        if (r.gte() != null) {
          lo = Math.max(lo, PayloadDocuments.nanos(r.gte()));
        }
        if (r.gt() != null) {
          lo = Math.max(lo, saturatedAdd(PayloadDocuments.nanos(r.gt()), 1));
        }
        if (r.lte() != null) {
          hi = Math.min(hi, PayloadDocuments.nanos(r.lte()));
        }
        if (r.lt() != null) {
          hi = Math.min(hi, saturatedAdd(PayloadDocuments.nanos(r.lt()), -1));
        }
        yield new Translation(
            LongPoint.newRangeQuery(PayloadDocuments.DATETIME + f.field(), lo, hi), true);
      }
      case Condition.IsEmpty e -> {
        PayloadFieldSchema f = schema.field(e.key().key());
        if (f == null) {
          yield Translation.ALL_INEXACT;
        }
        yield new Translation(
            new BooleanQuery.Builder()
                .add(new MatchAllDocsQuery(), Occur.FILTER)
                .add(new TermQuery(new Term(PayloadDocuments.HAS, f.field())), Occur.MUST_NOT)
                .build(),
            true);
      }
      case Condition.HasId h -> Translation.ALL_INEXACT;
      case Condition.Slice sl -> Translation.ALL_INEXACT;
      case Condition.HasVector h -> Translation.ALL_INEXACT;
      case Condition.MatchExcept m -> Translation.ALL_INEXACT;
      case Condition.IsNull n -> Translation.ALL_INEXACT;
      case Condition.Nested n -> Translation.ALL_INEXACT;
    };
  }

  /**
   * How far geo candidate areas are widened, in degrees: Lucene stores a coordinate rounded to
   * about 4e-8 degrees, so a point just inside an area's edge may be stored just outside it. The
   * candidates are a superset and the evaluator decides on the exact coordinates.
   */
  private static final double SLACK_DEGREES = 1e-6;

  private static PayloadFieldSchema geo(PayloadSchema schema, FieldPath key) {
    PayloadFieldSchema f = schema.field(key.key());
    return f == null || f.type() != Type.GEO ? null : f;
  }

  private static Query hasValue(PayloadFieldSchema f) {
    return new TermQuery(new Term(PayloadDocuments.HAS, f.field()));
  }

  private static long saturatedAdd(long a, long b) {
    long r = a + b;
    return ((a ^ r) & (b ^ r)) < 0 ? (a < 0 ? Long.MIN_VALUE : Long.MAX_VALUE) : r;
  }

  private static Translation matchValue(PayloadFieldSchema f, Object v) {
    String key = f.field();
    return switch (f.type()) {
      case KEYWORD, UUID ->
          v instanceof String s
              ? new Translation(new TermQuery(new Term(PayloadDocuments.KEYWORD + key, s)), true)
              : Translation.ALL_INEXACT;
      case INTEGER ->
          v instanceof Long l
              ? new Translation(LongPoint.newExactQuery(PayloadDocuments.INTEGER + key, l), true)
              : Translation.ALL_INEXACT;
      case BOOL ->
          v instanceof Boolean b
              ? new Translation(
                  new TermQuery(new Term(PayloadDocuments.BOOL + key, b.toString())), true)
              : Translation.ALL_INEXACT;
      default -> Translation.ALL_INEXACT;
    };
  }

  private static Translation matchAny(PayloadFieldSchema f, java.util.Set<Object> values) {
    String key = f.field();
    switch (f.type()) {
      case KEYWORD, UUID -> {
        List<BytesRef> terms = new ArrayList<>();
        for (Object v : values) {
          if (!(v instanceof String s)) {
            return Translation.ALL_INEXACT;
          }
          terms.add(new BytesRef(s));
        }
        return new Translation(new TermInSetQuery(PayloadDocuments.KEYWORD + key, terms), true);
      }
      case INTEGER -> {
        long[] ls = new long[values.size()];
        int i = 0;
        for (Object v : values) {
          if (!(v instanceof Long l)) {
            return Translation.ALL_INEXACT;
          }
          ls[i++] = l;
        }
        return new Translation(LongPoint.newSetQuery(PayloadDocuments.INTEGER + key, ls), true);
      }
      default -> {
        return Translation.ALL_INEXACT;
      }
    }
  }

  private static Translation filter(Filter f, PayloadSchema schema) {
    BooleanQuery.Builder b = new BooleanQuery.Builder();
    boolean exact = true;
    boolean any = false;
    for (Condition c : f.must()) {
      Translation t = condition(c, schema);
      exact &= t.exact();
      if (!(t.query() instanceof MatchAllDocsQuery)) {
        b.add(t.query(), Occur.FILTER);
        any = true;
      }
    }
    for (Condition c : f.mustNot()) {
      Translation t = condition(c, schema);
      if (t.exact()) {
        b.add(t.query(), Occur.MUST_NOT);
        any = true;
      } else {
        exact = false; // cannot exclude what is only approximated: the evaluator checks
      }
    }
    if (!f.should().isEmpty()) {
      Translation t = disjunction(f.should(), 1, schema);
      exact &= t.exact();
      if (!(t.query() instanceof MatchAllDocsQuery)) {
        b.add(t.query(), Occur.FILTER);
        any = true;
      }
    }
    if (f.minShould() != null) {
      Translation t = disjunction(f.minShould().conditions(), f.minShould().minCount(), schema);
      exact &= t.exact();
      if (!(t.query() instanceof MatchAllDocsQuery)) {
        b.add(t.query(), Occur.FILTER);
        any = true;
      }
    }
    if (!any) {
      return exact ? Translation.ALL_EXACT : Translation.ALL_INEXACT;
    }
    b.add(new MatchAllDocsQuery(), Occur.FILTER); // a clause to subtract MUST_NOT from
    return new Translation(b.build(), exact);
  }

  private static Translation disjunction(List<Condition> cs, int min, PayloadSchema schema) {
    if (min <= 0) {
      return Translation.ALL_EXACT;
    }
    if (min > cs.size()) {
      return new Translation(new MatchNoDocsQuery(), true);
    }
    BooleanQuery.Builder b = new BooleanQuery.Builder();
    for (Condition c : cs) {
      Translation t = condition(c, schema);
      if (!t.exact()) {
        return Translation.ALL_INEXACT;
      }
      b.add(t.query(), Occur.SHOULD);
    }
    b.setMinimumNumberShouldMatch(min);
    return new Translation(b.build(), true);
  }
}
