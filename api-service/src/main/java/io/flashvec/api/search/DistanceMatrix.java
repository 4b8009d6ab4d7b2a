package io.flashvec.api.search;

import io.flashvec.api.web.Json;
import io.flashvec.api.web.Requests;
import io.flashvec.index.Distance;
import io.flashvec.index.Record;
import io.flashvec.index.filter.Filter;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import tools.jackson.databind.JsonNode;
import tools.jackson.databind.node.ArrayNode;
import tools.jackson.databind.node.ObjectNode;

/**
 * Qdrant's distance matrix ({@code points/search/matrix/pairs} and {@code …/offsets}): {@code
 * sample} points drawn at random among those that pass the filter, and for each its {@code limit}
 * nearest among the others, scored exactly from their stored vectors. Points come in id order, each
 * one's neighbours best first (ties by id).
 */
final class DistanceMatrix {

  /** Qdrant's defaults. */
  static final int DEFAULT_SAMPLE = 10;

  static final int DEFAULT_LIMIT = 3;

  /** One row: a sampled point and its nearest others, as indexes into the sample. */
  record Row(Record point, int[] neighbours, float[] scores) {}

  private final UniversalQuery query;
  private final int maxSample;

  DistanceMatrix(UniversalQuery query, int maxSample) {
    this.query = query;
    this.maxSample = maxSample;
  }

  List<Row> rows(String collection, JsonNode b) {
    if (!b.isObject()) {
      throw new io.flashvec.index.InvalidInputException("Wrong input: body must be an object");
    }
    Requests.refuseUnknown(b, Requests.Fields.MATRIX, "");
    JsonNode using = b.get("using");
    if (using != null && !using.isNull() && !using.isString()) {
      throw Requests.invalid("using must be a vector name", "using", using);
    }
    String name = using == null || using.isNull() ? "" : using.asString();
    String internal = query.config(collection).internalName(name);
    if (!query.config(collection).isDense(internal)) {
      throw Requests.invalid(
          "the distance matrix of a sparse vector is not supported, only of dense vectors",
          "using",
          using);
    }
    io.flashvec.index.DenseVectorParams field = query.config(collection).denseField(internal);
    if (field != null && field.multivector()) {
      throw Requests.invalid(
          "the distance matrix of a multivector is not supported, only of single dense vectors",
          "using",
          using);
    }
    int sample = Requests.nonNegativeInt(b, "sample", DEFAULT_SAMPLE, maxSample);
    int limit = Requests.nonNegativeInt(b, "limit", DEFAULT_LIMIT, maxSample);
    if (sample < 2) {
      throw Requests.invalid("sample must be 2 or larger", "sample", b.get("sample"));
    }
    if (limit < 1) {
      throw Requests.invalid("limit must be 1 or larger", "limit", b.get("limit"));
    }
    Filter filter = Requests.filter(b, "");
    Distance d = query.config(collection).distance(internal);
    List<Record> points =
        new ArrayList<>(
            query.sample(collection, filter, sample, new UniversalQuery.Fetch(false, true)));
    points.removeIf(r -> UniversalQuery.vectorOf(r, internal) == null);
    points.sort(Comparator.comparing(Record::id));
    int n = points.size();
    List<Row> rows = new ArrayList<>(n);
    Integer[] order = new Integer[n];
    float[] score = new float[n];
    for (int a = 0; a < n; a++) {
      float[] va = UniversalQuery.vectorOf(points.get(a), internal);
      int m = 0;
      for (int other = 0; other < n; other++) {
        if (other != a) {
          score[other] = d.score(va, UniversalQuery.vectorOf(points.get(other), internal), 0);
          order[m++] = other;
        }
      }
      Comparator<Integer> best =
          d.higherIsBetter()
              ? Comparator.comparingDouble((Integer i) -> -score[i])
              : Comparator.comparingDouble((Integer i) -> score[i]);
      java.util.Arrays.sort(order, 0, m, best.thenComparing(i -> points.get(i).id()));
      int k = Math.min(limit, m);
      int[] nb = new int[k];
      float[] sc = new float[k];
      for (int j = 0; j < k; j++) {
        nb[j] = order[j];
        sc[j] = score[order[j]];
      }
      rows.add(new Row(points.get(a), nb, sc));
    }
    return rows;
  }

  /** {@code {"pairs": [{"a", "b", "score"}]}}. */
  static ObjectNode pairs(List<Row> rows) {
    ObjectNode out = Json.object();
    ArrayNode pairs = out.putArray("pairs");
    for (Row r : rows) {
      for (int j = 0; j < r.neighbours().length; j++) {
        ObjectNode p = pairs.addObject();
        Json.putId(p, "a", r.point().id());
        Json.putId(p, "b", rows.get(r.neighbours()[j]).point().id());
        p.put("score", r.scores()[j]);
      }
    }
    return out;
  }

  /** {@code {"offsets_row", "offsets_col", "scores", "ids"}}: a sparse matrix over {@code ids}. */
  static ObjectNode offsets(List<Row> rows) {
    ObjectNode out = Json.object();
    ArrayNode row = out.putArray("offsets_row");
    ArrayNode col = out.putArray("offsets_col");
    ArrayNode scores = out.putArray("scores");
    ArrayNode ids = out.putArray("ids");
    for (int i = 0; i < rows.size(); i++) {
      Row r = rows.get(i);
      for (int j = 0; j < r.neighbours().length; j++) {
        row.add(i);
        col.add(r.neighbours()[j]);
        scores.add(r.scores()[j]);
      }
      ObjectNode holder = Json.object();
      Json.putId(holder, "id", r.point().id());
      ids.add(holder.get("id"));
    }
    return out;
  }
}
