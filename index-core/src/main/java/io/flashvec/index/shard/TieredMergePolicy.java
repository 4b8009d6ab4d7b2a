package io.flashvec.index.shard;

import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;

/**
 * Which sealed segments of a shard a compaction rewrites or merges, after Lucene's {@code
 * TieredMergePolicy}: segments of similar live size are merged in tiers, at most {@link
 * Settings#segmentsPerTier()} per tier, so a shard of {@code N} points keeps {@code O(log N)}
 * segments and each point is rewritten about once per tier. Pure: it sees only sizes.
 *
 * <ul>
 *   <li><b>Deletes:</b> a segment whose deleted share reaches {@link Settings#deletedFraction()} is
 *       rewritten alone from its live points (one with no live point is dropped). Below that share
 *       its deleted points are dropped when it joins a merge, and its merge score is worse in
 *       proportion to them.
 *   <li><b>Too big:</b> a segment with at least half of {@link Settings#maxSegmentPoints()} live
 *       points never joins a merge (the result could not grow much).
 *   <li><b>Allowed count:</b> the live points of the other segments, spread over tiers of {@code
 *       floor}, {@code floor·F}, {@code floor·F²}… points (F segments per tier), allow that many
 *       segments; below it nothing is merged.
 *   <li><b>Choice:</b> over that count, sorted by live size (largest first), every window of up to
 *       {@link Settings#maxMergeAtOnce()} segments whose total fits the maximum is scored as {@code
 *       skew · total^0.05 · (live/size)²} with skew the largest share of the total (sizes floored
 *       at {@code floor}); the lowest score wins: even merges of many segments, few deletes.
 *   <li><b>Forced</b> ({@code POST …/compact}): every segment with a deleted point is rewritten,
 *       then the smallest segments are merged while their total fits the maximum.
 *   <li><b>Raw segments</b> (sealed without a graph) always merge, before any tiered merge: every
 *       raw segment, largest first, and then the graph segments no larger than the largest raw one,
 *       while the total fits the maximum, in one build (a single raw segment is built alone). They
 *       wait ({@link Hold}) while writes keep coming and their live points are fewer than a tenth
 *       of the maximum, and for the whole of a bulk load, so a load ends in one large build rather
 *       than a chain of small ones that later merges would build again. Their deleted points are
 *       dropped by that build, so they are never rewritten alone while they wait.
 * </ul>
 */
final class TieredMergePolicy {

  /**
   * Most segments one merge takes unless more are allowed per tier (Lucene's default). Larger than
   * the default tier width of 3, so the merge that starts a tier can take every small segment at
   * once: a shard keeps a few large graphs rather than ten of each size.
   */
  static final int MAX_MERGE_AT_ONCE = 10;

  /**
   * The policy's parameters.
   *
   * @param floor segments below this many points count as this size (the seal threshold)
   * @param maxSegmentPoints no merge produces more live points than this
   * @param segmentsPerTier segments allowed per tier before a merge
   * @param maxMergeAtOnce most segments one merge takes
   * @param deletedFraction deleted share at which a segment is rewritten alone
   */
  record Settings(
      int floor,
      int maxSegmentPoints,
      int segmentsPerTier,
      int maxMergeAtOnce,
      double deletedFraction) {
    Settings {
      if (floor < 1 || maxSegmentPoints < 1 || segmentsPerTier < 2 || maxMergeAtOnce < 2) {
        throw new IllegalArgumentException(
            "invalid merge settings [floor="
                + floor
                + ", maxSegmentPoints="
                + maxSegmentPoints
                + ", segmentsPerTier="
                + segmentsPerTier
                + ", maxMergeAtOnce="
                + maxMergeAtOnce
                + "]");
      }
      if (!(deletedFraction > 0 && deletedFraction <= 1)) {
        throw new IllegalArgumentException(
            "deleted fraction must be in (0, 1] [deletedFraction=" + deletedFraction + "]");
      }
    }
  }

  /**
   * One sealed segment as the policy sees it.
   *
   * @param size points written in it (live or deleted)
   * @param live points not deleted
   */
  record Seg(int size, int live, boolean raw) {
    /** A segment with a graph. */
    Seg(int size, int live) {
      this(size, live, false);
    }
  }

  /** Whether raw segments wait before they merge. */
  enum Hold {
    /** They merge now. */
    NONE,
    /**
     * Writes are still coming: they wait while their live points are fewer than a tenth of the
     * maximum segment.
     */
    WRITES,
    /** A bulk load runs: they wait for its end. */
    BULK
  }

