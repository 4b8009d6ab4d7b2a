package io.flashvec.benchmarks;

import java.io.Closeable;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Comparator;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Fork;
import org.openjdk.jmh.annotations.Measurement;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.Warmup;

/**
 * Shared defaults of every FlashVec JMH benchmark; subclasses add {@code @Param} grids and override
 * {@code @OutputTimeUnit} where nanoseconds read badly.
 *
 * <p>One fork with the flags jvector and our kernels need ({@code --add-modules
 * jdk.incubator.vector} for the Vector API, native access for FFM), 3 × 1 s warm-up and 5 × 1 s
 * measurement, average time per operation. The machines are 2-core and shared: compare figures only
 * against a baseline measured in the same run. All JMH annotations used here are
 * {@code @Inherited}, so subclasses pick them up.
 *
 * <p>State is per thread ({@link Scope#Thread}): each benchmark thread owns its scratch data.
 * Benchmarks that share an expensive fixture between threads (a built segment) hold it in a nested
 * {@link Scope#Benchmark} state.
 *
 * <p>Temporary files go under the directory named by the system property {@value #DIR_PROPERTY}
 * (default {@code java.io.tmpdir}); point it at the disk you mean to measure, e.g. {@code
 * -jvmArgsAppend -Dflashvec.bench.dir=/mnt/nvme/tmp}. A tmpfs makes every fsync free.
 */
@Fork(
    value = 1,
    jvmArgsAppend = {"--add-modules", "jdk.incubator.vector", "--enable-native-access=ALL-UNNAMED"})
@Warmup(iterations = 3, time = 1)
@Measurement(iterations = 5, time = 1)
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.NANOSECONDS)
@State(Scope.Thread)
public abstract class AbstractBenchmark {

  /** The seed of all synthetic data; change it to check that a result is not a data artefact. */
  public static final long SEED = 0x5EED_F1A5L;

  /** System property naming the directory for temporary benchmark files. */
  public static final String DIR_PROPERTY = "flashvec.bench.dir";

  /** Creates a fresh temporary directory under {@value #DIR_PROPERTY} (or the JVM's tmpdir). */
  static Path createTempDir(String prefix) {
    String base = System.getProperty(DIR_PROPERTY, System.getProperty("java.io.tmpdir"));
    try {
      Path parent = Files.createDirectories(Path.of(base));
      return Files.createTempDirectory(parent, prefix);
    } catch (IOException e) {
      throw new UncheckedIOException(
          "cannot create benchmark directory [base=" + base + ", prefix=" + prefix + "]", e);
    }
  }

  /**
   * Closes {@code resource} (tolerates {@code null}), then deletes {@code dir} even if closing
   * failed: the tear-down of a benchmark that wrote files.
   */
  static void closeAndDelete(Closeable resource, Path dir) throws IOException {
    try {
      if (resource != null) {
        resource.close();
      }
    } finally {
      deleteTree(dir);
    }
  }

  /** Deletes a directory tree; tolerates {@code null} and a missing directory. */
  static void deleteTree(Path dir) {
    if (dir == null || !Files.exists(dir)) {
      return;
    }
    try (Stream<Path> walk = Files.walk(dir)) {
      for (Path p : walk.sorted(Comparator.reverseOrder()).toList()) {
        Files.deleteIfExists(p);
      }
    } catch (IOException e) {
      throw new UncheckedIOException("cannot delete benchmark directory [dir=" + dir + "]", e);
    }
  }
}
