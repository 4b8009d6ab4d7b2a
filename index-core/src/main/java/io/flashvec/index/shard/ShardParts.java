package io.flashvec.index.shard;

import io.flashvec.index.Distance;
import io.flashvec.index.IndexParams;
import io.flashvec.index.payload.PayloadIndexes;
import io.flashvec.index.segment.SegmentFormat;
import java.nio.file.Path;
import java.util.concurrent.locks.ReentrantLock;

/**
 * What the stages of one shard share: its directory and settings, and the state they hand each
 * other — the segment set, where each id lives, the payload indexes, the write lock, the background
 * jobs, the free-space guard and the record of optimizations. {@link Shard} creates it once and
 * gives it to each stage, which keeps the parts it uses.
 */
record ShardParts(
    Path dir,
    Shard.Options options,
    int dimension,
    Distance distance,
    IndexParams index,
    SegmentFormat format,
    SpaceGuard space,
    ReentrantLock writeLock,
    SegmentSet segments,
    IdLocations locations,
    PayloadIndexes payloadIndexes,
    BackgroundJobs jobs,
    OptimizationTracker tracker) {}
