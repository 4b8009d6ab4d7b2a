package io.flashvec.cluster.metadata;

import static org.assertj.core.api.Assertions.assertThat;

import io.flashvec.index.CollectionConfig;
import io.flashvec.index.CollectionTuning;
import io.flashvec.index.Distance;
import io.flashvec.index.IndexParams;
import io.flashvec.storage.FsyncPolicy;
import java.nio.charset.StandardCharsets;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * The etcd value formats (the store against a live etcd is exercised by {@code ClusterIT} in
 * api-service, which starts real processes).
 */
class EtcdMetadataStoreTest {

  @Test
  void collectionWithPlacementRoundTrips() {
    Placement p =
        new Placement(
            new MetadataStore.CollectionMeta(
                "docs",
                new CollectionConfig(
                    768, Distance.DOT, 3, 2, new IndexParams("hnsw", 32, 80, 1.1f, 96)),
                1732250000000L,
                new CollectionTuning(0, FsyncPolicy.NEVER)
                    .withStrictMode("{\"enabled\":true,\"max_query_limit\":3}")
                    .withMetadata("{\"a\":[1,{\"b\":null}]}")),
            List.of(
                List.of("query-1", "query-2"),
                List.of("query-2", "query-3"),
                List.of("query-3", "query-1")),
            io.flashvec.index.payload.PayloadSchema.EMPTY
                .with(field("city", "\"keyword\""))
                .with(field("body", "{\"type\": \"text\", \"tokenizer\": \"prefix\"}")),
            0);

    Placement back =
        EtcdJson.decodeCollection(EtcdJson.encodeCollection(p).getBytes(StandardCharsets.UTF_8));

    assertThat(back).isEqualTo(p);
  }

  private static io.flashvec.index.payload.PayloadFieldSchema field(String key, String json) {
    return io.flashvec.index.payload.PayloadFieldSchema.parse(
        key, tools.jackson.databind.json.JsonMapper.builder().build().readTree(json));
  }

  @Test
  void defaultTuningRoundTripsWithoutFsyncOverride() {
    Placement p =
        new Placement(
            new MetadataStore.CollectionMeta(
                "a", new CollectionConfig(4, Distance.COSINE, 1, 1, null), 1L),
            List.of(List.of("n1")));

    Placement back =
        EtcdJson.decodeCollection(EtcdJson.encodeCollection(p).getBytes(StandardCharsets.UTF_8));

    assertThat(back.meta().tuning()).isEqualTo(CollectionTuning.DEFAULT);
    assertThat(back).isEqualTo(p);
  }

  @Test
  void nodeRoundTrips() {
    Node n = new Node("query-1", "127.0.0.1:7071", "127.0.0.1:8081", List.of("query", "index"));

    Node back = EtcdJson.decodeNode(EtcdJson.encodeNode(n).getBytes(StandardCharsets.UTF_8));

    assertThat(back).isEqualTo(n);
    assertThat(back.hasRole("query")).isTrue();
    assertThat(back.hasRole("proxy")).isFalse();
  }
}
