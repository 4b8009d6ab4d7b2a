package io.flashvec.loadgen.bench;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;

/**
 * Decides when an unmeasured warm-up has run long enough: the warm-up runs in windows of {@link
 * Policy#window} and ends once at least {@link Policy#min} has passed and the QPS of the last
 * {@value #STABLE_WINDOWS} windows lies within {@link Policy#tolerance} of their largest (the
 * caches are filled and the JIT has settled), or once {@link Policy#max} has passed, in which case
 * the warm-up is reported as not stable. A fixed warm-up after a server start (cold page cache,
 * unoptimised code) otherwise lets the first point of a sweep run slower than the later ones, and a
 * sweep whose QPS should fall as {@code search_list} grows shows it rising instead.
 *
 * <p>Pure arithmetic over the window figures it is given (no clock of its own), so it is tested
 * without sleeping. Not thread-safe: one instance per warm-up.
 */
public final class WarmUp {
  /** Successive windows that must agree. */
  static final int STABLE_WINDOWS = 3;

  /**
   * How to warm up.
   *
   * @param min the warm-up runs at least this long; zero = no warm-up at all
   * @param window length of one measured window of the warm-up
   * @param tolerance largest relative spread of the last windows' QPS ({@code 0.1} = 10%)
   * @param max the warm-up stops here even when QPS has not settled
   */
  public record Policy(Duration min, Duration window, double tolerance, Duration max) {
    /** Default window, tolerance and cap. */
    public static final Duration DEFAULT_WINDOW = Duration.ofSeconds(1);

    public static final double DEFAULT_TOLERANCE = 0.10;
    public static final Duration DEFAULT_MAX = Duration.ofSeconds(30);

    /** No warm-up. */
    public static final Policy NONE =
        new Policy(Duration.ZERO, DEFAULT_WINDOW, DEFAULT_TOLERANCE, Duration.ZERO);

    public Policy {
      if (min.isNegative() || max.isNegative()) {
        throw new IllegalArgumentException(
            "warm-up times must not be negative [min=" + min + ", max=" + max + "]");
      }
      if (!min.isZero() && (window.isZero() || window.isNegative())) {
        throw new IllegalArgumentException(
            "warm-up window must be positive [window=" + window + "]");
      }
      if (!(tolerance > 0 && tolerance < 1)) {
        throw new IllegalArgumentException(
            "warm-up tolerance must be between 0 and 1 [tolerance=" + tolerance + "]");
      }
      if (!min.isZero() && max.compareTo(min) < 0) {
        throw new IllegalArgumentException(
            "warm-up cap is below its minimum [min=" + min + ", max=" + max + "]");
      }
    }

    /** At least {@code min}, default window, tolerance and cap (the cap raised to {@code min}). */
    public static Policy atLeast(Duration min) {
      if (min.isZero()) {
        return NONE;
      }
      return new Policy(
          min,
          DEFAULT_WINDOW,
          DEFAULT_TOLERANCE,
          min.compareTo(DEFAULT_MAX) > 0 ? min : DEFAULT_MAX);
    }

    /**
     * Exactly {@code time}, whether or not QPS settles in it (reported either way): for a run whose
     * warm-up must not outlast what was prepared for it.
     */
    public static Policy fixed(Duration time) {
      return time.isZero() ? NONE : new Policy(time, DEFAULT_WINDOW, DEFAULT_TOLERANCE, time);
    }

    /** Whether there is a warm-up at all. */
    public boolean enabled() {
      return !min.isZero();
    }

    /** A one-line description for a result's metadata. */
    public String describe() {
      if (!enabled()) {
        return "none";
      }
      return String.format(
          java.util.Locale.ROOT,
          "until QPS of %d successive %.1f s windows is within %.0f%% (at least %.1f s, at most"
              + " %.1f s)",
          STABLE_WINDOWS,
          window.toMillis() / 1000.0,
          tolerance * 100,
          min.toMillis() / 1000.0,
          max.toMillis() / 1000.0);
    }
  }

  private final Policy policy;
  private final List<Double> qps = new ArrayList<>();
  private double seconds;
  private boolean stable;

  public WarmUp(Policy policy) {
    this.policy = policy;
  }

  /**
   * Adds one window's figures and says whether the warm-up is over.
   *
   * @param windowSeconds how long the window ran
   * @param queries queries the window completed
   */
  public boolean add(double windowSeconds, long queries) {
    seconds += windowSeconds;
    qps.add(windowSeconds > 0 ? queries / windowSeconds : 0);
    stable = settled();
    return (stable && seconds >= policy.min.toNanos() / 1e9)
        || seconds >= policy.max.toNanos() / 1e9;
  }

  private boolean settled() {
    if (qps.size() < STABLE_WINDOWS) {
      return false;
    }
    double lo = Double.POSITIVE_INFINITY;
    double hi = 0;
    for (double q : qps.subList(qps.size() - STABLE_WINDOWS, qps.size())) {
      lo = Math.min(lo, q);
      hi = Math.max(hi, q);
    }
    return hi > 0 && (hi - lo) / hi <= policy.tolerance;
  }

  /** Whether the last windows agreed (false when the warm-up stopped at its cap). */
  public boolean stable() {
    return stable;
  }

  /** Seconds warmed up so far. */
  public double seconds() {
    return seconds;
  }

  /** QPS of each window so far. */
  public List<Double> windowQps() {
    return List.copyOf(qps);
  }

  /**
   * The coefficient of variation (standard deviation / mean) of per-window QPS, NaN with fewer than
   * {@value #STABLE_WINDOWS} windows: how steady a measured point's throughput was.
   */
  public static double variation(List<Double> windowQps) {
    if (windowQps.size() < STABLE_WINDOWS) {
      return Double.NaN;
    }
    double mean = 0;
    for (double q : windowQps) {
      mean += q;
    }
    mean /= windowQps.size();
    if (mean <= 0) {
      return Double.NaN;
    }
    double var = 0;
    for (double q : windowQps) {
      var += (q - mean) * (q - mean);
    }
    return Math.sqrt(var / windowQps.size()) / mean;
  }
}
