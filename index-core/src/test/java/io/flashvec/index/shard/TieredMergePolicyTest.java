package io.flashvec.index.shard;

import static org.assertj.core.api.Assertions.assertThat;

import io.flashvec.index.shard.TieredMergePolicy.Kind;
import io.flashvec.index.shard.TieredMergePolicy.Pick;
import io.flashvec.index.shard.TieredMergePolicy.Seg;
import io.flashvec.testing.TestSeeds;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Random;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

/** {@link TieredMergePolicy}: which sealed segments a compaction rewrites or merges. */
@ExtendWith(TestSeeds.Reporter.class)
class TieredMergePolicyTest {

  static final int SEAL = 100_000;

  private static TieredMergePolicy policy(int max, int perTier) {
    return new TieredMergePolicy(
        new TieredMergePolicy.Settings(
            SEAL, max, perTier, Math.max(TieredMergePolicy.MAX_MERGE_AT_ONCE, perTier), 0.2));
  }

  /** A shard's sealed segments under simulation, and the points its seals and merges wrote. */
  private static final class Sim {
    final TieredMergePolicy policy;
    final List<Seg> segs = new ArrayList<>();
    long ingested;
    long written;
    long merges;

    Sim(TieredMergePolicy policy) {
      this.policy = policy;
    }

    void seal(int points) {
      segs.add(new Seg(points, points));
      ingested += points;
      written += points;
      settle(false);
    }

    /** Applies the policy's picks until it has none, checking each. */
    void settle(boolean force) {
      for (int guard = 0; guard < 10_000; guard++) {
        Pick p = policy.find(segs, force);
        if (p == null) {
          return;
        }
        check(p, force);
        long live = 0;
        for (int i : p.sources()) {
          live += segs.get(i).live();
        }
        List<Seg> next = new ArrayList<>();
        for (int i = 0; i < segs.size(); i++) {
          if (!p.sources().contains(i)) {
            next.add(segs.get(i));
          }
        }
        if (live > 0) {
          next.add(new Seg((int) live, (int) live));
        }
        segs.clear();
        segs.addAll(next);
        written += live;
        merges++;
      }
      throw new AssertionError("the policy never settled: " + segs);
    }

    private void check(Pick p, boolean force) {
      assertThat(new HashSet<>(p.sources())).hasSameSizeAs(p.sources());
      int max = policy.settings().maxSegmentPoints();
      if (p.kind() == Kind.DELETED) {
        assertThat(p.sources()).hasSize(1);
        Seg s = segs.get(p.sources().getFirst());
        assertThat(s.live()).isLessThan(s.size());
        return;
      }
      assertThat(p.sources())
          .hasSizeBetween(2, policy.settings().maxMergeAtOnce() + (force ? SEAL : 0));
      long live = 0;
      for (int i : p.sources()) {
        live += segs.get(i).live();
        if (!force) {
          assertThat(segs.get(i).live())
              .as("too big to merge")
              .isLessThan((int) Math.ceil(max / 2.0));
        }
      }
      assertThat(live).as("merged size above the maximum").isLessThanOrEqualTo(max);
    }

    long total() {
      long n = 0;
      for (Seg s : segs) {
        n += s.live();
      }
      return n;
    }
  }

  private static Seg raw(int points) {
    return new Seg(points, points, true);
  }

  @Test
  void rawSegmentsMergeWithTheGraphSegmentsNoLargerThanTheLargestRawOne() {
    TieredMergePolicy p = policy(20_000_000, 3);
    List<Seg> segs =
        List.of(
            new Seg(5_000_000, 5_000_000),
            new Seg(300_000, 300_000),
            raw(100_000),
            new Seg(100_000, 90_000),
            raw(50_000),
            raw(100_000));
    Pick pick = p.find(segs, false, TieredMergePolicy.Hold.NONE);
    assertThat(pick).isNotNull();
    assertThat(pick.kind()).isEqualTo(Kind.MERGE);
    // the raw segments largest first, then the graph segment below the largest raw one
    assertThat(pick.sources()).containsExactly(2, 5, 4, 3);
    // one raw segment alone is built alone
    assertThat(p.find(List.of(new Seg(5_000_000, 5_000_000), raw(10)), false).sources())
        .containsExactly(1);
    // no raw segment: the tiered policy, which merges nothing of two segments
    assertThat(p.find(List.of(new Seg(300_000, 300_000), new Seg(100_000, 100_000)), false))
        .isNull();
  }

