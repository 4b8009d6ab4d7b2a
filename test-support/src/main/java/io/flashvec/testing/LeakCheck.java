package io.flashvec.testing;

import io.flashvec.testing.JvmResources.Leaks;
import io.flashvec.testing.JvmResources.Snapshot;
import java.time.Duration;
import org.junit.jupiter.api.extension.AfterAllCallback;
import org.junit.jupiter.api.extension.BeforeAllCallback;
import org.junit.jupiter.api.extension.ExtensionContext;
import org.junit.jupiter.api.extension.ExtensionContext.Namespace;

/**
 * Fails a test class that leaves files open or mapped: the open file descriptors and the file
 * mappings of the JVM (see {@link JvmResources}) must be the same after the class as before it. A
 * leaked descriptor or mapping is a leaked shard, segment or WAL that a long-running server would
 * pile up until it hits its descriptor limit or address space.
 *
 * <p>Releases may finish a little after a test returns (a background build that closes its files, a
 * gRPC event loop that shuts down a second after its last channel), so the check polls for up to
 * {@link #SETTLE} before it fails. It runs once per test class (including each {@code @Nested}
 * class), after the class's {@code @AfterAll} methods.
 *
 * <p>The storage, index and cluster modules turn it on for every test class through JUnit's
 * extension auto-detection (their poms set {@code flashvec.leak-check}, which Surefire passes on as
 * {@code junit.jupiter.extensions.autodetection.enabled}; this jar registers it as a service). A
 * class elsewhere may add it with {@code @ExtendWith(LeakCheck.class)}.
 */
public final class LeakCheck implements BeforeAllCallback, AfterAllCallback {

  /** How long releases may lag behind the end of a test class, by default. */
  public static final Duration SETTLE = Duration.ofSeconds(10);

  /** JUnit configuration parameter overriding {@link #SETTLE} (an ISO-8601 duration). */
  public static final String SETTLE_PARAMETER = "flashvec.leakcheck.settle";

  private static final Namespace NAMESPACE = Namespace.create(LeakCheck.class);
  private static final String BEFORE = "before";

  @Override
  public void beforeAll(ExtensionContext context) {
    JvmResources.warmUp();
    context.getStore(NAMESPACE).put(BEFORE, JvmResources.snapshot());
  }

  @Override
  public void afterAll(ExtensionContext context) {
    Snapshot before = context.getStore(NAMESPACE).remove(BEFORE, Snapshot.class);
    if (before == null) {
      return;
    }
    Duration settle =
        context.getConfigurationParameter(SETTLE_PARAMETER, Duration::parse).orElse(SETTLE);
    Leaks[] last = new Leaks[1];
    try {
      Await.until(
          settle,
          "released",
          () -> {
            last[0] = JvmResources.snapshot().leaksSince(before);
            return last[0].none();
          });
    } catch (AssertionError timedOut) {
      throw new AssertionError(message(context.getRequiredTestClass().getName(), settle, last[0]));
    }
  }

  static String message(String testClass, Duration settle, Leaks leaks) {
    StringBuilder b = new StringBuilder("resources leaked by ").append(testClass);
    b.append(" (still held ").append(settle.toMillis()).append(" ms after its last test):");
    if (!leaks.openFiles().isEmpty()) {
      b.append("\n  ").append(leaks.openFiles().size()).append(" open file descriptor(s): ");
      b.append(leaks.openFiles());
    }
    if (leaks.mappings() > 0) {
      b.append("\n  ").append(leaks.mappings()).append(" file mapping(s) of: ");
      b.append(leaks.newlyMappedFiles());
    }
    return b.toString();
  }
}
