package io.flashvec.index;

import java.util.Locale;

/** Byte counts as people read them in messages and logs. */
public final class ByteSize {

  private ByteSize() {}

  /** 1536 -> "1.5 KiB", 805306368 -> "768 MiB". */
  public static String human(long bytes) {
    if (bytes < 1024) {
      return bytes + " B";
    }
    String[] units = {"KiB", "MiB", "GiB", "TiB", "PiB", "EiB"};
    double v = bytes;
    int u = -1;
    while (v >= 1024 && u < units.length - 1) {
      v /= 1024;
      u++;
    }
    return v == Math.rint(v)
        ? String.format(Locale.ROOT, "%d %s", (long) v, units[u])
        : String.format(Locale.ROOT, "%.1f %s", v, units[u]);
  }
}
