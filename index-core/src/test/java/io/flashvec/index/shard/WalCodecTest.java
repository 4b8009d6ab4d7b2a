package io.flashvec.index.shard;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.flashvec.index.Point;
import io.flashvec.index.PointId;
import io.flashvec.index.SparseVector;
import io.flashvec.testing.TestSeeds;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.UUID;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

@ExtendWith(TestSeeds.Reporter.class)
class WalCodecTest {

  private static PointId randomId(Random r) {
    return switch (r.nextInt(3)) {
      case 0 -> PointId.of(r.nextInt(1000));
      case 1 -> PointId.of(r.nextLong()); // includes ids >= 2^63
      default -> PointId.of(new UUID(r.nextLong(), r.nextLong()));
    };
  }

  private static float[] randomVector(Random r, int dim) {
    float[] v = new float[dim];
    for (int i = 0; i < dim; i++) {
      v[i] =
          switch (r.nextInt(10)) {
            case 0 -> -0.0f;
            case 1 -> Float.MIN_VALUE;
            case 2 -> Float.MAX_VALUE;
            default -> (float) r.nextGaussian();
          };
    }
    return v;
  }

  private static byte[] randomPayload(Random r) {
    return switch (r.nextInt(3)) {
      case 0 -> null;
      case 1 -> new byte[0];
      default -> ("{\"k\":" + r.nextInt() + ",\"s\":\"é\"}").getBytes(StandardCharsets.UTF_8);
    };
  }

  /** What the WAL hands back on replay: a read-only little-endian view, maybe mid-buffer. */
  private static ByteBuffer asReplayed(byte[] body, int junkBefore) {
    ByteBuffer b = ByteBuffer.allocate(junkBefore + body.length + 7);
    b.position(junkBefore);
    b.put(body);
    b.flip();
    b.position(junkBefore);
    return b.slice().asReadOnlyBuffer().order(ByteOrder.LITTLE_ENDIAN);
  }

  @Test
  void upsertRoundTripsIdsVectorsAndPayloads() {
    Random r = TestSeeds.random("WalCodecTest.upsert");
    int rounds = TestSeeds.atLeast(r, 100);
    for (int round = 0; round < rounds; round++) {
      int dim = 1 + r.nextInt(40);
      int n = r.nextInt(30);
      List<Point> points = new ArrayList<>(n);
      for (int i = 0; i < n; i++) {
        points.add(new Point(randomId(r), randomVector(r, dim), randomPayload(r)));
      }
      ByteBuffer body = asReplayed(WalCodec.encodeUpsert(points), r.nextInt(9));
      List<Point> decoded = WalCodec.decodeUpsert(body);
      assertThat(body.remaining()).as("the whole body is consumed").isZero();
      assertThat(decoded).hasSize(n);
      for (int i = 0; i < n; i++) {
        Point want = points.get(i);
        Point got = decoded.get(i);
        String what = "round=" + round + ", i=" + i + ", " + TestSeeds.reproduceWith();
        assertThat(got.id()).as(what).isEqualTo(want.id());
        assertThat(got.id().isUuid()).as(what).isEqualTo(want.id().isUuid());
        // Bitwise: -0.0 stays -0.0.
        assertThat(floatBits(got.vector())).as(what).isEqualTo(floatBits(want.vector()));
        if (want.payload() == null) {
          assertThat(got.payload()).as(what).isNull();
        } else {
          assertThat(got.payload()).as(what).isEqualTo(want.payload());
        }
      }
    }
  }

  private static int[] floatBits(float[] v) {
    int[] out = new int[v.length];
    for (int i = 0; i < v.length; i++) {
      out[i] = Float.floatToRawIntBits(v[i]);
    }
    return out;
  }