  @Test
  void rawSegmentsNeverMergeAboveTheMaximum() {
    TieredMergePolicy p = policy(250_000, 3);
    List<Seg> segs = List.of(raw(100_000), raw(100_000), raw(100_000), new Seg(40_000, 40_000));
    Pick pick = p.find(segs, false, TieredMergePolicy.Hold.NONE);
    assertThat(pick.sources()).containsExactly(0, 1, 3);
  }

  @Test
  void rawSegmentsWaitWhileWritesComeUntilATenthOfTheMaximumAndForABulkLoadsEnd() {
    TieredMergePolicy p = policy(2_000_000, 3); // a tenth: 200,000
    List<Seg> small = List.of(raw(100_000), raw(99_999));
    assertThat(p.find(small, false, TieredMergePolicy.Hold.WRITES)).isNull();
    assertThat(p.find(small, false, TieredMergePolicy.Hold.NONE).sources()).containsExactly(0, 1);
    List<Seg> tenth = List.of(raw(100_000), raw(100_000));
    assertThat(p.find(tenth, false, TieredMergePolicy.Hold.WRITES).sources()).containsExactly(0, 1);
    List<Seg> bulk = List.of(raw(1_000_000), raw(900_000));
    assertThat(p.find(bulk, false, TieredMergePolicy.Hold.BULK)).isNull();
    assertThat(p.find(bulk, true, TieredMergePolicy.Hold.BULK).sources())
        .as("a forced compaction does not wait")
        .containsExactly(0, 1);
    // a waiting raw segment with many deletes is not rewritten alone: its merge drops them
    assertThat(
            p.find(List.of(new Seg(100_000, 10_000, true)), false, TieredMergePolicy.Hold.WRITES))
        .isNull();
  }

  /**
   * A load of 1M points sealed raw in ten segments while writes come, then quiet: one build of all
   * of them, so each point is written twice (its raw seal, its graph) and built once, where graph
   * seals and tiered merges build it at its seal and again per tier.
   */
  @Test
  void aLoadSealedRawIsBuiltOnceWhenItEnds() {
    TieredMergePolicy p = policy(20_000_000, 3);
    List<Seg> segs = new ArrayList<>();
    for (int i = 0; i < 10; i++) {
      segs.add(raw(SEAL));
      assertThat(p.find(segs, false, TieredMergePolicy.Hold.WRITES)).isNull();
    }
    Pick pick = p.find(segs, false, TieredMergePolicy.Hold.NONE);
    assertThat(pick.sources()).hasSize(10);
    // the graph-sealed load for comparison: builds per point
    Sim graphs = new Sim(p);
    for (int i = 0; i < 10; i++) {
      graphs.seal(SEAL);
    }
    System.out.println(
        "[flashvec] 1M in 100k seals: graph builds per point with graph seals "
            + (double) graphs.written / graphs.ingested
            + ", with raw seals 1.0");
    assertThat((double) graphs.written / graphs.ingested).isGreaterThan(1.0);
  }

  @Test
  void noMergeEverProducesMoreThanTheMaximum() throws Exception {
    TestSeeds.rounds(
        "TieredMergePolicyTest.noMergeEverProducesMoreThanTheMaximum",
        20,
        (round, seed) -> {
          Random r = new Random(seed);
          int max = SEAL + r.nextInt(20 * SEAL);
          Sim sim = new Sim(policy(max, 2 + r.nextInt(10)));
          for (int i = 0; i < 200; i++) {
            sim.seal(1 + r.nextInt(SEAL));
            if (r.nextInt(4) == 0 && !sim.segs.isEmpty()) {
              int k = r.nextInt(sim.segs.size());
              Seg s = sim.segs.get(k);
              sim.segs.set(k, new Seg(s.size(), s.live() - r.nextInt(s.live() + 1)));
              sim.settle(r.nextInt(10) == 0);
            }
          }
          for (Seg s : sim.segs) {
            assertThat(s.live()).isLessThanOrEqualTo(Math.max(max, SEAL));
          }
        });
  }

