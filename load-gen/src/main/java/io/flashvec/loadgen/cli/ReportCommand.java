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
    description = {
      "Render JSON results (from search and ingest) as one self-contained HTML report: a headline"
          + " (best QPS at recall@k >= 0.95 and >= 0.99 per run and concurrency, with P99),"
          + " warnings about suspect figures, recall vs QPS as a Pareto frontier on a log QPS"
          + " axis, QPS and latency vs concurrency, server I/O per query, ingest throughput, and"
          + " each run's machine and settings.",
      "Several results (FlashVec, pgvector, any Qdrant-compatible server; each records its"
          + " target) are drawn together, one colour per run."
    })
public final class ReportCommand implements Callable<Integer> {
  @Spec CommandSpec spec;

  @Parameters(
      arity = "1..*",
      paramLabel = "[NAME=]RESULT.json",
      description =
          "JSON result files, each optionally named as the report shows it (default: its file"
              + " name), e.g. qdrant=runs/qdrant.json.")
  List<String> results;

  @Option(names = "--html", required = true, description = "HTML file to write.")
  Path html;

  @Override
  public Integer call() {
    PrintWriter o = spec.commandLine().getOut();
    List<HtmlReport.Named> named = new ArrayList<>();
    for (String r : results) {
      Path p = Path.of(r);
      String name = p.getFileName().toString();
      int eq = r.indexOf('=');
      if (eq > 0 && !java.nio.file.Files.exists(p)) {
        name = r.substring(0, eq);
        p = Path.of(r.substring(eq + 1));
      }
      if (!java.nio.file.Files.isRegularFile(p)) {
        throw new picocli.CommandLine.ParameterException(
            spec.commandLine(), "no such result file [file=" + p + "]");
      }
      named.add(new HtmlReport.Named(name, BenchmarkResult.read(p)));
    }
    HtmlReport.write(html, named);
    o.printf(Locale.ROOT, "wrote %s (%d results)%n", html, named.size());
    o.flush();
    return 0;
  }
}
