/**
 * FlashVec load generator: a CLI ({@link io.flashvec.loadgen.LoadGen}) that generates and reads
 * datasets, ingests them into a server over its public REST API, runs concurrency and
 * search-parameter sweeps, measures recall, latency percentiles and server-side I/O, and renders
 * JSON and HTML reports. {@code docs/benchmarks/} describes how the benchmarks use it.
 */
package io.flashvec.loadgen;