  @Test
  void upsertWithVectorsRoundTripsOptionalDenseAndSparseVectors() {
    Random r = TestSeeds.random("WalCodecTest.upsertVectors");
    int rounds = TestSeeds.atLeast(r, 100);
    for (int round = 0; round < rounds; round++) {
      int dim = 1 + r.nextInt(20);
      int n = r.nextInt(20);
      List<Point> points = new ArrayList<>(n);
      for (int i = 0; i < n; i++) {
        Map<String, SparseVector> sparse = new HashMap<>();
        for (String name : List.of("sparse-text", "é", "x")) {
          if (r.nextBoolean()) {
            int nnz = r.nextInt(6);
            int[] idx = new int[nnz];
            float[] val = new float[nnz];
            for (int j = 0; j < nnz; j++) {
              idx[j] = j == 0 ? -1 : r.nextInt(); // -1: the u32 4294967295
              val[j] = randomVector(r, 1)[0];
            }
            sparse.put(name, new SparseVector(idx, val));
          }
        }
        float[] dense = r.nextInt(3) == 0 ? null : randomVector(r, dim);
        points.add(new Point(randomId(r), dense, randomPayload(r), sparse));
      }
      byte op = WalCodec.upsertOp(points);
      boolean extra = points.stream().anyMatch(Point::hasExtraVectors);
      assertThat(op).isEqualTo(extra ? WalCodec.OP_UPSERT_VECTORS : WalCodec.OP_UPSERT);
      ByteBuffer body = asReplayed(WalCodec.encodeUpsertVectors(points), r.nextInt(9));
      List<Point> decoded = WalCodec.decodeUpsertVectors(body);
      assertThat(body.remaining()).as("the whole body is consumed").isZero();
      assertThat(decoded).hasSize(n);
      for (int i = 0; i < n; i++) {
        Point want = points.get(i);
        Point got = decoded.get(i);
        String what = "round=" + round + ", i=" + i + ", " + TestSeeds.reproduceWith();
        assertThat(got.id()).as(what).isEqualTo(want.id());
        if (want.vector() == null) {
          assertThat(got.vector()).as(what).isNull();
        } else {
          assertThat(floatBits(got.vector())).as(what).isEqualTo(floatBits(want.vector()));
        }
        assertThat(got.sparse()).as(what).isEqualTo(want.sparse());
        assertThat(got.payload()).as(what).isEqualTo(want.payload());
      }
    }
  }

  @Test
  void namedUpsertRoundTripsOtherDenseVectorsAndOnlyTheirBatchesUseIt() {
    Random r = TestSeeds.random("WalCodecTest.upsertNamed");
    int rounds = TestSeeds.atLeast(r, 100);
    for (int round = 0; round < rounds; round++) {
      int n = 1 + r.nextInt(20);
      List<Point> points = new ArrayList<>(n);
      for (int i = 0; i < n; i++) {
        Map<String, float[]> dense = new HashMap<>();
        for (String name : List.of("image", "é", "t")) {
          if (r.nextBoolean()) {
            dense.put(name, randomVector(r, 1 + r.nextInt(12)));
          }
        }
        Map<String, SparseVector> sparse =
            r.nextBoolean()
                ? Map.of("s", new SparseVector(new int[] {-1, 3}, new float[] {1f, -2f}))
                : Map.of();
        float[] primary = r.nextInt(3) == 0 ? null : randomVector(r, 4);
        points.add(new Point(randomId(r), primary, randomPayload(r), sparse, dense));
      }
      boolean named = points.stream().anyMatch(p -> !p.dense().isEmpty());
      boolean extra = points.stream().anyMatch(Point::hasExtraVectors);
      byte op = WalCodec.upsertOp(points);
      assertThat(op)
          .isEqualTo(
              named
                  ? WalCodec.OP_UPSERT_NAMED
                  : extra ? WalCodec.OP_UPSERT_VECTORS : WalCodec.OP_UPSERT);
      if (!named) {
        continue;
      }
      ByteBuffer body = asReplayed(WalCodec.encodeUpsertAny(points), r.nextInt(9));
      List<Point> decoded = WalCodec.decodeUpsertVectors(body, true);
      assertThat(body.remaining()).as("the whole body is consumed").isZero();
      assertThat(decoded).hasSize(n);
      for (int i = 0; i < n; i++) {
        Point want = points.get(i);
        Point got = decoded.get(i);
        String what = "round=" + round + ", i=" + i + ", " + TestSeeds.reproduceWith();
        assertThat(got.id()).as(what).isEqualTo(want.id());
        assertThat(got.vector() == null ? null : floatBits(got.vector()))
            .as(what)
            .isEqualTo(want.vector() == null ? null : floatBits(want.vector()));
        assertThat(got.sparse()).as(what).isEqualTo(want.sparse());
        assertThat(got.dense().keySet()).as(what).isEqualTo(want.dense().keySet());
        for (String name : want.dense().keySet()) {
          assertThat(floatBits(got.dense().get(name)))
              .as(what + ", " + name)
              .isEqualTo(floatBits(want.dense().get(name)));
        }
        assertThat(got.payload()).as(what).isEqualTo(want.payload());
      }
    }
    assertThat(WalCodec.OP_UPSERT_NAMED).isEqualTo((byte) 4);
  }

