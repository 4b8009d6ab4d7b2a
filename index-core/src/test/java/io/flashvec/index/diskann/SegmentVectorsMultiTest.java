package io.flashvec.index.diskann;

import static org.assertj.core.api.Assertions.assertThat;

import io.flashvec.index.Distance;
import io.flashvec.index.PointId;
import io.flashvec.index.TestVectors;
import io.flashvec.index.segment.GrowingSegment;
import io.flashvec.storage.FileIO;
import io.flashvec.testing.TestSeeds;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.HashMap;
import java.util.Map;
import java.util.Random;
import java.util.Set;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.api.io.TempDir;

/**
 * Multivector fields in the vectors file: values of differing lengths are written as field kind
 * {@code multi}, values of one length as kind {@code dense}; either reads back as the same floats,
 * on the heap or mapped, and scores by MaxSim in place as {@link Distance#maxSim} does over arrays.
 */
@ExtendWith(TestSeeds.Reporter.class)
class SegmentVectorsMultiTest {

  static final int DIM = 4;
  static final int MULTI_DIM = 3;
  static final Distance D = Distance.DOT;

  @TempDir Path tmp;

  @Test
  void multivectorsRoundTripAndScoreInPlaceOnTheHeapAndMapped() throws Exception {
    Random r = TestSeeds.random("SegmentVectorsMultiTest");
    int n = 50 + r.nextInt(50);
    GrowingSegment g = new GrowingSegment(1, DIM, null, D, 100);
    Map<Integer, Map<String, float[]>> want = new HashMap<>();
    for (int i = 0; i < n; i++) {
      Map<String, float[]> other = new HashMap<>();
      if (r.nextInt(4) != 0) {
        other.put("varied", TestVectors.gaussian(r, MULTI_DIM * (1 + r.nextInt(6))));
      }
      if (r.nextInt(4) != 0) {
        other.put("uniform", TestVectors.gaussian(r, MULTI_DIM * 2));
      }
      want.put(i, other);
      g.append(PointId.of(i), TestVectors.gaussian(r, DIM), null, Map.of(), other);
    }
    SegmentVectors.Collector c = new SegmentVectors.Collector(n);
    for (int i = 0; i < n; i++) {
      c.add(i, g, i);
    }
    Path dir = Files.createDirectories(tmp.resolve("seg"));
    c.write(FileIO.DEFAULT, dir, 1);
    assertThat(fieldKinds(dir.resolve(SegmentVectors.FILE), n))
        .isEqualTo(Map.of("uniform", (byte) 1, "varied", (byte) 2));
    for (Set<String> onDisk : java.util.List.of(Set.<String>of(), Set.of("varied", "uniform"))) {
      SegmentVectors v = SegmentVectors.read(FileIO.DEFAULT, dir, 1, n, onDisk);
      try {
        float[] q = TestVectors.gaussian(r, MULTI_DIM * (1 + r.nextInt(4)));
        for (int i = 0; i < n; i++) {
          String what = "ordinal " + i + ", on disk " + onDisk + ", " + TestSeeds.reproduceWith();
          assertThat(v.denseAt(i).keySet()).as(what).isEqualTo(want.get(i).keySet());
          for (String name : java.util.List.of("varied", "uniform")) {
            float[] stored = want.get(i).get(name);
            assertThat(v.denseAt(i, name)).as(what).isEqualTo(stored);
            float score = v.multiScore(name, i, q, MULTI_DIM, D);
            if (stored == null) {
              assertThat(score).as(what).isNaN();
            } else {
              assertThat(score).as(what).isEqualTo(D.maxSim(q, MULTI_DIM, stored));
            }
          }
        }
      } finally {
        v.close();
      }
    }
  }

  /** Each dense field's kind byte, walking the documented layout of a file with no sparse field. */
  private static Map<String, Byte> fieldKinds(Path file, int n) throws Exception {
    byte[] all = Files.readAllBytes(file);
    var contents =
        io.flashvec.storage.ChecksummedFile.read(FileIO.DEFAULT, file, SegmentVectors.FORMAT, 3, 3);
    ByteBuffer b = contents.body().slice().order(ByteOrder.LITTLE_ENDIAN);
    assertThat(all.length).isGreaterThan(b.remaining());
    assertThat(b.getInt()).isEqualTo(n);
    b.position(b.position() + 8 * ((n + 63) / 64));
    int fields = Short.toUnsignedInt(b.getShort());
    Map<String, Byte> kinds = new HashMap<>();
    for (int f = 0; f < fields; f++) {
      byte[] name = new byte[Short.toUnsignedInt(b.getShort())];
      b.get(name);
      byte kind = b.get();
      kinds.put(new String(name, java.nio.charset.StandardCharsets.UTF_8), kind);
      if (kind == 1) {
        int dim = b.getInt();
        int present = b.getInt();
        b.position(b.position() + 4 * n + 4 * dim * present);
      } else {
        long floats = b.getLong();
        b.position((int) (b.position() + 12L * n + 4 * floats));
      }
    }
    assertThat(b.hasRemaining()).isFalse();
    return kinds;
  }
}