  @Test
  void tenMillionPointsInSealsOfAHundredThousandEndInFewSegmentsWrittenAtMostThreeTimes()
      throws Exception {
    TestSeeds.rounds(
        "TieredMergePolicyTest.tenMillionPointsEndInFewSegments",
        3,
        (round, seed) -> {
          Random r = new Random(seed);
          for (int max : new int[] {20_000_000, 1_000_000}) {
            Sim sim = new Sim(policy(max, 10));
            while (sim.ingested < 10_000_000) {
              // flushes and restarts seal early now and then
              sim.seal(r.nextInt(8) == 0 ? 1 + r.nextInt(SEAL) : SEAL);
            }
            // tiers below the maximum: 100k, 1M, 10M; ten a tier, plus the full segments
            int tiers = (int) Math.ceil(Math.log((double) max / SEAL) / Math.log(10));
            long full = sim.ingested / max;
            System.out.printf(
                java.util.Locale.ROOT,
                "[flashvec] max=%d ingested=%d segments=%d merges=%d writeAmplification=%.2f%n",
                max,
                sim.ingested,
                sim.segs.size(),
                sim.merges,
                (double) sim.written / sim.ingested);
            assertThat(sim.total()).isEqualTo(sim.ingested);
            assertThat((long) sim.segs.size()).isLessThanOrEqualTo(full + (long) tiers * 10 + 1);
            assertThat((double) sim.written / sim.ingested).isLessThanOrEqualTo(3.0);
          }
        });
  }

  @Test
  void atTheDefaultThreePerTierTenMillionPointsEndInAFewLargeSegments() throws Exception {
    TestSeeds.rounds(
        "TieredMergePolicyTest.atTheDefaultThreePerTier",
        3,
        (round, seed) -> {
          Random r = new Random(seed);
          Sim sim = new Sim(policy(20_000_000, 3));
          int most = 0;
          while (sim.ingested < 10_000_000) {
            sim.seal(r.nextInt(8) == 0 ? 1 + r.nextInt(SEAL) : SEAL);
            if (sim.ingested >= 1_000_000) {
              most = Math.max(most, sim.segs.size());
            }
          }
          int largest = 0;
          for (Seg s : sim.segs) {
            largest = Math.max(largest, s.live());
          }
          System.out.printf(
              java.util.Locale.ROOT,
              "[flashvec] perTier=3 ingested=%d segments=%d (most past 1M: %d) largest=%d"
                  + " writeAmplification=%.2f%n",
              sim.ingested,
              sim.segs.size(),
              most,
              largest,
              (double) sim.written / sim.ingested);
          assertThat(sim.total()).isEqualTo(sim.ingested);
          // about three a tier, against 13-20 segments at ten a tier
          assertThat(sim.segs.size()).isLessThanOrEqualTo(12);
          assertThat(most).isLessThanOrEqualTo(15);
          assertThat(largest).isGreaterThanOrEqualTo(2_000_000);
          assertThat((double) sim.written / sim.ingested).isLessThanOrEqualTo(3.5);
        });
  }

  @Test
  void deletedPointsAreReclaimed() throws Exception {
    TestSeeds.rounds(
        "TieredMergePolicyTest.deletedPointsAreReclaimed",
        5,
        (round, seed) -> {
          Random r = new Random(seed);
          Sim sim = new Sim(policy(1_000_000, 10));
          for (int i = 0; i < 40; i++) {
            sim.seal(SEAL);
          }
          long deleted = 0;
          for (int k = 0; k < sim.segs.size(); k++) {
            Seg s = sim.segs.get(k);
            int dead = r.nextInt(3) == 0 ? s.live() : r.nextInt(s.live() / 2 + 1);
            deleted += dead;
            sim.segs.set(k, new Seg(s.size(), s.live() - dead));
          }
          sim.settle(false);
          assertThat(sim.total()).isEqualTo(sim.ingested - deleted);
          for (Seg s : sim.segs) {
            assertThat(s.live()).as("an empty segment is dropped").isPositive();
            assertThat(s.size() - s.live()).isLessThan((int) Math.ceil(0.2 * s.size()));
          }
        });
  }

  @Test
  void smallSegmentsThatTogetherFitOneSealAreMerged() {
    // 1437 + 1310 + 298 points: fewer than one tier's worth, yet three segments
    Sim sim = new Sim(policy(1_000_000, 10));
    List<Seg> segs =
        List.of(new Seg(14_370, 14_370), new Seg(13_100, 13_100), new Seg(2_980, 2_980));
    Pick p = sim.policy.find(segs, false);
    assertThat(p.kind()).isEqualTo(Kind.MERGE);
    assertThat(p.sources()).containsExactlyInAnyOrder(0, 1, 2);
    // full-size segments up to the tier's count are left alone
    List<Seg> full = new ArrayList<>();
    for (int i = 0; i < 10; i++) {
      full.add(new Seg(SEAL, SEAL));
    }
    assertThat(sim.policy.find(full, false)).isNull();
    assertThat(sim.policy.find(List.of(), false)).isNull();
  }

