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
}
