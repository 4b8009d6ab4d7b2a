package io.flashvec.loadgen.cli;

import picocli.CommandLine.Option;

/** How many results each search asks for; a picocli mixin. */
public final class TopKOption {
  @Option(names = "--k", defaultValue = "10", description = "Top-k (default: ${DEFAULT-VALUE}).")
  int k;
}
