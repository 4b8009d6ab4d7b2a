package io.flashvec.loadgen.client;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.flashvec.loadgen.dataset.Distance;
import org.junit.jupiter.api.Test;

/**
 * The SQL pieces of the pgvector driver (a live PostgreSQL is exercised by
 * scripts/bench/bench-peers.sh).
 */
class PgVectorClientTest {
  @Test
  void vectorLiteralAndOperatorsPerMetric() {
    assertThat(PgVectorClient.literal(new float[] {1f, -0.5f, 1e-5f}))
        .isEqualTo("[1.0,-0.5,1.0E-5]");
    assertThat(PgVectorClient.operator(Distance.COSINE)).isEqualTo("<=>");
    assertThat(PgVectorClient.operator(Distance.DOT)).isEqualTo("<#>");
    assertThat(PgVectorClient.operator(Distance.EUCLID)).isEqualTo("<->");
    assertThat(PgVectorClient.opclass(Distance.EUCLID)).isEqualTo("vector_l2_ops");
  }

  @Test
  void tableNamesArePlainIdentifiers() {
    assertThat(PgVectorClient.table("Bench_1")).isEqualTo("bench_1");
    assertThatThrownBy(() -> PgVectorClient.table("x; DROP TABLE y"))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessage("collection name is not a plain SQL identifier [collection=x; DROP TABLE y]");
  }
}