  @Test
  void multiUpsertRoundTripsMultivectorsAndOnlyTheirBatchesUseIt() {
    Random r = TestSeeds.random("WalCodecTest.upsertMulti");
    Map<String, Integer> multivectors = Map.of("colbert", 3, "é", 1);
    int rounds = TestSeeds.atLeast(r, 100);
    for (int round = 0; round < rounds; round++) {
      int n = 1 + r.nextInt(20);
      List<Point> points = new ArrayList<>(n);
      for (int i = 0; i < n; i++) {
        Map<String, float[]> dense = new HashMap<>();
        if (r.nextBoolean()) {
          dense.put("image", randomVector(r, 5));
        }
        for (Map.Entry<String, Integer> m : multivectors.entrySet()) {
          if (r.nextInt(3) == 0) {
            dense.put(m.getKey(), randomVector(r, m.getValue() * (1 + r.nextInt(6))));
          }
        }
        float[] primary = r.nextInt(3) == 0 ? null : randomVector(r, 4);
        points.add(new Point(randomId(r), primary, randomPayload(r), Map.of(), dense));
      }
      boolean multi =
          points.stream()
              .anyMatch(p -> p.dense().keySet().stream().anyMatch(multivectors::containsKey));
      byte op = WalCodec.upsertOp(points, multivectors);
      String what0 = "round=" + round + ", " + TestSeeds.reproduceWith();
      if (!multi) {
        // batches without a multivector keep their operation and bytes
        assertThat(op).as(what0).isEqualTo(WalCodec.upsertOp(points));
        assertThat(WalCodec.encodeUpsertAny(points, multivectors))
            .as(what0)
            .isEqualTo(WalCodec.encodeUpsertAny(points));
        continue;
      }
      assertThat(op).as(what0).isEqualTo(WalCodec.OP_UPSERT_MULTI);
      ByteBuffer body = asReplayed(WalCodec.encodeUpsertAny(points, multivectors), r.nextInt(9));
      List<Point> decoded = WalCodec.decodeUpsertMulti(body);
      assertThat(body.remaining()).as("the whole body is consumed").isZero();
      assertThat(decoded).hasSize(n);
      for (int i = 0; i < n; i++) {
        Point want = points.get(i);
        Point got = decoded.get(i);
        String what = what0 + ", i=" + i;
        assertThat(got.id()).as(what).isEqualTo(want.id());
        assertThat(got.vector() == null ? null : floatBits(got.vector()))
            .as(what)
            .isEqualTo(want.vector() == null ? null : floatBits(want.vector()));
        assertThat(got.dense().keySet()).as(what).isEqualTo(want.dense().keySet());
        for (String name : want.dense().keySet()) {
          assertThat(floatBits(got.dense().get(name)))
              .as(what + ", " + name)
              .isEqualTo(floatBits(want.dense().get(name)));
        }
        assertThat(got.payload()).as(what).isEqualTo(want.payload());
      }
    }
    assertThat(WalCodec.OP_UPSERT_MULTI).isEqualTo((byte) 5);
  }

  @Test
  void multivectorEntriesAreTaggedAsDocumented() {
    // The on-disk format: changing it breaks existing WALs.
    Point p =
        new Point(
            PointId.of(7),
            null,
            null,
            Map.of(),
            Map.of("m", new float[] {1f, 2f, 3f, 4f}, "v", new float[] {5f}));
    byte[] body = WalCodec.encodeUpsertAny(List.of(p), Map.of("m", 2));
    ByteBuffer b = ByteBuffer.wrap(body).order(ByteOrder.LITTLE_ENDIAN);
    assertThat(b.getInt()).isEqualTo(1);
    assertThat(b.get()).isEqualTo((byte) 0);
    assertThat(b.getLong()).isEqualTo(7L);
    assertThat(b.get()).as("no primary vector").isEqualTo((byte) 0);
    assertThat(b.getShort()).as("no sparse vector").isEqualTo((short) 0);
    assertThat(b.getShort()).as("dense vectors").isEqualTo((short) 2);
    assertThat(b.getShort()).isEqualTo((short) 1);
    assertThat(b.get()).isEqualTo((byte) 'm');
    assertThat(b.get()).as("kind: multivector").isEqualTo((byte) 1);
    assertThat(b.getInt()).as("dim").isEqualTo(2);
    assertThat(b.getInt()).as("count").isEqualTo(2);
    for (float x : new float[] {1f, 2f, 3f, 4f}) {
      assertThat(b.getFloat()).isEqualTo(x);
    }
    assertThat(b.getShort()).isEqualTo((short) 1);
    assertThat(b.get()).isEqualTo((byte) 'v');
    assertThat(b.get()).as("kind: one vector").isEqualTo((byte) 0);
    assertThat(b.getInt()).isEqualTo(1);
    assertThat(b.getFloat()).isEqualTo(5f);
    assertThat(b.getInt()).as("no payload").isEqualTo(-1);
    assertThat(b.hasRemaining()).isFalse();
    // a value that is not a whole number of vectors is never logged
    Point bad = new Point(PointId.of(8), null, null, Map.of(), Map.of("m", new float[] {1f}));
    assertThatThrownBy(() -> WalCodec.encodeUpsertAny(List.of(bad), Map.of("m", 2)))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("field=m");
  }

