package io.flashvec.index.shard;

import io.flashvec.index.Distance;
import io.flashvec.index.IndexParams;
import io.flashvec.index.diskann.PqTrainer;
import io.flashvec.index.memory.MemoryLimits;
import io.flashvec.index.payload.PayloadIndexes;
import io.flashvec.index.segment.SegmentFormat;
import java.nio.file.Path;
import java.util.concurrent.locks.ReentrantLock;

/**
 * What the stages of one shard share: its directory and settings, and the state they hand each
 * other — the segment set, where each id lives, the payload indexes, the write lock, the background
 * jobs, the free-space guard and the record of optimizations. {@link Shard} creates it once and
 * gives it to each stage, which keeps the parts it uses. The index parameters ({@link #index})
 * change when a collection update sets the primary vector's {@code m} or {@code ef_construct}.
 */
record ShardParts(
    Path dir,
    Shard.Options options,
    int dimension,
    Distance distance,
    java.util.concurrent.atomic.AtomicReference<IndexParams> indexRef,
    SegmentFormat format,
    SpaceGuard space,
    ReentrantLock writeLock,
    SegmentSet segments,
    IdLocations locations,
    PayloadIndexes payloadIndexes,
    BackgroundJobs jobs,
    OptimizationTracker tracker) {

  /**
   * The index parameters of a segment of {@code points} points written now: the collection's, with
   * a PQ code size from the memory budget ({@link MemoryLimits#pqBytes}) when the collection sets
   * none and a budget is set. Builds of any kind use it, so a merge re-encodes its points at the
   * size the points held then allow.
   */
  IndexParams writeParams(long points) {
    IndexParams index = index();
    MemoryLimits memory = options.memory();
    if (memory == null || index.pqSubspaces() > 0 || dimension == 0) {
      return index;
    }
    int preferred = PqTrainer.defaultSubspaces(dimension);
    int bytes = memory.pqBytes(preferred, PqTrainer.minimumSubspaces(dimension), points);
    if (bytes == preferred) {
      return index;
    }
    return new IndexParams(
        index.type(), index.maxDegree(), index.buildSearchList(), index.alpha(), bytes);
  }

  /**
   * The PQ code size of a segment recoded while writes have stopped ({@link
   * MemoryLimits#idlePqBytes}): larger than {@link #writeParams}' when the room kept for arriving
   * points is not needed. {@code 0} without a budget, or when the collection sets the code size.
   */
  int idleCodeBytes() {
    MemoryLimits memory = options.memory();
    if (memory == null || index().pqSubspaces() > 0 || dimension == 0) {
      return 0;
    }
    return memory.idlePqBytes(
        PqTrainer.defaultSubspaces(dimension), PqTrainer.minimumSubspaces(dimension));
  }

  /** The collection's index parameters now. */
  IndexParams index() {
    return indexRef.get();
  }
}
