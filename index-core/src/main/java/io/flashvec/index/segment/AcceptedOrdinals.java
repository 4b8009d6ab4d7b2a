package io.flashvec.index.segment;

import io.flashvec.index.PointId;
import java.util.function.BiPredicate;

/**
 * The ordinals of one segment that a filter accepts, as a bitset, with their count (the planner's
 * cardinality). Built once per search and segment from the segment's live points; immutable after
 * construction and safe to share between threads. Ordinals at or beyond {@link #size()} (appended
 * after the evaluation) are not accepted. Deletions after the evaluation are not reflected: the
 * segment combines this set with its own deletion bits.
 */
public final class AcceptedOrdinals {

  private final long[] words;
  private final int size;
  private final int count;

  private AcceptedOrdinals(long[] words, int size, int count) {
    this.words = words;
    this.size = size;
    this.count = count;
  }

  /** Evaluates {@code accept(id, payload)} on every live ordinal of {@code segment}. */
  public static AcceptedOrdinals evaluate(Segment segment, BiPredicate<PointId, byte[]> accept) {
    int n = segment.size();
    long[] words = new long[(n + 63) >>> 6];
    int count = 0;
    for (int ord = 0; ord < n; ord++) {
      if (!segment.isDeleted(ord) && accept.test(segment.idAt(ord), segment.payloadAt(ord))) {
        words[ord >>> 6] |= 1L << ord;
        count++;
      }
    }
    return new AcceptedOrdinals(words, n, count);
  }

  /**
   * The live ordinals among {@code candidates} (a bitset over ordinals below {@code size}, taken
   * over and modified) for which {@code verify(id, payload)} holds ({@code null}: all candidates
   * are accepted as they are).
   */
  public static AcceptedOrdinals fromCandidates(
      Segment segment, long[] candidates, int size, BiPredicate<PointId, byte[]> verify) {
    int count = 0;
    for (int w = 0; w < candidates.length; w++) {
      long word = candidates[w];
      long keep = word;
      while (word != 0) {
        int ord = (w << 6) + Long.numberOfTrailingZeros(word);
        word &= word - 1;
        if (ord >= size
            || segment.isDeleted(ord)
            || (verify != null && !verify.test(segment.idAt(ord), segment.payloadAt(ord)))) {
          keep &= ~(1L << ord);
        }
      }
      candidates[w] = keep;
      count += Long.bitCount(keep);
    }
    return new AcceptedOrdinals(candidates, size, count);
  }

  /**
   * The live ordinals of {@code segment} that have the default dense vector and that {@code base}
   * accepts ({@code null}: all): what a dense search may return.
   */
  public static AcceptedOrdinals withVector(Segment segment, AcceptedOrdinals base) {
    int n = base == null ? segment.size() : base.size;
    long[] words = new long[(n + 63) >>> 6];
    int count = 0;
    for (int ord = 0; ord < n; ord++) {
      if ((base == null ? !segment.isDeleted(ord) : base.get(ord)) && segment.hasVector(ord)) {
        words[ord >>> 6] |= 1L << ord;
        count++;
      }
    }
    return new AcceptedOrdinals(words, n, count);
  }

  /**
   * The live ordinals of {@code segment} with ordinal-aware {@code accept}: used by the filter
   * conditions that need the segment, such as the presence of a vector.
   */
  public static AcceptedOrdinals evaluate(Segment segment, java.util.function.IntPredicate accept) {
    int n = segment.size();
    long[] words = new long[(n + 63) >>> 6];
    int count = 0;
    for (int ord = 0; ord < n; ord++) {
      if (!segment.isDeleted(ord) && accept.test(ord)) {
        words[ord >>> 6] |= 1L << ord;
        count++;
      }
    }
    return new AcceptedOrdinals(words, n, count);
  }

  /** Whether {@code ord} was accepted (and live when evaluated). */
  public boolean get(int ord) {
    return ord < size && (words[ord >>> 6] & (1L << ord)) != 0;
  }

  /** Ordinals covered by the evaluation. */
  public int size() {
    return size;
  }

  /** Accepted ordinals. */
  public int count() {
    return count;
  }

  /** The next accepted ordinal at or after {@code from}, or -1. */
  public int next(int from) {
    if (from >= size) {
      return -1;
    }
    int w = from >>> 6;
    long word = words[w] & (-1L << from);
    while (true) {
      if (word != 0) {
        int ord = (w << 6) + Long.numberOfTrailingZeros(word);
        return ord < size ? ord : -1;
      }
      if (++w >= words.length) {
        return -1;
      }
      word = words[w];
    }
  }
}
