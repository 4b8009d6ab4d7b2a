package io.flashvec.api.system;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.flashvec.api.FlashVecProperties;
import io.flashvec.cluster.node.EngineSettings;
import io.flashvec.index.memory.MemoryPlan;
import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.springframework.boot.context.properties.bind.Binder;
import org.springframework.boot.context.properties.source.MapConfigurationPropertySource;
import org.springframework.core.env.StandardEnvironment;
import org.springframework.core.env.SystemEnvironmentPropertySource;

/**
 * {@code flashvec.memory.budget} binds, a malformed or too small budget stops the start-up naming
 * the setting and the minimum, the plan reaches the engine settings (with the build slice), the
 * launcher's {@code --print-jvm-flags} derives {@code -Xmx} from the same plan, and the default
 * budget reads the cgroup's limit.
 */
class MemorySettingsTest {

  private static final long MIB = 1L << 20;

  @TempDir Path tmp;

  private static FlashVecProperties bind(Map<String, String> settings) {
    return new Binder(new MapConfigurationPropertySource(settings))
        .bindOrCreate("flashvec", FlashVecProperties.class);
  }

  @Test
  void theBudgetReachesTheEngineSettings() {
    FlashVecProperties props = bind(Map.of("flashvec.memory.budget", "768Mi"));
    assertThat(props.memory().budgetBytes()).isEqualTo(768 * MIB);
    EngineSettings engine = NodeConfiguration.engineSettings(props, null);
    MemoryPlan plan = engine.memoryPlan();
    assertThat(plan.total()).isEqualTo(768 * MIB);
    assertThat(plan.heap()).isLessThanOrEqualTo(Runtime.getRuntime().maxMemory());
    assertThat(engine.buildMemoryBytes()).isEqualTo(plan.build()).isPositive();
    assertThat(bind(Map.of()).memory().budgetBytes()).as("unset").isZero();
  }

  @Test
  void aMalformedBudgetIsRefusedByName() {
    assertThatThrownBy(() -> bind(Map.of("flashvec.memory.budget", "lots")))
        .rootCause()
        .hasMessage(
            "flashvec.memory.budget must be a positive size such as 768Mi, 2Gi, 2GB or 805306368"
                + " [budget=lots]");
  }

  @Test
  void aBudgetTooSmallIsRefusedNamingTheMinimum() {
    FlashVecProperties props = bind(Map.of("flashvec.memory.budget", "300Mi"));
    assertThatThrownBy(() -> NodeConfiguration.memoryPlan(props.memory(), 2, 0))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageStartingWith(
            "flashvec.memory.budget: memory budget too small [budget=300 MiB (314572800),"
                + " needs≥463 MiB (485490688)]");
  }

  @Test
  void printJvmFlagsDerivesTheHeapFromTheBudget() {
    ByteArrayOutputStream out = new ByteArrayOutputStream();
    ByteArrayOutputStream err = new ByteArrayOutputStream();
    StandardEnvironment env = new StandardEnvironment();
    env.getPropertySources()
        .replace(
            StandardEnvironment.SYSTEM_ENVIRONMENT_PROPERTY_SOURCE_NAME,
            new SystemEnvironmentPropertySource(
                StandardEnvironment.SYSTEM_ENVIRONMENT_PROPERTY_SOURCE_NAME,
                Map.of("FLASHVEC_MEMORY_BUDGET", "1Gi")));
    int status = JvmFlags.print(new String[] {JvmFlags.OPTION}, env, print(out), print(err));
    MemoryPlan expected = MemoryPlan.of(1L << 30, Runtime.getRuntime().availableProcessors(), 0);
    assertThat(status).isZero();
    assertThat(out.toString(StandardCharsets.UTF_8).trim())
        .isEqualTo(
            "-Xmx"
                + expected.heap() / MIB
                + "m -XX:MaxNewSize="
                + expected.youngGeneration() / MIB
                + "m -Djdk.nio.maxCachedBufferSize=1048576 -XX:TrimNativeHeapInterval=5000");

    out.reset();
    status =
        JvmFlags.print(
            new String[] {JvmFlags.OPTION, "--flashvec.memory.budget=100Mi"},
            env,
            print(out),
            print(err));
    assertThat(status).isEqualTo(2);
    assertThat(out.size()).isZero();
    assertThat(err.toString(StandardCharsets.UTF_8))
        .startsWith("flashvec.memory.budget: memory budget too small [budget=100 MiB (104857600)");
  }

  @Test
  void theDefaultBudgetIsTheNearestCgroupLimit() throws Exception {
    // cgroup v1: the memory controller's hierarchy; the parent's limit is the smaller one
    Path v1 = tmp.resolve("v1");
    Files.createDirectories(v1.resolve("memory/a/b"));
    Files.writeString(v1.resolve("memory/memory.limit_in_bytes"), "9223372036854771712\n");
    Files.writeString(v1.resolve("memory/a/memory.limit_in_bytes"), "1073741824\n");
    Files.writeString(v1.resolve("memory/a/b/memory.limit_in_bytes"), "9223372036854771712\n");
    Path proc1 = tmp.resolve("cgroup1");
    Files.writeString(proc1, "9:name=systemd:/\n4:memory:/a/b\n0::/\n");
    assertThat(SystemMemory.cgroupLimit(proc1, v1)).isEqualTo(1L << 30);

    // cgroup v2: memory.max, "max" is none
    Path v2 = tmp.resolve("v2");
    Files.createDirectories(v2.resolve("pod/ctr"));
    Files.writeString(v2.resolve("cgroup.controllers"), "cpu memory\n");
    Files.writeString(v2.resolve("pod/memory.max"), "max\n");
    Files.writeString(v2.resolve("pod/ctr/memory.max"), "805306368\n");
    Path proc2 = tmp.resolve("cgroup2");
    Files.writeString(proc2, "0::/pod/ctr\n");
    assertThat(SystemMemory.cgroupLimit(proc2, v2)).isEqualTo(768 * MIB);

    Files.writeString(v2.resolve("pod/ctr/memory.max"), "max\n");
    assertThat(SystemMemory.cgroupLimit(proc2, v2)).as("no limit").isZero();
    assertThat(SystemMemory.cgroupLimit(tmp.resolve("absent"), v2)).isZero();
    assertThat(SystemMemory.defaultBudget()).isPositive();
  }

  private static PrintStream print(ByteArrayOutputStream b) {
    return new PrintStream(b, true, StandardCharsets.UTF_8);
  }
}
