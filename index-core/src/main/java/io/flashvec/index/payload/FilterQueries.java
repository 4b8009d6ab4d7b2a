package io.flashvec.index.payload;

import io.flashvec.index.filter.Condition;
import io.flashvec.index.filter.Filter;
import io.flashvec.index.payload.PayloadFieldSchema.Type;
import java.util.ArrayList;
import java.util.List;
import org.apache.lucene.document.DoublePoint;
import org.apache.lucene.document.LongPoint;
import org.apache.lucene.index.Term;
import org.apache.lucene.search.BooleanClause.Occur;
import org.apache.lucene.search.BooleanQuery;
import org.apache.lucene.search.MatchAllDocsQuery;
import org.apache.lucene.search.MatchNoDocsQuery;
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
 * on integer and float indexes, datetime ranges on a datetime index, {@code is_empty}); anything
 * else ({@code has_id}, {@code except}, {@code is_null}, {@code nested}, unindexed keys, a value of
 * another type than the index) becomes "match all, inexact", and the caller checks the candidates
 * with the evaluator. Inexact parts under {@code must_not}, {@code should} and {@code min_should}
 * widen to match-all, so the superset property holds.
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
          yield Translation.ALL_INEXACT; // every string value matches: the evaluator decides
        }
        BooleanQuery.Builder b = new BooleanQuery.Builder();
        for (String t : tokens) {
          b.add(new TermQuery(new Term(PayloadDocuments.TEXT + f.field(), t)), Occur.FILTER);
        }
        yield new Translation(b.build(), true);
      }
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
      case Condition.MatchExcept m -> Translation.ALL_INEXACT;
      case Condition.IsNull n -> Translation.ALL_INEXACT;
      case Condition.Nested n -> Translation.ALL_INEXACT;
    };
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
