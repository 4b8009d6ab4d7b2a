/**
 * The picocli subcommands of {@link io.flashvec.loadgen.LoadGen}: {@code generate}, {@code
 * groundtruth}, {@code ingest}, {@code search}, {@code mixed} and {@code report}. Each is a thin
 * layer that parses options, loads the dataset, opens a client and calls the benchmark drivers.
 */
package io.flashvec.loadgen.cli;
