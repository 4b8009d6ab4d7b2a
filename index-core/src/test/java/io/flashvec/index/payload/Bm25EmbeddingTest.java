package io.flashvec.index.payload;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.flashvec.index.InvalidInputException;
import io.flashvec.index.SparseVector;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import tools.jackson.databind.json.JsonMapper;

class Bm25EmbeddingTest {

  private static final JsonMapper M = JsonMapper.builder().build();

  private static Map<Long, Float> weights(SparseVector v) {
    Map<Long, Float> out = new HashMap<>();
    for (int i = 0; i < v.indices().length; i++) {
      out.put(Integer.toUnsignedLong(v.indices()[i]), v.values()[i]);
    }
    return out;
  }

  @Test
  void tokenIdsAreMurmur3OfTheUtf8BytesAsQdrantTakesThem() {
    // MurmurHash3 x86 32-bit, seed 0: "hello" 0x248bfa47, "foo" -156908512 as a signed int
    assertThat(Bm25Embedding.tokenId("hello")).isEqualTo(613_153_351L);
    assertThat(Bm25Embedding.tokenId("foo")).isEqualTo(156_908_512L);
    assertThat(Bm25Embedding.tokenId("")).isZero();
  }

  @Test
  void textIsLowerCasedStrippedOfEnglishStopWordsAndStemmed() {
    assertThat(Bm25Embedding.tokens("The Foxes are JUMPING over the dogs."))
        .containsExactly("fox", "jump", "over", "dog");
    assertThat(Bm25Embedding.tokens("the a an and")).isEmpty();
  }

  @Test
  void aDocumentWeighsTermFrequencyByLengthAndAQueryWeighsEachTokenOnce() {
    Bm25Embedding bm = new Bm25Embedding(1.2, 0.75, 3);
    // three tokens (fox, fox, jump), as long as the average: fox 2·2.2 / (1.2 + 2), jump 2.2 / 2.2
    Map<Long, Float> doc = weights(bm.document("fox foxes jumps"));
    assertThat(doc).hasSize(2);
    assertThat(doc.get(Bm25Embedding.tokenId("fox"))).isCloseTo(1.375f, within());
    assertThat(doc.get(Bm25Embedding.tokenId("jump"))).isCloseTo(1.0f, within());
    // a longer text weighs the same count less
    Map<Long, Float> longer = weights(bm.document("fox foxes jumps high over every sleeping dog"));
    assertThat(longer.get(Bm25Embedding.tokenId("fox"))).isLessThan(1.375f);
    Map<Long, Float> query = weights(bm.query("the fox and the foxes"));
    assertThat(query).containsOnlyKeys(Bm25Embedding.tokenId("fox"));
    assertThat(query.get(Bm25Embedding.tokenId("fox"))).isEqualTo(1f);
    assertThat(bm.document("the and").indices()).isEmpty();
  }

  @Test
  void optionsAreKBAndAvgLenOnly() {
    assertThat(Bm25Embedding.parse(null, "options")).isEqualTo(Bm25Embedding.DEFAULT);
    assertThat(Bm25Embedding.parse(M.readTree("{\"k\": 2, \"b\": 0, \"avg_len\": 10}"), "o"))
        .isEqualTo(new Bm25Embedding(2, 0, 10));
    for (String[] bad :
        List.of(
            new String[] {"{\"b\": 1.5}", "options.b must be in [0, 1]"},
            new String[] {"{\"avg_len\": 0}", "options.avg_len"},
            new String[] {"{\"k\": \"x\"}", "options.k must be a number"},
            new String[] {"{\"tokenizer\": \"whitespace\"}", "[options.tokenizer=\"whitespace\"]"},
            new String[] {"{\"language\": \"german\"}", "only k, b and avg_len"})) {
      assertThatThrownBy(() -> Bm25Embedding.parse(M.readTree(bad[0]), "options"))
          .as(bad[0])
          .isInstanceOf(InvalidInputException.class)
          .hasMessageContaining(bad[1]);
    }
    assertThat(Bm25Embedding.isModel("Qdrant/BM25")).isTrue();
    assertThat(Bm25Embedding.isModel("sentence-transformers/all-minilm-l6-v2")).isFalse();
  }

  private static org.assertj.core.data.Offset<Float> within() {
    return org.assertj.core.data.Offset.offset(1e-5f);
  }
}
