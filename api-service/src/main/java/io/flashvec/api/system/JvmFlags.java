package io.flashvec.api.system;

import io.flashvec.api.FlashVecProperties;
import io.flashvec.index.memory.MemoryPlan;
import java.io.PrintStream;
import org.springframework.boot.context.properties.bind.Binder;
import org.springframework.core.env.ConfigurableEnvironment;
import org.springframework.core.env.SimpleCommandLinePropertySource;
import org.springframework.core.env.StandardEnvironment;

/**
 * {@code java -jar flashvec.jar --print-jvm-flags [--flashvec.memory.budget=…]}: prints the JVM
 * flags the memory budget gives ({@link MemoryPlan#jvmFlags}: heap, young generation, native-memory
 * bounds) and exits, without starting the server, so the {@code flashvec} launcher and the
 * container image size the heap from the budget before the server's JVM starts. The budget is bound
 * as the server binds it, from {@code --flashvec.memory.budget=}, a system property or {@code
 * FLASHVEC_MEMORY_BUDGET}, else the default ({@link SystemMemory}); a budget in a configuration
 * file is not seen here.
 */
public final class JvmFlags {

  /** The command-line option that asks for the flags. */
  public static final String OPTION = "--print-jvm-flags";

  private JvmFlags() {}

  /** The module FlashVec's distance kernels use (the incubating Vector API). */
  static final String VECTOR_MODULE = "jdk.incubator.vector";

  /**
   * A one-line start-up error when the JVM runs without {@link #VECTOR_MODULE} (a plain {@code java
   * -jar flashvec.jar}), whose kernels every write and search uses; {@code null} when it is there.
   * {@code ./flashvec run} and the image add it.
   */
  public static String missingModule() {
    if (ModuleLayer.boot().findModule(VECTOR_MODULE).isPresent()) {
      return null;
    }
    return "flashvec: cannot start: the JVM runs without the module "
        + VECTOR_MODULE
        + ", which the distance kernels need; start it with `java --add-modules "
        + VECTOR_MODULE
        + " --enable-native-access=ALL-UNNAMED -jar flashvec.jar` (./flashvec run and the image do)";
  }

  /**
   * Prints the flags for {@code args} and the environment to {@code out}; returns the exit status:
   * 0, or 2 after printing why to {@code err} (a malformed or too small budget).
   */
  public static int print(String[] args, PrintStream out, PrintStream err) {
    return print(args, new StandardEnvironment(), out, err);
  }

  /** {@link #print(String[], PrintStream, PrintStream)} with {@code env} for the environment. */
  static int print(String[] args, ConfigurableEnvironment env, PrintStream out, PrintStream err) {
    env.getPropertySources().addFirst(new SimpleCommandLinePropertySource(args));
    try {
      FlashVecProperties.Memory memory =
          Binder.get(env).bindOrCreate("flashvec.memory", FlashVecProperties.Memory.class);
      MemoryPlan plan =
          NodeConfiguration.memoryPlan(memory, Runtime.getRuntime().availableProcessors(), 0);
      out.println(plan.jvmFlags());
      return 0;
    } catch (RuntimeException e) {
      Throwable root = e;
      while (!(root instanceof IllegalArgumentException) && root.getCause() != null) {
        root = root.getCause();
      }
      err.println(root.getMessage());
      return 2;
    }
  }
}
