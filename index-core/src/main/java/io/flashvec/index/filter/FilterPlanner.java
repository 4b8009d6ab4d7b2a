package io.flashvec.index.filter;

/**
 * Chooses how a filtered search runs on a graph segment, from the exact number of points the filter
 * accepts there (known for free: building the accepted bitset evaluates every point anyway).
 *
 * <h2>Cost model</h2>
 *
 * An unfiltered beam search with search list {@code L} visits about {@code 8·L} nodes (README: 789
 * at L=100 on 100k×768). With a filter accepting a fraction {@code s} of the points, a beam that
 * keeps {@code L} accepted candidates visits about {@code 8·L / s} nodes. Scoring the {@code m =
 * s·N} accepted points exactly costs {@code m} full-precision distances, each about twice a PQ
 * visit. Exact is cheaper when {@code 2·m < 8·L·N / m}, i.e. {@code m < sqrt(4·L·N)}: 6,300 points
 * (6%) of a 100k segment at L=100, 20,000 (2%) of a 1M segment. Below {@link #MIN_EXACT} accepted
 * points the scan is always exact (a few hundred distances cost less than one graph search). Exact
 * results are also exactly right, which is what very selective filters need: a graph beam that must
 * walk past 99.9% rejected nodes loses recall first.
 *
 * <p>Above the threshold the graph search gets a wider candidate list, {@code L / s} capped at
 * {@link #MAX_SEARCH_LIST_FACTOR}·L: FlashVec's beam search (ADR 0007) keeps accepted and rejected
 * nodes alike in its list of {@code L}, so it holds about {@code s·L} accepted candidates; widening
 * by {@code 1/s} keeps about {@code L} of them, as in an unfiltered search. {@code
 * FilteredSearchTest} (20k×32, L=64, uniform filter): at 50% recall@10 0.94 with the list widened
 * by {@code 1/sqrt(s)} (the rule for jvector's searcher, which counted accepted nodes only), 0.988
 * with {@code 1/s} (1,181 nodes visited per query); a forced graph search at 10% reaches 1.0
 * visiting 3,200 nodes where the exact plan computes 1,900 distances.
 */
public final class FilterPlanner {

  /** Always scan exactly when at most this many points are accepted. */
  public static final int MIN_EXACT = 1_000;

  /** Cap on the widening of the search list for filtered graph searches. */
  public static final int MAX_SEARCH_LIST_FACTOR = 16;

  private FilterPlanner() {}

  /** Whether to score the {@code accepted} points of a {@code size}-point segment exactly. */
  public static boolean exact(int accepted, int size, int searchList) {
    if (accepted <= MIN_EXACT) {
      return true;
    }
    return (double) accepted * accepted < 4.0 * searchList * size;
  }

  /** The search list for a filtered graph search accepting {@code accepted} of {@code size}. */
  public static int searchList(int searchList, int accepted, int size) {
    if (accepted >= size || accepted <= 0) {
      return searchList;
    }
    double s = (double) accepted / size;
    return (int) Math.min((long) searchList * MAX_SEARCH_LIST_FACTOR, Math.ceil(searchList / s));
  }
}
