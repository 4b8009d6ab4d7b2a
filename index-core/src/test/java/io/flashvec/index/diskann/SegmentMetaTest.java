package io.flashvec.index.diskann;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.flashvec.index.Distance;
import io.flashvec.index.PointId;
import io.flashvec.storage.ChecksummedFile;
import io.flashvec.storage.CorruptFileException;
import io.flashvec.storage.FileIO;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Random;
import java.util.UUID;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class SegmentMetaTest {

  private static final long SEED = 20261128L;

  @TempDir Path tmp;

  /** Ids (every fifth a UUID when {@code uuids}) and payloads (null, empty or a few bytes). */
  private record Points(PointId[] ids, byte[][] payloads) {
    static Points random(int n, boolean uuids, boolean payloads, Random rnd) {
      PointId[] ids = new PointId[n];
      byte[][] p = new byte[n][];
      for (int i = 0; i < n; i++) {
        ids[i] =
            uuids && i % 5 == 0
                ? PointId.of(new UUID(rnd.nextLong(), rnd.nextLong()))
                : PointId.of(rnd.nextLong() & Long.MAX_VALUE);
        if (i % 7 == 6) {
          ids[i] = ids[rnd.nextInt(i)];
        }
        if (payloads && i % 3 != 0) {
          p[i] = ("{\"i\":" + i + "}").repeat(i % 4).getBytes(StandardCharsets.UTF_8);
        }
      }
      return new Points(ids, p);
    }

    long payloadBytes() {
      long b = 0;
      for (byte[] p : payloads) {
        b += p == null ? 0 : p.length;
      }
      return b;
    }
  }

  private Path write(Points pts, int dim, boolean vectors) throws Exception {
    Path p = tmp.resolve("meta-" + System.nanoTime() + ".fvs");
    SegmentMeta.write(
        FileIO.DEFAULT,
        p,
        9,
        pts.ids().length,
        dim,
        Distance.COSINE,
        new long[] {0x1234, 77},
        new long[] {0x5678, 88},
        pts.ids(),
        pts.payloads(),
        vectors);
    return p;
  }

  private static void assertSame(SegmentMeta m, Points pts) {
    assertThat(m.shape().count()).isEqualTo(pts.ids().length);
    for (int i = 0; i < pts.ids().length; i++) {
      assertThat(m.idAt(i)).as("id %d", i).isEqualTo(pts.ids()[i]);
      java.util.List<Integer> ords = new java.util.ArrayList<>();
      m.ordinalsOf(pts.ids()[i], ords::add);
      java.util.List<Integer> expected = new java.util.ArrayList<>();
      for (int j = 0; j < pts.ids().length; j++) {
        if (pts.ids()[j].equals(pts.ids()[i])) {
          expected.add(j);
        }
      }
      assertThat(ords).as("ordinals of id %d", i).containsExactlyInAnyOrderElementsOf(expected);
      assertThat(m.payloadAt(i)).as("payload %d", i).isEqualTo(pts.payloads()[i]);
    }
    assertThat(m.payloadBytes()).isEqualTo(pts.payloadBytes());
    // ids the segment lacks: neighbours of its own, both kinds, the unsigned extremes
    java.util.Set<PointId> have = new java.util.HashSet<>(java.util.Arrays.asList(pts.ids()));
    Random rnd = new Random(SEED + 9);
    for (int i = 0; i < 20_000; i++) {
      PointId probe =
          switch (i % 4) {
            case 0 -> PointId.of(pts.ids()[rnd.nextInt(pts.ids().length)].loBits() + 1);
            case 1 -> PointId.of(new UUID(rnd.nextLong(), rnd.nextLong()));
            case 2 -> PointId.of(rnd.nextInt(1000) - 500L);
            default -> PointId.of(rnd.nextLong());
          };
      if (!have.contains(probe)) {
        m.ordinalsOf(
            probe,
            o -> {
              throw new AssertionError("absent " + probe + " found at " + o);
            });
      }
    }
  }

  @Test
  void columnsRoundTripWithoutHoldingIdsOrOffsetsOnTheHeap() throws Exception {
    System.out.println("seed=" + SEED);
    Random rnd = new Random(SEED);
    for (boolean uuids : new boolean[] {false, true}) {
      for (boolean payloads : new boolean[] {false, true}) {
        Points pts = Points.random(5_000, uuids, payloads, rnd);
        Path p = write(pts, 96, payloads);
        try (SegmentMeta m = SegmentMeta.open(FileIO.DEFAULT, p, 9, false)) {
          assertThat(m.version()).isEqualTo(SegmentMeta.VERSION_COLUMNS);
          assertSame(m, pts);
          assertThat(m.shape().dim()).isEqualTo(96);
          assertThat(m.shape().graphLength()).isEqualTo(77);
          assertThat(m.shape().graphCrc()).isEqualTo(0x1234);
          assertThat(m.shape().pqLength()).isEqualTo(88);
          assertThat(m.shape().vectorsFile()).isEqualTo(payloads);
          assertThat(m.shape().noGraph()).isFalse();
          assertThat(m.payloadsOnHeap()).isFalse();
          // a Bloom filter (at most 16 bits a point) and the UUID bits (one a point) are all
          // that stays on the heap
          assertThat(m.heapBytes()).isLessThanOrEqualTo(2 * 5_000 + (uuids ? 5_000 / 8 + 64 : 0));
          assertThat(m.payloadFileBytes()).isEqualTo(payloads ? Files.size(p) : 0);
        }
        try (SegmentMeta m = SegmentMeta.open(FileIO.DEFAULT, p, 9, true)) {
          assertSame(m, pts);
          assertThat(m.payloadsOnHeap()).isEqualTo(payloads);
          if (payloads) {
            assertThat(m.heapBytes()).isGreaterThan(pts.payloadBytes());
          }
        }
      }
    }
  }

  @Test
  void writesTheFirstNPointsOnly() throws Exception {
    Points pts = Points.random(10, true, true, new Random(SEED));
    Path p = tmp.resolve("meta.fvs");
    SegmentMeta.write(
        FileIO.DEFAULT,
        p,
        9,
        6,
        0,
        Distance.DOT,
        new long[2],
        new long[2],
        pts.ids(),
        pts.payloads(),
        false);
    try (SegmentMeta m = SegmentMeta.open(FileIO.DEFAULT, p, 9, false)) {
      assertThat(m.shape().count()).isEqualTo(6);
      assertThat(m.shape().noGraph()).isTrue();
      assertThat(m.idAt(5)).isEqualTo(pts.ids()[5]);
      assertThatThrownBy(() -> m.idAt(6)).isInstanceOf(IndexOutOfBoundsException.class);
    }
  }

  @Test
  void readsTheRecordVersionsOlderServersWrote() throws Exception {
    Random rnd = new Random(SEED + 1);
    Points pts = Points.random(2_000, true, true, rnd);
    Path p = tmp.resolve("meta.fvs");
    ChecksummedFile.write(
        FileIO.DEFAULT,
        p,
        SegmentMeta.FORMAT,
        SegmentMeta.VERSION_RECORDS_VECTORS,
        9,
        records(32, Distance.EUCLID, pts, true));
    try (SegmentMeta m = SegmentMeta.open(FileIO.DEFAULT, p, 9, false)) {
      assertThat(m.version()).isEqualTo(SegmentMeta.VERSION_RECORDS_VECTORS);
      assertSame(m, pts);
      assertThat(m.shape().distance()).isEqualTo(Distance.EUCLID);
      assertThat(m.shape().vectorsFile()).isTrue();
      // older files are copied: ids, UUID high bits and payload offsets, 8 bytes each
      assertThat(m.heapBytes()).isGreaterThanOrEqualTo(3L * 8 * 2_000);
    }
    try (SegmentMeta m = SegmentMeta.open(FileIO.DEFAULT, p, 9, true)) {
      assertSame(m, pts);
      assertThat(m.payloadsOnHeap()).isTrue();
    }
  }

  @Test
  void refusesADamagedFileOrAnotherSegments() throws Exception {
    Points pts = Points.random(1_000, false, true, new Random(SEED + 2));
    Path p = write(pts, 8, false);
    assertThatThrownBy(() -> SegmentMeta.open(FileIO.DEFAULT, p, 10, false))
        .isInstanceOf(CorruptFileException.class)
        .hasMessageContaining("segment id mismatch [expected=10, got=9]");
    byte[] bytes = Files.readAllBytes(p);
    bytes[bytes.length / 2] ^= 0x40;
    Files.write(p, bytes);
    assertThatThrownBy(() -> SegmentMeta.open(FileIO.DEFAULT, p, 9, false))
        .isInstanceOf(CorruptFileException.class)
        .hasMessageContaining("checksum mismatch");
    assertThatThrownBy(() -> SegmentMeta.open(FileIO.DEFAULT, tmp.resolve("none.fvs"), 9, false))
        .isInstanceOf(CorruptFileException.class)
        .hasMessageContaining("segment metadata is missing");
  }

  /** A version 3 body: one record per id, then a length-prefixed payload per point, then 1. */
  private static byte[] records(int dim, Distance distance, Points pts, boolean vectorsByte) {
    int n = pts.ids().length;
    int size = 33 + (vectorsByte ? 1 : 0);
    for (int i = 0; i < n; i++) {
      byte[] pl = pts.payloads()[i];
      size += (pts.ids()[i].isUuid() ? 17 : 9) + 4 + (pl == null ? 0 : pl.length);
    }
    ByteBuffer b = ByteBuffer.allocate(size).order(ByteOrder.LITTLE_ENDIAN);
    b.putInt(n).putInt(dim).put((byte) distance.ordinal());
    b.putLong(0).putInt(0).putLong(0).putInt(0);
    for (PointId id : pts.ids()) {
      if (id.isUuid()) {
        b.put((byte) 1).putLong(id.loBits()).putLong(id.hiBits());
      } else {
        b.put((byte) 0).putLong(id.loBits());
      }
    }
    for (byte[] pl : pts.payloads()) {
      if (pl == null) {
        b.putInt(-1);
      } else {
        b.putInt(pl.length).put(pl);
      }
    }
    if (vectorsByte) {
      b.put((byte) 1);
    }
    return b.array();
  }
}