  /** What to do. */
  enum Kind {
    /** Rewrite one segment without its deleted points. */
    DELETED,
    /** Merge two or more segments into one. */
    MERGE
  }

  /**
   * A chosen compaction.
   *
   * @param kind rewrite or merge
   * @param sources indices into the policy's input, largest first for a merge
   */
  record Pick(Kind kind, List<Integer> sources) {}

  private final Settings settings;

  TieredMergePolicy(Settings settings) {
    this.settings = settings;
  }

  Settings settings() {
    return settings;
  }

  /** The next compaction for these segments, or {@code null} when there is none to do. */
  Pick find(List<Seg> segs, boolean force) {
    return find(segs, force, Hold.NONE);
  }

  /**
   * The next compaction for these segments, raw ones held back as {@code hold} says (a forced
   * compaction holds nothing), or {@code null} when there is none to do.
   */
  Pick find(List<Seg> segs, boolean force, Hold hold) {
    return find(segs, force, hold, 0);
  }

  /**
   * {@link #find(List, boolean, Hold)} for a shard that keeps {@code target} sealed segments
   * (Qdrant's {@code default_segment_number}; {@code 0}: the tiers choose): while it has more, its
   * smallest segments that may merge are merged into one, as many as bring the count to the target
   * (at most {@link Settings#maxMergeAtOnce()}, within the maximum segment size); at or below it
   * nothing is merged but rewrites. Raw segments are still built first, by merges that leave at
   * least {@code target} segments (alone when there are no more than that).
   */
  Pick find(List<Seg> segs, boolean force, Hold hold, int target) {
    for (int i = 0; i < segs.size(); i++) {
      Seg s = segs.get(i);
      int dead = s.size() - s.live();
      if (s.size() > 0
          && dead > 0
          && (force || (!s.raw() && dead >= settings.deletedFraction() * s.size()))) {
        return new Pick(Kind.DELETED, List.of(i));
      }
    }
    Pick raw = raw(segs, force ? Hold.NONE : hold, force ? 0 : target);
    if (raw != null) {
      return raw;
    }
    return force ? forced(segs) : target > 0 ? targeted(segs, target) : tiered(segs);
  }

  /** The merge of the smallest segments that brings their count towards {@code target}. */
  private Pick targeted(List<Seg> segs, int target) {
    int max = settings.maxSegmentPoints();
    List<Integer> eligible = new ArrayList<>();
    for (int i = 0; i < segs.size(); i++) {
      if (segs.get(i).live() < max / 2.0 && !segs.get(i).raw()) {
        eligible.add(i);
      }
    }
    int over = segs.size() - target;
    if (over <= 0 || eligible.size() < 2) {
      return null;
    }
    eligible.sort(
        Comparator.comparingInt((Integer i) -> segs.get(i).live())
            .thenComparing(Comparator.naturalOrder()));
    List<Integer> pick = new ArrayList<>();
    long total = 0;
    for (int i : eligible) {
      if (pick.size() > over || pick.size() >= settings.maxMergeAtOnce()) {
        break;
      }
      if (total + segs.get(i).live() > max) {
        break;
      }
      pick.add(i);
      total += segs.get(i).live();
    }
    return pick.size() < 2 ? null : new Pick(Kind.MERGE, List.copyOf(pick));
  }

  /** Whether {@code hold} keeps raw segments of {@code rawLive} live points waiting. */
  boolean holds(Hold hold, long rawLive) {
    return switch (hold) {
      case NONE -> false;
      case WRITES -> rawLive < settings.maxSegmentPoints() / 10.0;
      case BULK -> true;
    };
  }

  /** The merge that builds the raw segments (see the class comment), or null. */
  private Pick raw(List<Seg> segs, Hold hold, int target) {
    // with a segment target, a merge leaves at least target segments (a raw one built alone
    // when there are no more than that)
    int most = target > 0 ? Math.max(1, segs.size() - target + 1) : Integer.MAX_VALUE;
    List<Integer> raws = new ArrayList<>();
    long rawLive = 0;
    int largest = 0;
    for (int i = 0; i < segs.size(); i++) {
      Seg s = segs.get(i);
      if (s.raw()) {
        raws.add(i);
        rawLive += s.live();
        largest = Math.max(largest, s.live());
      }
    }
    if (raws.isEmpty() || holds(hold, rawLive)) {
      return null;
    }
    int max = settings.maxSegmentPoints();
    Comparator<Integer> largestFirst =
        Comparator.comparingInt((Integer i) -> segs.get(i).live())
            .reversed()
            .thenComparing(Comparator.naturalOrder());
    raws.sort(largestFirst);
    List<Integer> pick = new ArrayList<>();
    long total = 0;
    for (int i : raws) {
      if (pick.size() >= most) {
        break;
      }
      if (pick.isEmpty() || total + segs.get(i).live() <= max) {
        pick.add(i);
        total += segs.get(i).live();
      }
    }
    List<Integer> graphs = new ArrayList<>();
    for (int i = 0; i < segs.size(); i++) {
      Seg s = segs.get(i);
      if (!s.raw() && s.live() <= largest && s.live() < max / 2.0) {
        graphs.add(i);
      }
    }
    graphs.sort(largestFirst);
    for (int i : graphs) {
      if (pick.size() >= most) {
        break;
      }
      if (total + segs.get(i).live() <= max) {
        pick.add(i);
        total += segs.get(i).live();
      }
    }
    return new Pick(Kind.MERGE, List.copyOf(pick));
  }

