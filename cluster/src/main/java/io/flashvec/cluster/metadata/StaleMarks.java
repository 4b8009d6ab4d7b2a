package io.flashvec.cluster.metadata;

import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;

/**
 * A process's view of the replicas marked stale in etcd ({@code "<collection>/<shard>/<node>"}),
 * each with the etcd revision that put its mark. News of a mark arrives on several paths — the
 * prefix watch, a full reload, the primary's own write, and a write reply that names the replicas
 * which lack the write — and in no fixed order, so every change carries its revision and an older
 * change never undoes a newer one: a deletion at revision {@code r} removes only a mark put before
 * {@code r}, and a mark put before a known deletion is not brought back; a snapshot read at
 * revision {@code r} keeps marks learnt from revisions after it.
 *
 * <p>Thread-safe; each change is atomic per key (the latest deletion revision of each key is
 * remembered: a few bytes per replica that was ever resynced).
 */
final class StaleMarks {

  private final Map<String, Long> marks = new ConcurrentHashMap<>();
  private final Map<String, Long> deletions = new ConcurrentHashMap<>();

  /** Whether {@code key} is marked. */
  public boolean contains(String key) {
    return marks.containsKey(key);
  }

  /** The revision of {@code key}'s mark, or 0 when it is not marked. */
  public long revision(String key) {
    Long r = marks.get(key);
    return r == null ? 0 : r;
  }

  /**
   * A mark put at {@code revision} (kept if a later put is known already; ignored if a later
   * deletion is).
   */
  public void put(String key, long revision) {
    marks.compute(
        key,
        (k, put) -> {
          if (deletions.getOrDefault(k, 0L) > revision) {
            return put;
          }
          return put == null ? revision : Math.max(put, revision);
        });
  }

  /** A mark deleted at {@code revision}: removed unless it was put again at or after it. */
  public void delete(String key, long revision) {
    marks.compute(
        key,
        (k, put) -> {
          deletions.merge(k, revision, Math::max);
          return put != null && put >= revision ? put : null;
        });
  }

  /**
   * Replaces the marks under {@code prefix} (all of them for {@code ""}) with {@code snapshot}, the
   * marks etcd held there at {@code revision}; marks put after {@code revision} stay.
   */
  public void replace(String prefix, Map<String, Long> snapshot, long revision) {
    // puts first: a mark in both must not vanish for a moment
    snapshot.forEach(this::put);
    marks
        .entrySet()
        .removeIf(
            e ->
                e.getKey().startsWith(prefix)
                    && !snapshot.containsKey(e.getKey())
                    && e.getValue() <= revision);
  }

  @Override
  public String toString() {
    return marks.toString();
  }
}
