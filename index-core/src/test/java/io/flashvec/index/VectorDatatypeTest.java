package io.flashvec.index;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.Map;
import org.junit.jupiter.api.Test;

/** {@link VectorDatatype}: Qdrant's conversions, and fields converting what they are given. */
class VectorDatatypeTest {

  @Test
  void uint8TruncatesTowardZeroAndClamps() {
    assertThat(
            VectorDatatype.UINT8.convert(new float[] {256.19f, 1.81f, 2.75f, -3.11f, 0.99f, 255f}))
        .containsExactly(255f, 1f, 2f, 0f, 0f, 255f);
  }

  @Test
  void float16RoundsToHalfPrecisionAndRefusesWhatItCannotHold() {
    float[] v = VectorDatatype.FLOAT16.convert(new float[] {2049f, 0.1f, -65504f});
    assertThat(v[0]).isEqualTo(2048f); // ties to even
    assertThat(v[1]).isEqualTo(0.0999755859375f);
    assertThat(v[2]).isEqualTo(-65504f);
    assertThatThrownBy(() -> VectorDatatype.FLOAT16.convert(new float[] {65520f}))
        .isInstanceOf(InvalidInputException.class)
        .hasMessageContaining("float16 range");
  }

  @Test
  void float32KeepsTheValuesAndNamesParse() {
    float[] v = {1.5f};
    assertThat(VectorDatatype.FLOAT32.convert(v)).isSameAs(v);
    assertThat(VectorDatatype.parse("uint8")).isEqualTo(VectorDatatype.UINT8);
    assertThat(VectorDatatype.parse("Float16")).isEqualTo(VectorDatatype.FLOAT16);
    assertThat(VectorDatatype.parse("turbo4")).isEqualTo(VectorDatatype.TURBO4);
  }

  @Test
  void aFieldConvertsPointsAndQueriesAfterPreparingThem() {
    CollectionConfig c =
        new CollectionConfig(
            2,
            Distance.DOT,
            1,
            1,
            IndexParams.DEFAULT,
            Map.of(),
            "p",
            Map.of(
                "b",
                new DenseVectorParams(
                    2, Distance.DOT, false, true, FieldIndex.NONE, VectorDatatype.UINT8),
                "h",
                new DenseVectorParams(
                    2, Distance.COSINE, false, false, FieldIndex.DEFAULT, VectorDatatype.FLOAT16)));
    Point p =
        c.preparePoint(
            new Point(
                PointId.of(1),
                new float[] {1.5f, 2.5f},
                null,
                Map.of(),
                Map.of("b", new float[] {1.5f, 300f, 7.2f, -1f}, "h", new float[] {3f, 4f})));
    assertThat(p.vector()).containsExactly(1.5f, 2.5f); // the primary vector is float32
    assertThat(p.dense().get("b")).containsExactly(1f, 255f, 7f, 0f);
    // normalised, then rounded: 0.6 and 0.8 are not half-precision values
    assertThat(p.dense().get("h"))
        .containsExactly(
            Float.float16ToFloat(Float.floatToFloat16(0.6f)),
            Float.float16ToFloat(Float.floatToFloat16(0.8f)));
    assertThat(c.prepareVector(null, new float[] {9.9f, 0.1f}, "b")).containsExactly(9f, 0f);
  }

  @Test
  void uint8IsRefusedWithCosine() {
    assertThatThrownBy(
            () ->
                new DenseVectorParams(
                    2, Distance.COSINE, false, false, FieldIndex.DEFAULT, VectorDatatype.UINT8))
        .isInstanceOf(InvalidInputException.class)
        .hasMessageContaining("uint8");
  }
}
