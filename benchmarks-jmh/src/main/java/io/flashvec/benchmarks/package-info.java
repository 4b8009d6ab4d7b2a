/**
 * JMH micro-benchmarks of FlashVec's kernels: distance functions, WAL appends, PQ scoring and graph
 * search on a built DiskANN segment. Whole-system runs (recall vs QPS over REST) belong to {@code
 * load-gen}, not here.
 *
 * <p>Every benchmark extends {@link io.flashvec.benchmarks.AbstractBenchmark}, which holds the
 * defaults (one fork with the JVM flags jvector needs, warm-up and measurement iterations). Data is
 * synthetic and seeded ({@link io.flashvec.benchmarks.SyntheticVectors}), so runs are comparable.
 */
package io.flashvec.benchmarks;