  private Pick forced(List<Seg> segs) {
    List<Integer> order = sortedBy(segs, Comparator.comparingInt(i -> segs.get(i).live()));
    List<Integer> pick = new ArrayList<>();
    long total = 0;
    for (int i : order) {
      if (total + segs.get(i).live() > settings.maxSegmentPoints()) {
        break;
      }
      pick.add(i);
      total += segs.get(i).live();
    }
    return pick.size() < 2 ? null : new Pick(Kind.MERGE, List.copyOf(pick));
  }

  private Pick tiered(List<Seg> segs) {
    int max = settings.maxSegmentPoints();
    List<Integer> eligible = new ArrayList<>();
    for (int i = 0; i < segs.size(); i++) {
      if (segs.get(i).live() < max / 2.0 && !segs.get(i).raw()) {
        eligible.add(i);
      }
    }
    if (eligible.size() < 2) {
      return null;
    }
    eligible.sort(
        Comparator.comparingInt((Integer i) -> segs.get(i).live())
            .reversed()
            .thenComparing(Comparator.naturalOrder()));
    if (eligible.size() <= allowedCount(segs, eligible)) {
      return null;
    }
    List<Integer> best = null;
    double bestScore = Double.POSITIVE_INFINITY;
    for (int start = 0; start < eligible.size(); start++) {
      List<Integer> window = new ArrayList<>();
      long total = 0;
      for (int j = start; j < eligible.size() && window.size() < settings.maxMergeAtOnce(); j++) {
        int live = segs.get(eligible.get(j)).live();
        if (total + live > max) {
          continue; // skip one that does not fit; a smaller one further on may
        }
        window.add(eligible.get(j));
        total += live;
      }
      if (window.size() < 2) {
        continue;
      }
      double score = score(segs, window);
      if (score < bestScore) {
        bestScore = score;
        best = window;
      }
    }
    return best == null ? null : new Pick(Kind.MERGE, List.copyOf(best));
  }

  /** How many segments the tiers allow for the eligible segments' live points. */
  private long allowedCount(List<Seg> segs, List<Integer> eligible) {
    long remaining = 0;
    int minLive = Integer.MAX_VALUE;
    for (int i : eligible) {
      remaining += segs.get(i).live();
      minLive = Math.min(minLive, segs.get(i).live());
    }
    int perTier = settings.segmentsPerTier();
    long levelSize = Math.max(minLive, settings.floor());
    long allowed = 0;
    while (true) {
      double count = (double) remaining / levelSize;
      if (count < perTier) {
        allowed += (long) Math.ceil(count);
        return allowed;
      }
      allowed += perTier;
      remaining -= perTier * levelSize;
      levelSize = Math.min((long) settings.maxSegmentPoints(), levelSize * perTier);
    }
  }

  /** Lower is better: even, large merges of segments with few deleted points. */
  double score(List<Seg> segs, List<Integer> window) {
    long floored = 0;
    long largest = 0;
    long live = 0;
    long size = 0;
    for (int i : window) {
      Seg s = segs.get(i);
      long f = Math.max(s.live(), settings.floor());
      floored += f;
      largest = Math.max(largest, f);
      live += s.live();
      size += s.size();
    }
    double skew = (double) largest / floored;
    double liveRatio = size == 0 ? 1 : (double) live / size;
    return skew * Math.pow(Math.max(live, 1), 0.05) * liveRatio * liveRatio;
  }

  private static List<Integer> sortedBy(List<Seg> segs, Comparator<Integer> order) {
    List<Integer> idx = new ArrayList<>(segs.size());
    for (int i = 0; i < segs.size(); i++) {
      idx.add(i);
    }
    idx.sort(order.thenComparing(Comparator.naturalOrder()));
    return idx;
  }
}
