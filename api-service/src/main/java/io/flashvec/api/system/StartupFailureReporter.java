package io.flashvec.api.system;

import io.flashvec.cluster.DataDirectoryInUseException;
import java.io.PrintStream;
import org.springframework.boot.SpringBootExceptionReporter;
import org.springframework.core.Ordered;
import org.springframework.core.annotation.Order;

/**
 * Start-up failures an operator fixes without a stack trace: reported as one line on standard error
 * instead of Spring's failure report and trace.
 *
 * <p>Registered in {@code META-INF/spring.factories}; Spring asks the reporters in order and stops
 * at the first that reports, so every other failure keeps Spring's full report.
 */
@Order(Ordered.HIGHEST_PRECEDENCE)
public final class StartupFailureReporter implements SpringBootExceptionReporter {
  private final PrintStream err;

  public StartupFailureReporter() {
    this(System.err);
  }

  StartupFailureReporter(PrintStream err) {
    this.err = err;
  }

  @Override
  public boolean reportException(Throwable failure) {
    for (Throwable t = failure; t != null; t = t.getCause() == t ? null : t.getCause()) {
      if (t instanceof DataDirectoryInUseException e) {
        err.println(
            "flashvec: cannot start: "
                + e.getMessage()
                + "; stop that process or choose another --flashvec.data-dir");
        err.flush();
        return true;
      }
    }
    return false;
  }
}
