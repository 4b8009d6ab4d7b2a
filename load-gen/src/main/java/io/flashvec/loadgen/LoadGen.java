package io.flashvec.loadgen;

import io.flashvec.loadgen.cli.GenerateCommand;
import io.flashvec.loadgen.cli.GroundTruthCommand;
import io.flashvec.loadgen.cli.IngestCommand;
import io.flashvec.loadgen.cli.MixedCommand;
import io.flashvec.loadgen.cli.ReportCommand;
import io.flashvec.loadgen.cli.SearchCommand;
import io.flashvec.loadgen.cli.SoakCommand;
import picocli.CommandLine;
import picocli.CommandLine.Command;

/**
 * Entry point of the load generator CLI ({@code ./flashvec loadgen <command>}): {@code generate},
 * {@code groundtruth}, {@code ingest}, {@code search}, {@code mixed}, {@code soak}, {@code report};
 * {@code --help} on each. A typical session:
 *
 * <pre>
 * loadgen generate --out data/syn-96-100k --n 100000 --dim 96 --normalize --seed 96
 * loadgen ingest --url http://127.0.0.1:8080 --collection syn --dataset data/syn-96-100k \
 *     --index diskann --batch 500 --clients 2
 * loadgen search --url http://127.0.0.1:8080 --collection syn --dataset data/syn-96-100k \
 *     --concurrency 1,2,4,8 --duration 10s --search-list 20,40,80 --out syn.json --html syn.html
 * loadgen mixed --url http://127.0.0.1:8080 --collection syn --dataset data/syn-96-100k \
 *     --concurrency 4 --duration 30s --insert-rate 1000 --out mixed.json
 * loadgen soak --url http://127.0.0.1:8080 --collection soak --duration 4h --progress soak.csv
 * loadgen report syn.json previous.json --html compare.html
 * </pre>
 *
 * Exit status: 0 on success, 1 when the run itself failed (every query or batch failed), 2 on bad
 * options or an error (message on stderr; {@code LOADGEN_DEBUG=1} prints the stack trace).
 */
@Command(
    name = "loadgen",
    mixinStandardHelpOptions = true,
    version = "FlashVec load-gen 0.1.0",
    description = "FlashVec load generator and benchmark reports (talks to the server over REST).",
    subcommands = {
      GenerateCommand.class,
      GroundTruthCommand.class,
      IngestCommand.class,
      SearchCommand.class,
      MixedCommand.class,
      SoakCommand.class,
      ReportCommand.class,
      CommandLine.HelpCommand.class
    })
public final class LoadGen implements Runnable {
  @CommandLine.Spec CommandLine.Model.CommandSpec spec;

  /** Runs the CLI and exits with its status. */
  public static void main(String[] args) {
    System.exit(commandLine().execute(args));
  }

  /** The configured command line (for tests and embedding). */
  public static CommandLine commandLine() {
    CommandLine cl = new CommandLine(new LoadGen());
    cl.setExecutionExceptionHandler(
        (ex, cmd, parsed) -> {
          cmd.getErr().println("loadgen " + cmd.getCommandName() + ": " + ex.getMessage());
          if (System.getenv("LOADGEN_DEBUG") != null) {
            ex.printStackTrace(cmd.getErr());
          }
          return 2;
        });
    return cl;
  }

  @Override
  public void run() {
    spec.commandLine().usage(spec.commandLine().getOut());
  }
}
