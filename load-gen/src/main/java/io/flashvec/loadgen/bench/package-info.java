/**
 * The benchmark drivers: {@link io.flashvec.loadgen.bench.IngestBench}, {@link
 * io.flashvec.loadgen.bench.SearchBench} (closed-loop concurrency and parameter sweeps) and {@link
 * io.flashvec.loadgen.bench.MixedBench} (queries with and without an insert stream), plus their
 * arithmetic (recall@k, latency percentiles, the warm-up's stop rule {@link
 * io.flashvec.loadgen.bench.WarmUp}).
 */
package io.flashvec.loadgen.bench;
