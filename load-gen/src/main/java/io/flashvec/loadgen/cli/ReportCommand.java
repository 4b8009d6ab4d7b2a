package io.flashvec.loadgen.cli;

import io.flashvec.loadgen.report.BenchmarkResult;
import io.flashvec.loadgen.report.HtmlReport;
import java.io.PrintWriter;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.Parameters;
import picocli.CommandLine.Spec;

/** {@code report}: re-renders one or more JSON results as one HTML report. */
@Command(
    name = "report",
    mixinStandardHelpOptions = true,
    description =
        "Render JSON results (from search or mixed) as a self-contained HTML report with charts"
            + " (recall vs QPS, latency percentiles vs concurrency, bytes/pages read per query);"
            + " several results are overlaid.")
public final class ReportCommand implements Callable<Integer> {
  @Spec CommandSpec spec;

  @Parameters(arity = "1..*", paramLabel = "RESULT.json", description = "JSON result files.")
  List<Path> results;

  @Option(names = "--html", required = true, description = "HTML file to write.")
  Path html;

  @Override
  public Integer call() {
    PrintWriter o = spec.commandLine().getOut();
    List<HtmlReport.Named> named = new ArrayList<>();
    for (Path p : results) {
      named.add(new HtmlReport.Named(p.getFileName().toString(), BenchmarkResult.read(p)));
    }
    HtmlReport.write(html, named);
    o.printf(Locale.ROOT, "wrote %s (%d results)%n", html, named.size());
    o.flush();
    return 0;
  }
}
