package io.flashvec.loadgen.client;

import static org.assertj.core.api.Assertions.assertThat;

import io.flashvec.loadgen.internal.Json;
import org.junit.jupiter.api.Test;

class QdrantRestClientTest {

  @Test
  void runningOptimizationsAreSummarizedWithTheShareDoneWhereReported() throws Exception {
    String running =
        """
        [{"optimizer":"merge","status":"optimizing",
          "progress":{"name":"merge","done":665640,"total":1548000}},
         {"optimizer":"indexing","status":"optimizing",
          "progress":{"name":"indexing","done":null,"total":18000}}]
        """;
    assertThat(QdrantRestClient.summarizeRunning(Json.MAPPER.readTree(running)))
        .isEqualTo("merge 43% of 1548000 points; indexing 18000 points");
    assertThat(QdrantRestClient.summarizeRunning(Json.MAPPER.readTree("[]"))).isNull();
    assertThat(QdrantRestClient.summarizeRunning(Json.MAPPER.readTree("{}"))).isNull();
  }
}
