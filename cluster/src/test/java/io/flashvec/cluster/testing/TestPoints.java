package io.flashvec.cluster.testing;

import io.flashvec.index.Point;
import io.flashvec.index.PointId;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Random;

/** Random points and the exact answer of a dot-product search over them, for checking results. */
public final class TestPoints {

  private TestPoints() {}

  /** Points {@code from .. from+n-1} with Gaussian vectors of {@code dim} and payload {"i":id}. */
  public static List<Point> random(Random r, long from, int n, int dim) {
    List<Point> out = new ArrayList<>(n);
    for (long i = from; i < from + n; i++) {
      out.add(new Point(PointId.of(i), vector(r, dim), payload(i)));
    }
    return out;
  }

  public static float[] vector(Random r, int dim) {
    float[] v = new float[dim];
    for (int j = 0; j < dim; j++) {
      v[j] = (float) r.nextGaussian();
    }
    return v;
  }

  public static byte[] payload(long i) {
    return ("{\"i\":" + i + "}").getBytes(StandardCharsets.UTF_8);
  }

  public static float dot(float[] a, float[] b) {
    float s = 0;
    for (int i = 0; i < a.length; i++) {
      s += a[i] * b[i];
    }
    return s;
  }

  /** The ids of the {@code k} points after the best {@code offset} by dot product, best first. */
  public static List<PointId> bestByDot(List<Point> points, float[] q, int offset, int k) {
    return points.stream()
        .sorted(Comparator.comparingDouble((Point p) -> -dot(p.vector(), q)))
        .skip(offset)
        .limit(k)
        .map(Point::id)
        .toList();
  }
}