  @Test
  void aForcedCompactionRewritesEveryDeletedPointAndMergesWhatFits() throws Exception {
    TestSeeds.rounds(
        "TieredMergePolicyTest.aForcedCompaction",
        5,
        (round, seed) -> {
          Random r = new Random(seed);
          int max = 1_000_000;
          Sim sim = new Sim(policy(max, 10));
          for (int i = 0; i < 25; i++) {
            sim.seal(1 + r.nextInt(SEAL));
          }
          for (int k = 0; k < sim.segs.size(); k++) {
            Seg s = sim.segs.get(k);
            sim.segs.set(k, new Seg(s.size(), s.live() - r.nextInt(s.live() / 10 + 1)));
          }
          long live = sim.total();
          sim.settle(true);
          assertThat(sim.total()).isEqualTo(live);
          List<Integer> sizes = new ArrayList<>();
          for (Seg s : sim.segs) {
            assertThat(s.live())
                .as("no deleted point after a forced compaction")
                .isEqualTo(s.size());
            sizes.add(s.live());
          }
          sizes.sort(null);
          if (sizes.size() >= 2) {
            assertThat((long) sizes.get(0) + sizes.get(1)).isGreaterThan(max);
          }
          // two small segments always merge when forced
          assertThat(sim.policy.find(List.of(new Seg(1900, 1900), new Seg(1950, 1950)), true))
              .isEqualTo(new Pick(Kind.MERGE, List.of(0, 1)));
        });
  }

  @Test
  void aSegmentTargetMergesTheSmallestWhileThereAreMoreAndNothingAtIt() {
    TieredMergePolicy p = policy(1_000_000, 3);
    List<Seg> three = List.of(new Seg(500, 500), new Seg(300, 300), new Seg(400, 400));
    // a target of 2 merges the two smallest
    assertThat(p.find(three, false, TieredMergePolicy.Hold.NONE, 2))
        .isEqualTo(new Pick(Kind.MERGE, List.of(1, 2)));
    // a target of 1 merges all three at once; at or above the count, nothing
    assertThat(p.find(three, false, TieredMergePolicy.Hold.NONE, 1))
        .isEqualTo(new Pick(Kind.MERGE, List.of(1, 2, 0)));
    assertThat(p.find(three, false, TieredMergePolicy.Hold.NONE, 3)).isNull();
    // many segments the tiers would merge stay apart under a larger target
    List<Seg> many = new ArrayList<>();
    for (int i = 0; i < 12; i++) {
      many.add(new Seg(SEAL, SEAL));
    }
    assertThat(p.find(many, false)).isNotNull();
    assertThat(p.find(many, false, TieredMergePolicy.Hold.NONE, 12)).isNull();
    // a segment too big to merge counts towards the target but never joins a merge
    List<Seg> big = List.of(new Seg(600_000, 600_000), new Seg(10, 10), new Seg(20, 20));
    assertThat(p.find(big, false, TieredMergePolicy.Hold.NONE, 1))
        .isEqualTo(new Pick(Kind.MERGE, List.of(1, 2)));
    // raw segments are built by merges that leave the target's count, alone at it
    List<Seg> raws = List.of(new Seg(30, 30, true), new Seg(20, 20, true), new Seg(10, 10, true));
    assertThat(p.find(raws, false, TieredMergePolicy.Hold.NONE, 2))
        .isEqualTo(new Pick(Kind.MERGE, List.of(0, 1)));
    assertThat(p.find(raws, false, TieredMergePolicy.Hold.NONE, 3))
        .isEqualTo(new Pick(Kind.MERGE, List.of(0)));
    assertThat(p.find(raws, false, TieredMergePolicy.Hold.NONE, 0))
        .isEqualTo(new Pick(Kind.MERGE, List.of(0, 1, 2)));
    // deleted-point rewrites come first, as without a target
    List<Seg> deleted = List.of(new Seg(100, 50), new Seg(10, 10), new Seg(20, 20));
    assertThat(p.find(deleted, false, TieredMergePolicy.Hold.NONE, 1))
        .isEqualTo(new Pick(Kind.DELETED, List.of(0)));
  }
}