  @Test
  void denseOnlyBatchesKeepOperationOne() {
    List<Point> points =
        List.of(
            new Point(PointId.of(1), new float[] {1f, 2f}, null),
            new Point(PointId.of(2), new float[] {3f, 4f}, new byte[] {'{', '}'}));
    assertThat(WalCodec.upsertOp(points)).isEqualTo(WalCodec.OP_UPSERT);
    assertThat(WalCodec.encodeUpsertAny(points)).isEqualTo(WalCodec.encodeUpsert(points));
    List<Point> back =
        WalCodec.decodeUpsert(
            ByteBuffer.wrap(WalCodec.encodeUpsert(points)).order(ByteOrder.LITTLE_ENDIAN));
    assertThat(back.get(0).sparse()).isEmpty();
    assertThat(back.get(0).hasExtraVectors()).isFalse();
  }

  @Test
  void deleteRoundTripsIds() {
    Random r = TestSeeds.random("WalCodecTest.delete");
    int rounds = TestSeeds.atLeast(r, 100);
    for (int round = 0; round < rounds; round++) {
      List<PointId> ids = new ArrayList<>();
      int n = r.nextInt(50);
      for (int i = 0; i < n; i++) {
        ids.add(randomId(r));
      }
      ByteBuffer body = asReplayed(WalCodec.encodeDelete(ids), r.nextInt(9));
      assertThat(WalCodec.decodeDelete(body)).containsExactlyElementsOf(ids);
      assertThat(body.remaining()).isZero();
    }
  }

  @Test
  void layoutIsLittleEndianAsDocumented() {
    // The on-disk format: changing it breaks existing WALs.
    byte[] body =
        WalCodec.encodeUpsert(
            List.of(
                new Point(PointId.of(0x0102030405060708L), new float[] {1.0f}, null),
                new Point(
                    PointId.of(new UUID(0x1111111111111111L, 0x2222222222222222L)),
                    new float[] {},
                    new byte[] {'x'})));
    ByteBuffer b = ByteBuffer.wrap(body).order(ByteOrder.LITTLE_ENDIAN);
    assertThat(b.getInt()).isEqualTo(2);
    assertThat(b.get()).isEqualTo((byte) 0);
    assertThat(b.getLong()).isEqualTo(0x0102030405060708L);
    assertThat(b.getInt()).isEqualTo(1);
    assertThat(b.getInt()).isEqualTo(Float.floatToIntBits(1.0f));
    assertThat(b.getInt()).isEqualTo(-1);
    assertThat(b.get()).isEqualTo((byte) 1);
    assertThat(b.getLong()).as("lo first").isEqualTo(0x2222222222222222L);
    assertThat(b.getLong()).as("then hi").isEqualTo(0x1111111111111111L);
    assertThat(b.getInt()).isZero();
    assertThat(b.getInt()).isEqualTo(1);
    assertThat(b.get()).isEqualTo((byte) 'x');
    assertThat(b.hasRemaining()).isFalse();
    assertThat(body[0]).as("little-endian count").isEqualTo((byte) 2);

    byte[] del = WalCodec.encodeDelete(List.of(PointId.of(3)));
    assertThat(del).containsExactly(1, 0, 0, 0, 0, 3, 0, 0, 0, 0, 0, 0, 0);
    assertThat(WalCodec.OP_UPSERT).isEqualTo((byte) 1);
    assertThat(WalCodec.OP_DELETE).isEqualTo((byte) 2);
    assertThat(WalCodec.OP_UPSERT_VECTORS).isEqualTo((byte) 3);
  }

  @Test
  void unknownIdKindIsRejected() {
    byte[] body = WalCodec.encodeDelete(List.of(PointId.of(3)));
    body[4] = 9;
    assertThatThrownBy(
            () -> WalCodec.decodeDelete(ByteBuffer.wrap(body).order(ByteOrder.LITTLE_ENDIAN)))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessage("unknown point id kind in WAL record [kind=9]");
  }
}
