package io.flashvec.storage;

import java.util.Locale;

/** When the write-ahead log makes appended records durable. */
public enum FsyncPolicy {
  /** Every {@code wait=true} write is fsynced (group commit) before it is acknowledged. */
  ALWAYS,
  /** A background flusher fsyncs every interval; a crash can lose up to one interval of writes. */
  INTERVAL,
  /** Never fsync explicitly; the OS writes back when it likes (bulk loads only). */
  NEVER;

  /** Parses {@code always}, {@code interval} or {@code never}, case-insensitively. */
  public static FsyncPolicy parse(String value) {
    if (value != null) {
      for (FsyncPolicy p : values()) {
        if (p.name().equalsIgnoreCase(value.trim())) {
          return p;
        }
      }
    }
    throw new IllegalArgumentException(
        "unknown fsync policy [value=" + value + ", allowed=always|interval|never]");
  }

  /** The lower-case name used in configuration. */
  public String configName() {
    return name().toLowerCase(Locale.ROOT);
  }
}
