package io.flashvec.loadgen.cli;

import static org.assertj.core.api.Assertions.assertThat;

import io.flashvec.loadgen.LoadGen;
import io.flashvec.loadgen.dataset.VecsFiles;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@code generate} streams: a base set larger than the heap is written, and its ground truth
 * computed, by a JVM capped at {@value #HEAP} (200k × 96 floats alone are 77 MB; the generator that
 * held the base as {@code float[n][]} died of an OutOfMemoryError here).
 */
class GenerateMemoryTest {
  static final String HEAP = "-Xmx64m";

  @TempDir Path dir;

  @Test
  void generatesABaseLargerThanTheHeapWithGroundTruth() throws Exception {
    Path out = dir.resolve("syn");
    Path log = dir.resolve("generate.log");
    Path java = Path.of(System.getProperty("java.home"), "bin", "java");
    List<String> cmd =
        List.of(
            java.toString(),
            HEAP,
            "--add-modules",
            "jdk.incubator.vector",
            "-cp",
            System.getProperty("java.class.path"),
            LoadGen.class.getName(),
            "generate",
            "--out",
            out.toString(),
            "--n",
            "200000",
            "--dim",
            "96",
            "--clusters",
            "1000",
            "--normalize",
            "--gt-queries",
            "20",
            "--threads",
            "2");
    System.out.println("$ " + String.join(" ", cmd));
    Process p =
        new ProcessBuilder(cmd).redirectErrorStream(true).redirectOutput(log.toFile()).start();
    boolean exited = p.waitFor(5, TimeUnit.MINUTES);
    if (!exited) {
      p.destroyForcibly().waitFor();
    }
    String output = Files.readString(log);
    System.out.println(output);
    assertThat(exited).as("generate finished within 5 minutes").isTrue();
    assertThat(p.exitValue()).as(output).isZero();
    assertThat(output).doesNotContain("OutOfMemoryError");
    assertThat(Files.size(out.resolve("base.fvecs"))).isEqualTo(200_000L * (4 + 96 * 4));
    int[][] gt = VecsFiles.readIvecs(out.resolve("groundtruth.ivecs"));
    assertThat(gt).hasNumberOfRows(20);
    assertThat(gt[0]).hasSize(100);
  }
}
