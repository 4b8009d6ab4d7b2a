package io.flashvec.api.collections;

import io.flashvec.index.IndexingState;
import io.flashvec.index.collection.Collection;

/**
 * The {@code status} of {@code GET /collections/{name}}, as Qdrant's: {@code green} when every
 * point is in an index (a sealed segment's graph, a growing segment's live graph, or the exact scan
 * of a {@code flat} collection or of a growing segment still below the live graph's start) and no
 * build, compaction or merge is running, queued or planned; {@code yellow} while the collection is
 * catching up (searches scan the points outside an index exactly meanwhile); {@code grey} while
 * index builds are deferred by {@code indexing_threshold: 0} (optimisations pending but not
 * triggered); {@code red} when an index build failed (its segment keeps being searched exactly from
 * memory) or a shard's WAL failed (writes are refused until a restart).
 */
public final class CollectionStatus {

  private CollectionStatus() {}

  public static String of(Collection.Info info) {
    IndexingState st = info.indexingState();
    if (info.buildFailure() != null) {
      return "red";
    }
    if (info.indexing() || info.compacting() || st.buildsRunning() > 0) {
      return "yellow"; // running work, deferred or not
    }
    if (info.deferredBuilds() > 0) {
      return "grey";
    }
    return st.caughtUp() ? "green" : "yellow";
  }
}
