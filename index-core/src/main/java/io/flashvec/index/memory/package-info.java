/**
 * The server's memory budget: {@link io.flashvec.index.memory.MemoryPlan} slices one number into
 * the JVM's native memory, the heap (resident index, growing segments, builds, request work), a
 * node cache and the page cache; {@link io.flashvec.index.memory.MemoryLimits} is what shards see
 * of it (how large a growing segment and a merge may grow).
 */
package io.flashvec.index.memory;
