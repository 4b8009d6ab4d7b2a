package io.flashvec.api.it;

import java.nio.file.Path;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.io.TempDir;

/**
 * One real server process for all the tests of a class: started before the class's own
 * {@code @BeforeAll} methods (which may load data through {@link #http}), killed after its last
 * test, its data directory and log in a temporary directory. Test classes run one after another
 * (the fields are shared by every subclass).
 */
abstract class OneServerPerClass {

  @TempDir static Path tmp;
  static ServerProcess server;
  static Http http;

  @BeforeAll
  static void startServer() {
    server = new ServerProcess(tmp.resolve("data"), tmp.resolve("server.log")).start();
    http = new Http(server.url());
  }

  @AfterAll
  static void stopServer() {
    if (server != null) {
      server.close();
      server = null;
    }
  }
}
