package io.flashvec.loadgen.bench;

import org.HdrHistogram.Histogram;

/**
 * Latency percentiles of one benchmark point, in milliseconds, from an HdrHistogram recorded in
 * nanoseconds.
 */
public record LatencySummary(
    long count,
    double p50Ms,
    double p95Ms,
    double p99Ms,
    double p999Ms,
    double maxMs,
    double meanMs) {

  /** Highest latency the histograms track: longer requests are clamped to it (10 minutes). */
  public static final long MAX_TRACKABLE_NANOS = 600_000_000_000L;

  /** A histogram suited to request latencies in ns: 3 significant digits up to 10 minutes. */
  public static Histogram newHistogram() {
    return new Histogram(MAX_TRACKABLE_NANOS, 3);
  }

  /** Records one latency, clamping it into the trackable range. */
  public static void record(Histogram h, long nanos) {
    h.recordValue(Math.max(1, Math.min(nanos, MAX_TRACKABLE_NANOS)));
  }

  /** Summarises a histogram; all fields are 0 (count 0) when it is empty. */
  public static LatencySummary of(Histogram h) {
    if (h.getTotalCount() == 0) {
      return new LatencySummary(0, 0, 0, 0, 0, 0, 0);
    }
    return new LatencySummary(
        h.getTotalCount(),
        ms(h.getValueAtPercentile(50)),
        ms(h.getValueAtPercentile(95)),
        ms(h.getValueAtPercentile(99)),
        ms(h.getValueAtPercentile(99.9)),
        ms(h.getMaxValue()),
        h.getMean() / 1e6);
  }

  private static double ms(long nanos) {
    return nanos / 1e6;
  }
}
