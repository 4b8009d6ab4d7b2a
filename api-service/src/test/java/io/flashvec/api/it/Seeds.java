package io.flashvec.api.it;

/**
 * The master seed of an integration test run: {@code -Dtests.seed=<hex>} to reproduce, else derived
 * from the clock once and printed.
 */
final class Seeds {

  private Seeds() {}

  static long master(String test) {
    String s = System.getProperty("tests.seed");
    long seed = s != null && !s.isBlank() ? Long.parseUnsignedLong(s, 16) : System.nanoTime();
    System.out.println("[flashvec] " + test + " tests.seed=" + Long.toHexString(seed));
    return seed;
  }

  /** One round of a seeded test. */
  interface Round {
    void run(int round, long seed) throws Exception;
  }

  /** Runs {@code rounds} rounds, each with its own seed derived from the printed master seed. */
  static void rounds(String test, int rounds, Round body) throws Exception {
    java.util.Random seeds = new java.util.Random(master(test));
    for (int round = 0; round < rounds; round++) {
      long seed = seeds.nextLong();
      System.out.println(
          "[flashvec] " + test + " round " + round + " seed=" + Long.toHexString(seed));
      body.run(round, seed);
    }
  }
}
