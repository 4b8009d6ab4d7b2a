package io.flashvec.loadgen.cli;

import java.io.OutputStream;
import java.io.PrintWriter;
import java.nio.charset.StandardCharsets;

/** Adapts picocli's output {@link PrintWriter} to the {@code PrintStream} the drivers log to. */
final class WriterOutputStream extends OutputStream {
  private final PrintWriter w;
  private final java.io.ByteArrayOutputStream line = new java.io.ByteArrayOutputStream();

  WriterOutputStream(PrintWriter w) {
    this.w = w;
  }

  @Override
  public synchronized void write(int b) {
    line.write(b);
    if (b == '\n') {
      flush();
    }
  }

  @Override
  public synchronized void flush() {
    w.print(line.toString(StandardCharsets.UTF_8));
    w.flush();
    line.reset();
  }
}
