package io.flashvec.api.it;

import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import io.flashvec.testing.TestSeeds;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Schema-driven fuzzing: Schemathesis reads the server's own {@code /openapi.json} and sends
 * requests generated from it (its examples, values at and past every constraint, random documents,
 * and sequences that follow the document's links), seeded and bounded in examples and time. No
 * answer may be a 5xx, and no error body may show a Java class, a stack frame or the data directory
 * ({@code src/test/python/flashvec_checks.py}).
 *
 * <p>{@code ./flashvec test} installs Schemathesis in a venv and sets {@code
 * FLASHVEC_SCHEMATHESIS}; a plain {@code mvn verify} without it skips this test and says so. On a
 * failure the output names the seed, each failing request as a curl command, and how to run the
 * same again.
 */
class OpenApiFuzzIT {

  /** Requests per operation and phase, and the whole run's time budget. */
  private static final int MAX_EXAMPLES = 25;

  private static final int MAX_SECONDS = 150;

  @TempDir Path tmp;

  @Test
  void generatedRequestsNeverGetAServerErrorNorShowInternals() throws Exception {
    String st = System.getenv("FLASHVEC_SCHEMATHESIS");
    assumeTrue(
        st != null && !st.isBlank(),
        "FLASHVEC_SCHEMATHESIS is not set (./flashvec test sets it); skipping the schema fuzzing");
    long seed = TestSeeds.seed("OpenApiFuzzIT") & 0xFFFF_FFFFL;
    Path data = tmp.resolve("data");
    try (ServerProcess server = new ServerProcess(data, tmp.resolve("server.log")).start()) {
      Http http = new Http(server.url());
      // a collection the document's examples name, so that requests reach past "not found"
      assertThat(
              http.put("/collections/c", "{\"vectors\":{\"size\":4,\"distance\":\"Cosine\"}}")
                  .status())
          .isEqualTo(200);
      List<String> cmd = new ArrayList<>();
      cmd.add(st);
      cmd.add("run");
      cmd.add(server.url() + "/openapi.json");
      cmd.add("--checks");
      cmd.add("not_a_server_error,response_schema_conformance,no_internal_details");
      cmd.add("--seed");
      cmd.add(Long.toString(seed));
      cmd.add("--max-examples");
      cmd.add(Integer.toString(MAX_EXAMPLES));
      cmd.add("--max-time");
      cmd.add(Integer.toString(MAX_SECONDS));
      cmd.add("--workers");
      cmd.add("1"); // one worker: the same seed gives the same requests
      cmd.add("--generation-database");
      cmd.add("none");
      cmd.add("--no-color");
      // run in the test's directory: Schemathesis leaves its state (.schemathesis/) where it runs
      ProcessBuilder pb = new ProcessBuilder(cmd).directory(tmp.toFile()).redirectErrorStream(true);
      pb.environment().put("SCHEMATHESIS_HOOKS", "flashvec_checks");
      pb.environment().put("PYTHONPATH", Path.of("src/test/python").toAbsolutePath().toString());
      pb.environment().put("FLASHVEC_DATA_DIR", data.toAbsolutePath().toString());
      Path out = tmp.resolve("schemathesis.log");
      pb.redirectOutput(out.toFile());
      Process p = pb.start();
      boolean done = p.waitFor(MAX_SECONDS + 180, TimeUnit.SECONDS);
      if (!done) {
        p.destroyForcibly();
      }
      String output = tail(out);
      String again =
          "\nseed "
              + seed
              + "; again: ./mvnw -pl api-service -am verify -Dit.test=OpenApiFuzzIT -Dtest=none"
              + " -Dsurefire.failIfNoSpecifiedTests=false "
              + TestSeeds.reproduceWith()
              + " (with FLASHVEC_SCHEMATHESIS set, as ./flashvec test does)";
      System.out.println(output + again);
      assertThat(done).as("schemathesis finished in time:\n" + output + again).isTrue();
      assertThat(p.exitValue())
          .as(
              "schemathesis found failures:\n"
                  + output
                  + again
                  + "\nserver log:\n"
                  + server.logTail())
          .isZero();
      assertThat(output).contains("Seed: " + seed);
    }
  }

  private static String tail(Path out) throws IOException {
    String s = Files.readString(out, StandardCharsets.UTF_8);
    return s.length() > 20_000 ? s.substring(s.length() - 20_000) : s;
  }
}
