package io.flashvec.index;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.LinkedHashMap;
import java.util.Map;
import org.junit.jupiter.api.Test;

/** Vector fields added and deleted after creation: storage keys, generations, the primary. */
class CollectionConfigFieldsTest {

  private static CollectionConfig named() {
    Map<String, DenseVectorParams> others = new LinkedHashMap<>();
    others.put("text", new DenseVectorParams(3, Distance.EUCLID));
    return new CollectionConfig(
        4,
        Distance.DOT,
        1,
        1,
        IndexParams.DEFAULT,
        Map.of("sp", SparseVectorParams.DEFAULT),
        "image",
        others);
  }

  @Test
  void anAddedFieldIsStoredUnderAKeyWithItsGeneration() {
    CollectionConfig c = named().withDenseVector("extra", new DenseVectorParams(2, Distance.DOT));
    assertThat(c.fieldGeneration()).isEqualTo(1);
    String key = c.internalName("extra");
    assertThat(key).isEqualTo("extra" + CollectionConfig.GENERATION + "0");
    assertThat(CollectionConfig.shownName(key)).isEqualTo("extra");
    assertThat(c.denseKey("extra")).isEqualTo(key);
    assertThat(c.dimension(key)).isEqualTo(2);
    assertThat(c.internalName("text")).isEqualTo("text");
    assertThat(c.internalName("image")).isEmpty();
    // a point's value of the new field is prepared under its key
    Point p =
        c.preparePoint(
            new Point(PointId.of(1), null, null, Map.of(), Map.of(key, new float[] {1, 2})));
    assertThat(p.dense()).containsOnlyKeys(key);
  }

  @Test
  void aRecreatedFieldNeverGetsTheKeyOfTheDeletedOne() {
    CollectionConfig c = named();
    CollectionConfig noText = c.withoutDenseVector("text");
    assertThat(noText.denseVectors()).isEmpty();
    assertThatThrownBy(() -> noText.internalName("text"))
        .hasMessage("Wrong input: Not existing vector name error: text");
    CollectionConfig again =
        noText.withDenseVector("text", new DenseVectorParams(5, Distance.COSINE));
    String first = again.internalName("text");
    assertThat(first).isNotEqualTo("text");
    // the old key reaches nothing: the values stored under it stay unreachable
    assertThat(again.denseField("text")).isNull();
    CollectionConfig third =
        again
            .withoutDenseVector("text")
            .withDenseVector("text", new DenseVectorParams(5, Distance.COSINE));
    String second = third.internalName("text");
    assertThat(second).isNotIn("text", first);
    assertThat(third.fieldGeneration()).isGreaterThan(again.fieldGeneration());
    assertThatThrownBy(() -> third.internalName(first))
        .hasMessage("Wrong input: Not existing vector name error: text");
  }

  @Test
  void theDeletedPrimaryIsRetiredAndUnreachable() {
    CollectionConfig c = named().withoutDenseVector("image");
    assertThat(c.primaryRetired()).isTrue();
    assertThat(c.hasPrimary()).isTrue();
    assertThat(c.dimension()).isEqualTo(4);
    assertThat(c.defaultVectorName()).isEmpty();
    assertThat(c.hasVectorNamed("image")).isFalse();
    assertThatThrownBy(() -> c.internalName("image"))
        .hasMessage("Wrong input: Not existing vector name error: image");
    assertThatThrownBy(() -> c.internalName(c.vectorName()))
        .isInstanceOf(InvalidInputException.class);
    assertThatThrownBy(() -> c.internalName("")).hasMessageEndingWith("error: ");
    // a new field of that name is one beside the points
    CollectionConfig again = c.withDenseVector("image", new DenseVectorParams(2, Distance.DOT));
    assertThat(again.internalName("image")).isNotEmpty().isNotEqualTo("image");
    assertThat(again.primaryRetired()).isTrue();
    assertThatThrownBy(() -> c.withoutDenseVector("image"))
        .hasMessage("Wrong input: Not existing vector name error: image");
  }

  @Test
  void refusals() {
    CollectionConfig c = named();
    assertThatThrownBy(() -> c.withDenseVector("text", new DenseVectorParams(3, Distance.DOT)))
        .hasMessage("Wrong input: Vector `text` already exists with a different configuration");
    assertThatThrownBy(() -> c.withDenseVector("image", new DenseVectorParams(3, Distance.DOT)))
        .hasMessageContaining("already exists");
    assertThatThrownBy(() -> c.withDenseVector("sp", new DenseVectorParams(3, Distance.DOT)))
        .hasMessage("Wrong input: Vector `sp` already exists as a sparse vector");
    assertThatThrownBy(
            () ->
                c.withDenseVector(
                    "a" + CollectionConfig.GENERATION + "0",
                    new DenseVectorParams(3, Distance.DOT)))
        .hasMessageContaining("control character");
    assertThatThrownBy(() -> c.withoutDenseVector("sp"))
        .hasMessageContaining("sparse vector `sp` cannot be deleted");
    assertThatThrownBy(() -> c.withoutDenseVector("nope"))
        .hasMessage("Wrong input: Not existing vector name error: nope");
    // an unnamed primary vector has no siblings
    CollectionConfig unnamed = new CollectionConfig(4, Distance.DOT, 1, 1, IndexParams.DEFAULT);
    assertThatThrownBy(() -> unnamed.withDenseVector("x", new DenseVectorParams(3, Distance.DOT)))
        .hasMessageContaining("unnamed");
    // the last vector is not deleted
    CollectionConfig one =
        new CollectionConfig(4, Distance.DOT, 1, 1, IndexParams.DEFAULT, Map.of(), "only");
    assertThatThrownBy(() -> one.withoutDenseVector("only")).hasMessageContaining("only vector");
  }

  @Test
  void aCollectionWithoutPrimaryTakesDenseFields() {
    CollectionConfig sparseOnly =
        CollectionConfig.withoutPrimary(
            1, 1, IndexParams.DEFAULT, Map.of("sp", SparseVectorParams.DEFAULT), Map.of());
    CollectionConfig c =
        sparseOnly.withDenseVector("d", new DenseVectorParams(2, Distance.COSINE, false, true));
    assertThat(c.hasPrimary()).isFalse();
    assertThat(c.multivectors()).containsOnlyKeys(c.internalName("d"));
    assertThat(c.missingDefault().getMessage()).endsWith("available names: d, sp");
    CollectionConfig back = c.withoutDenseVector("d");
    assertThat(back.denseVectors()).isEmpty();
    assertThat(back.fieldGeneration()).isEqualTo(2);
  }
}
