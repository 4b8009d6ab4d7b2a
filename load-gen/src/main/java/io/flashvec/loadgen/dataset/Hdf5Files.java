package io.flashvec.loadgen.dataset;

import io.jhdf.HdfFile;
import io.jhdf.api.Attribute;
import io.jhdf.api.Node;
import java.nio.file.Path;

/**
 * Reads ann-benchmarks HDF5 files ({@code train}, {@code test}, {@code neighbors}, {@code
 * distances}, attribute {@code distance}) with jhdf, a pure-Java HDF5 reader.
 */
public final class Hdf5Files {
  private Hdf5Files() {}

  /** The content of an ann-benchmarks file; {@code neighbors} and {@code metric} may be null. */
  public record AnnBenchmarks(
      float[][] train, float[][] test, int[][] neighbors, Distance metric) {}

  /** Reads {@code train}, {@code test}, {@code neighbors} (if present) and the metric attribute. */
  public static AnnBenchmarks read(Path file) {
    try (HdfFile hdf = new HdfFile(file)) {
      float[][] train = floats(hdf, "train", file);
      float[][] test = floats(hdf, "test", file);
      int[][] neighbors = null;
      Node nb = hdf.getChildren().get("neighbors");
      if (nb != null) {
        neighbors = ints(hdf, "neighbors", file);
      }
      Distance metric = null;
      Attribute attr = hdf.getAttributes().get("distance");
      if (attr != null) {
        Object v = attr.getData();
        String s = v instanceof String str ? str : v instanceof String[] arr ? arr[0] : null;
        if (s != null) {
          try {
            metric = Distance.parse(s);
          } catch (IllegalArgumentException e) {
            throw new DatasetFormatException(
                "unsupported metric in hdf5 file [file=" + file + ", distance=" + s + "]");
          }
        }
      }
      return new AnnBenchmarks(train, test, neighbors, metric);
    } catch (io.jhdf.exceptions.HdfException e) {
      throw new DatasetFormatException(
          "cannot read hdf5 file [file=" + file + ", error=" + e.getMessage() + "]");
    }
  }

  private static float[][] floats(HdfFile hdf, String name, Path file) {
    Object data = data(hdf, name, file);
    if (data instanceof float[][] f) {
      return f;
    }
    if (data instanceof double[][] d) {
      float[][] out = new float[d.length][];
      for (int i = 0; i < d.length; i++) {
        out[i] = new float[d[i].length];
        for (int j = 0; j < d[i].length; j++) {
          out[i][j] = (float) d[i][j];
        }
      }
      return out;
    }
    throw notA("float", file, name, data);
  }

  private static int[][] ints(HdfFile hdf, String name, Path file) {
    Object data = data(hdf, name, file);
    if (data instanceof int[][] i) {
      return i;
    }
    if (data instanceof long[][] l) {
      int[][] out = new int[l.length][];
      for (int r = 0; r < l.length; r++) {
        out[r] = new int[l[r].length];
        for (int c = 0; c < l[r].length; c++) {
          out[r][c] = Math.toIntExact(l[r][c]);
        }
      }
      return out;
    }
    throw notA("int", file, name, data);
  }

  private static DatasetFormatException notA(String type, Path file, String name, Object data) {
    return new DatasetFormatException(
        "hdf5 dataset is not a 2-D "
            + type
            + " array [file="
            + file
            + ", dataset="
            + name
            + ", type="
            + data.getClass().getSimpleName()
            + "]");
  }

  private static Object data(HdfFile hdf, String name, Path file) {
    if (!hdf.getChildren().containsKey(name)) {
      throw new DatasetFormatException(
          "hdf5 file lacks a dataset [file=" + file + ", dataset=" + name + "]");
    }
    return hdf.getDatasetByPath(name).getData();
  }
}
