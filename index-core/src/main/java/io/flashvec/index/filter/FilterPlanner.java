package io.flashvec.index.filter;

/**
 * Chooses how a filtered search runs on a graph segment, from the exact number of points the filter
 * accepts there (known for free: building the accepted bitset evaluates every point anyway).
 *
 * <h2>Cost model</h2>
 *
 * An unfiltered beam search with search list {@code L} visits about {@code 8·L} nodes (README: 789
 * at L=100 on 100k×768). With a filter accepting a fraction {@code s} of the points, jvector keeps
 * expanding until it holds {@code L} accepted candidates, so it visits about {@code 8·L / s} nodes.
 * Scoring the {@code m = s·N} accepted points exactly costs {@code m} full-precision distances,
 * each about twice a PQ visit. Exact is cheaper when {@code 2·m < 8·L·N / m}, i.e. {@code m <
 * sqrt(4·L·N)}: 6,300 points (6%) of a 100k segment at L=100, 20,000 (2%) of a 1M segment. Below
 * {@link #MIN_EXACT} accepted points the scan is always exact (a few hundred distances cost less
 * than one graph search). Exact results are also exactly right, which is what very selective
 * filters need: a graph beam that must walk past 99.9% rejected nodes loses recall first.
 *
 * <p>Above the threshold the graph search gets a wider beam, {@code L / sqrt(s)} capped at {@link
 * #MAX_SEARCH_LIST_FACTOR}·L, for a margin: the accepted candidates a filtered beam finds are
 * spread over a larger region. {@code FilteredSearchTest} (20k×32, L=64, uniform filter): at 50%
 * recall@10 0.978 without widening, 0.993 with it (1,187 → 1,504 nodes visited per query); at 10% a
 * forced graph search reaches 1.0 either way but visits 3,100–6,500 nodes where the exact plan
 * computes 2,000 distances; at 1% it visits 13k–20k of the 20k nodes where exact computes 200.
 */
public final class FilterPlanner {

  /** Always scan exactly when at most this many points are accepted. */
  public static final int MIN_EXACT = 1_000;

  /** Cap on the widening of the search list for filtered graph searches. */
  public static final int MAX_SEARCH_LIST_FACTOR = 4;

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
    return (int)
        Math.min((long) searchList * MAX_SEARCH_LIST_FACTOR, Math.ceil(searchList / Math.sqrt(s)));
  }
}
