package io.flashvec.testing;

import java.util.Locale;
import java.util.Random;
import java.util.SplittableRandom;
import org.junit.jupiter.api.extension.ExtensionContext;
import org.junit.jupiter.api.extension.TestExecutionExceptionHandler;

/**
 * The one source of randomness for tests, so every failure can be reproduced from its seed.
 *
 * <p>The JVM-wide master seed comes from the system property {@code tests.seed} (hex, with or
 * without {@code 0x}) or, when that is absent, from {@link System#nanoTime()} exactly once. It is
 * printed as {@code [flashvec] tests.seed=<hex>} the first time this class is used, so a failing
 * run is reproduced with {@code ./mvnw -Dtests.seed=<hex> test}. Tests never call {@code new
 * Random()}; they ask for a generator derived from the master seed and a salt naming the test, so
 * one test's stream does not depend on which other tests ran before it.
 *
 * <p>Add {@link Reporter} with {@code @ExtendWith(TestSeeds.Reporter.class)} so that a failing test
 * carries the reproduce line in its own stack trace (Surefire redirects stdout to a file).
 *
 * <p>Iteration counts scale with {@code tests.multiplier} (default 1) through {@link #atLeast}, so
 * CI stays fast and a nightly run can go deep.
 *
 * <p>The integration tests use the same master seed: a test that runs several seeded rounds (a
 * server killed at a random moment, four times) goes through {@link #rounds}, which prints each
 * round's seed as well.
 *
 * <p>Thread-safe: the master seed is immutable; each returned generator belongs to its caller.
 */
public final class TestSeeds {

  /** System property holding the master seed in hex. */
  public static final String SEED_PROPERTY = "tests.seed";

  /** System property scaling randomized iteration counts. */
  public static final String MULTIPLIER_PROPERTY = "tests.multiplier";

  private static final long MASTER = initMaster();

  private TestSeeds() {}

  private static long initMaster() {
    String configured = System.getProperty(SEED_PROPERTY);
    long seed;
    if (configured != null && !configured.isBlank()) {
      seed = parse(configured);
    } else {
      // The single allowed clock read: it only picks the seed, which is printed below.
      seed = mix(System.nanoTime());
    }
    System.out.println("[flashvec] tests.seed=" + hex(seed));
    return seed;
  }

  static long parse(String value) {
    String v = value.trim();
    if (v.startsWith("0x") || v.startsWith("0X")) {
      v = v.substring(2);
    }
    try {
      return Long.parseUnsignedLong(v, 16);
    } catch (NumberFormatException e) {
      throw new IllegalArgumentException(
          "tests.seed is not a hex number [" + SEED_PROPERTY + "=" + value + "]", e);
    }
  }

  /** The master seed of this JVM. */
  public static long masterSeed() {
    return MASTER;
  }

  /** The seed as printed and as accepted by {@code -Dtests.seed}. */
  public static String hex(long seed) {
    return String.format(Locale.ROOT, "%016X", seed);
  }

  /** A generator seeded with the master seed. */
  public static Random random() {
    return new Random(MASTER);
  }

  /** A generator seeded with {@link #seed(String) seed(salt)}; use the test's name as the salt. */
  public static Random random(String salt) {
    return new Random(seed(salt));
  }

  /** A splittable generator (hand {@code split()}s to worker threads) for {@code salt}. */
  public static SplittableRandom splittableRandom(String salt) {
    return new SplittableRandom(seed(salt));
  }

  /** The master seed mixed with a salt, such as a test name. */
  public static long seed(String salt) {
    return derive(MASTER, salt.hashCode());
  }

  /** The {@code index}-th child of {@code seed}, for loops that run one scenario per seed. */
  public static long derive(long seed, long index) {
    return mix(seed + 0x9E3779B97F4A7C15L * (index + 1));
  }

  /**
   * At least {@code n} times {@code tests.multiplier}, plus up to half that again at random, like
   * Lucene's {@code atLeast}.
   */
  public static int atLeast(Random random, int n) {
    int min = Math.max(1, n * Integer.getInteger(MULTIPLIER_PROPERTY, 1));
    return min + random.nextInt(min / 2 + 1);
  }

  /** One round of a multi-round test. */
  @FunctionalInterface
  public interface Round {
    void run(int round, long seed) throws Exception;
  }

  /**
   * Runs rounds {@code 0..rounds-1} of a test, round {@code i} with the seed {@link #derive
   * derive(seed(salt), i)}, printing {@code [flashvec] <salt> round <i> seed=<hex>} before each.
   */
  public static void rounds(String salt, int rounds, Round body) throws Exception {
    long base = seed(salt);
    for (int round = 0; round < rounds; round++) {
      long seed = derive(base, round);
      System.out.println("[flashvec] " + salt + " round " + round + " seed=" + hex(seed));
      body.run(round, seed);
    }
  }

  /** The reproduce line, for assertion messages. */
  public static String reproduceWith() {
    return "-D" + SEED_PROPERTY + "=" + hex(MASTER);
  }

  // Stafford variant 13 of the splitmix64 finalizer: spreads nearby seeds apart.
  private static long mix(long z) {
    z = (z ^ (z >>> 30)) * 0xBF58476D1CE4E5B9L;
    z = (z ^ (z >>> 27)) * 0x94D049BB133111EBL;
    return z ^ (z >>> 31);
  }

  /**
   * Attaches the reproduce line to a failing test's exception as a suppressed exception, so it
   * shows up next to the failure in the Surefire report.
   */
  public static final class Reporter implements TestExecutionExceptionHandler {
    @Override
    public void handleTestExecutionException(ExtensionContext context, Throwable throwable)
        throws Throwable {
      throwable.addSuppressed(
          new ReproduceWith(
              "reproduce with: ./mvnw test -Dtest="
                  + context.getRequiredTestClass().getSimpleName()
                  + "#"
                  + context.getRequiredTestMethod().getName()
                  + " "
                  + reproduceWith()));
      throw throwable;
    }
  }

  /** Carries the reproduce line; never thrown on its own. */
  public static final class ReproduceWith extends RuntimeException {
    private static final long serialVersionUID = 1L;

    ReproduceWith(String message) {
      super(message, null, false, false);
    }
  }
}
