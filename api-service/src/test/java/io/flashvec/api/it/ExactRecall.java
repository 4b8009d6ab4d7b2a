package io.flashvec.api.it;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.HashSet;
import java.util.Random;
import java.util.Set;
import tools.jackson.databind.JsonNode;

/**
 * Recall@10 of a collection's searches against its exact ones (Qdrant's {@code params.exact}), over
 * HTTP: for tests that change how a collection's vectors are indexed and check that searches still
 * find what an exact scan finds.
 */
final class ExactRecall {

  private ExactRecall() {}

  /**
   * Runs 20 gaussian queries of {@code dim} dimensions against {@code collection} (its vector
   * {@code using}, {@code null}: the default one) with and without {@code exact}, and asserts that
   * every search returns 10 points and recall@10 is at least 0.9 ({@code when} names the moment).
   */
  static void check(Http http, String collection, String using, int dim, Random r, String when) {
    int hits = 0;
    for (int i = 0; i < 20; i++) {
      float[] q = gaussian(r, dim);
      Set<Long> exact = ids(query(http, collection, using, q, true));
      Set<Long> found = ids(query(http, collection, using, q, false));
      assertThat(found).as(when).hasSize(10);
      found.retainAll(exact);
      hits += found.size();
    }
    assertThat(hits / 200.0).as("recall@10 %s", when).isGreaterThanOrEqualTo(0.9);
  }

  private static JsonNode query(
      Http http, String collection, String using, float[] q, boolean exact) {
    Http.Response resp =
        http.post(
            "/collections/" + collection + "/points/query",
            "{\"query\": "
                + SparseVectorsIT.vec(q)
                + (using == null ? "" : ", \"using\": \"" + using + "\"")
                + ", \"limit\": 10, \"params\": {\"exact\": "
                + exact
                + "}}");
    assertThat(resp.status()).as(resp.raw()).isEqualTo(200);
    return resp.result().get("points");
  }

  private static Set<Long> ids(JsonNode points) {
    Set<Long> out = new HashSet<>();
    for (JsonNode p : points) {
      out.add(p.get("id").longValue());
    }
    return out;
  }

  /** A vector of {@code dim} standard normal coordinates. */
  static float[] gaussian(Random r, int dim) {
    float[] v = new float[dim];
    for (int i = 0; i < dim; i++) {
      v[i] = (float) r.nextGaussian();
    }
    return v;
  }
}
