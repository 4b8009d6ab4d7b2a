package io.flashvec.index.segment;

/**
 * How much of a query's search a segment runs when it holds only a share of the points the query
 * covers: a shard searches each of its segments in turn and keeps the best of all, so a segment
 * needs only about the candidates of the global list that fall in it, not a full list of its own.
 * As Lucene sizes a segment's kNN search by its share of the index ({@code
 * AbstractKnnVectorQuery.perLeafTopKCalculation}).
 *
 * <p>Only for unfiltered searches (a filter may select mostly one segment's points) and not for raw
 * dot products, which walk an L2-built graph less surely (ADR 0011).
 */
public final class SearchShare {

  /**
   * The smallest list {@link #searchList} gives a growing segment's graph search (unless the list
   * is less): its candidates are ranked by int8 distances and its best are rescored exactly.
   */
  public static final int MIN_LIST = 20;

  /**
   * The smallest share-sized list of a sealed segment's graph search (unless the list is less). Its
   * candidates are ranked by PQ estimates, which a short list trusts too far: with 8 sealed
   * segments of 20,000 clustered 64-d points, lists of 20 per segment lost 0.6 points of recall@10
   * at {@code search_list} 100 and 32 lost 0.2, while 48 lost none and still scored 58% fewer
   * distances ({@code SharedSearchListTest}).
   */
  public static final int MIN_SEALED_LIST = 48;

  private SearchShare() {}

  /**
   * The search list for a segment's graph when it holds {@code share} of the points a query
   * searches (the rest are in other segments): about the number of the best {@code list} candidates
   * that fall in it, {@code list · share}, plus three standard deviations of that count, {@code 3
   * √(list · share · (1 − share))}; at least {@code max(k, }{@value #MIN_LIST}{@code )}, so a
   * search for a point just written still walks a real list, and never more than {@code list}. A
   * floor of 20 rather than 32 costs no measurable recall on fresh data and makes a growing
   * segment's search about a tenth cheaper (ADR 0011). A share of 1 or more, or not a number, gives
   * {@code list}.
   */
  public static int searchList(int list, int k, double share) {
    return searchList(list, k, share, MIN_LIST);
  }

  /** As {@link #searchList(int, int, double)}, with at least {@code max(k, floor)}. */
  public static int searchList(int list, int k, double share, int floor) {
    if (!(share < 1.0)) {
      return list;
    }
    return Math.min(list, Math.max(inShare(list, share), Math.max(k, floor)));
  }

  /**
   * How many of a query's best {@code k} a segment with {@code share} of the points is asked for:
   * the expected count {@code k · share} plus three standard deviations, at least 1 and at most
   * {@code k}. Pays where a segment rescores its results separately (a growing segment's graph
   * rescores its best {@code 4k+20} by int8 estimate exactly at the same recall, ADR 0011).
   */
  public static int k(int k, double share) {
    if (!(share < 1.0) || k <= 1) {
      return k;
    }
    return Math.min(k, Math.max(1, inShare(k, share)));
  }

  /**
   * How many of {@code n} best candidates fall in a segment holding {@code share} (0..1) of the
   * points, with margin: the expected count {@code n · share} plus three standard deviations,
   * {@code 3 √(n · share · (1 − share))}, rounded up.
   */
  private static int inShare(int n, double share) {
    double p = Math.max(0.0, share);
    double expected = n * p;
    return (int) Math.ceil(expected + 3.0 * Math.sqrt(expected * (1.0 - p)));
  }
}
