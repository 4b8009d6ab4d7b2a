package io.flashvec.api.it;

import io.flashvec.testing.Await;
import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.WebSocket;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Base64;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicInteger;
import tools.jackson.databind.JsonNode;
import tools.jackson.databind.node.ObjectNode;

/**
 * Debian's Chromium, headless, driven over the DevTools protocol (a WebSocket on 127.0.0.1) for the
 * dashboard's browser tests. Every host name but 127.0.0.1 resolves to nothing and background
 * networking is off, so the browser only talks to the server under test. {@code ./flashvec test}
 * installs the {@code chromium} package; without it {@link #start} fails, naming the package.
 */
final class Chromium implements AutoCloseable {

  private static final Duration CALL_TIMEOUT = Duration.ofSeconds(30);

  private final Process process;
  private final WebSocket socket;
  private final AtomicInteger ids = new AtomicInteger();
  private final Map<Integer, CompletableFuture<JsonNode>> pending = new ConcurrentHashMap<>();

  private Chromium(Process process, WebSocket socket) {
    this.process = process;
    this.socket = socket;
  }

  /** The chromium binary on the PATH or in /usr/bin, or {@code null}. */
  static String find() {
    for (String dir : System.getenv().getOrDefault("PATH", "").split(":")) {
      for (String name : List.of("chromium", "chromium-browser")) {
        Path p = Path.of(dir.isEmpty() ? "." : dir, name);
        if (Files.isExecutable(p)) {
          return p.toString();
        }
      }
    }
    return Files.isExecutable(Path.of("/usr/bin/chromium")) ? "/usr/bin/chromium" : null;
  }

  /** Starts a headless browser with its profile under {@code dir} and connects to it. */
  static Chromium start(Path dir) throws IOException, InterruptedException {
    String bin = find();
    if (bin == null) {
      throw new IllegalStateException(
          "chromium not found: the dashboard's browser tests need Debian's chromium package"
              + " (apt-get install chromium; ./flashvec test installs it)");
    }
    Path profile = Files.createDirectories(dir.resolve("chromium-profile"));
    List<String> cmd =
        new ArrayList<>(
            List.of(
                bin,
                "--headless",
                "--no-sandbox",
                "--disable-gpu",
                "--disable-background-networking",
                "--disable-component-update",
                "--disable-default-apps",
                "--disable-extensions",
                "--disable-sync",
                "--no-first-run",
                "--no-default-browser-check",
                "--host-resolver-rules=MAP * ~NOTFOUND, EXCLUDE 127.0.0.1",
                "--hide-scrollbars",
                "--window-size=1280,900",
                "--remote-debugging-address=127.0.0.1",
                "--remote-debugging-port=0",
                "--user-data-dir=" + profile,
                "about:blank"));
    Process p =
        new ProcessBuilder(cmd)
            .redirectErrorStream(true)
            .redirectOutput(ProcessBuilder.Redirect.appendTo(dir.resolve("chromium.log").toFile()))
            .start();
    // Chromium writes the port it chose, and the browser target's path, into the profile.
    Path active = profile.resolve("DevToolsActivePort");
    try {
      Await.until(
          Duration.ofSeconds(60),
          "chromium's DevTools port",
          () -> {
            if (!p.isAlive()) {
              throw new IllegalStateException(
                  "chromium exited [status="
                      + p.exitValue()
                      + ", log="
                      + dir.resolve("chromium.log")
                      + "]");
            }
            return Files.exists(active) && Files.readAllLines(active).size() >= 2;
          });
      List<String> lines = Files.readAllLines(active);
      URI ws = URI.create("ws://127.0.0.1:" + lines.get(0).trim() + lines.get(1).trim());
      Chromium[] self = new Chromium[1];
      WebSocket socket =
          HttpClient.newHttpClient()
              .newWebSocketBuilder()
              .connectTimeout(Duration.ofSeconds(10))
              .buildAsync(ws, new Listener(self))
              .get(30, TimeUnit.SECONDS);
      self[0] = new Chromium(p, socket);
      return self[0];
    } catch (ExecutionException | TimeoutException | RuntimeException | Error e) {
      p.destroyForcibly();
      throw new IOException("cannot connect to chromium's DevTools: " + e, e);
    }
  }

  /** Assembles the frames of a message and completes the call it answers. */
  private static final class Listener implements WebSocket.Listener {
    private final Chromium[] self;
    private final StringBuilder text = new StringBuilder();

    Listener(Chromium[] self) {
      this.self = self;
    }

    @Override
    public CompletionStage<?> onText(WebSocket ws, CharSequence data, boolean last) {
      text.append(data);
      if (last) {
        JsonNode m = Http.JSON.readTree(text.toString());
        text.setLength(0);
        if (m.has("id") && self[0] != null) {
          CompletableFuture<JsonNode> f = self[0].pending.remove(m.get("id").asInt());
          if (f != null) {
            f.complete(m);
          }
        }
      }
      ws.request(1);
      return null;
    }
  }

  /** Sends a DevTools command (to a page's session when {@code session} is set); its result. */
  JsonNode call(String session, String method, ObjectNode params) {
    int id = ids.incrementAndGet();
    ObjectNode msg = Http.JSON.createObjectNode().put("id", id).put("method", method);
    msg.set("params", params == null ? Http.JSON.createObjectNode() : params);
    if (session != null) {
      msg.put("sessionId", session);
    }
    CompletableFuture<JsonNode> f = new CompletableFuture<>();
    pending.put(id, f);
    try {
      socket.sendText(msg.toString(), true).get(CALL_TIMEOUT.toSeconds(), TimeUnit.SECONDS);
      JsonNode answer = f.get(CALL_TIMEOUT.toSeconds(), TimeUnit.SECONDS);
      if (answer.has("error")) {
        throw new IllegalStateException("DevTools " + method + " failed: " + answer.get("error"));
      }
      return answer.get("result");
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new IllegalStateException(e);
    } catch (ExecutionException | TimeoutException e) {
      pending.remove(id);
      throw new IllegalStateException("DevTools " + method + " got no answer: " + e, e);
    }
  }

  static ObjectNode params() {
    return Http.JSON.createObjectNode();
  }

  /** Opens a tab at {@code url}. */
  Page open(String url) {
    String target =
        call(null, "Target.createTarget", params().put("url", url)).get("targetId").asString();
    String session =
        call(null, "Target.attachToTarget", params().put("targetId", target).put("flatten", true))
            .get("sessionId")
            .asString();
    return new Page(session);
  }

  /** A tab: runs JavaScript in it, waits for what it shows, takes screenshots. */
  final class Page {
    private final String session;

    private Page(String session) {
      this.session = session;
    }

    /**
     * The value of a JavaScript expression (a promise is awaited), as JSON; an exception thrown by
     * the page's script fails the call with its message.
     */
    JsonNode eval(String expression) {
      JsonNode r =
          call(
              session,
              "Runtime.evaluate",
              params()
                  .put("expression", expression)
                  .put("awaitPromise", true)
                  .put("returnByValue", true));
      if (r.has("exceptionDetails")) {
        throw new IllegalStateException(
            "script failed: " + r.get("exceptionDetails") + " [expression=" + expression + "]");
      }
      return r.path("result").path("value");
    }

    /** The text content of the first element matching {@code selector}, shown or not. */
    String content(String selector) {
      return eval("(document.querySelector(" + quote(selector) + ") || {}).textContent || ''")
          .asString("");
    }

    /** The text of the first element matching {@code selector}, or "" when there is none. */
    String text(String selector) {
      return eval("(document.querySelector(" + quote(selector) + ") || {}).innerText || ''")
          .asString("");
    }

    /** How many elements match {@code selector}. */
    int count(String selector) {
      return eval("document.querySelectorAll(" + quote(selector) + ").length").asInt();
    }

    /** Waits until a JavaScript condition is true; a timeout shows {@code #view}'s text. */
    void waitFor(String what, String condition) {
      Await.until(
          Duration.ofSeconds(30),
          what,
          () -> what + "; the page shows: " + abbreviate(text("#view")),
          () ->
              eval("(() => { try { return !!("
                      + condition
                      + "); } catch (e) { return false; } })()")
                  .asBoolean());
    }

    /** Waits until an element matching {@code selector} exists. */
    void waitForElement(String selector) {
      waitFor(selector, "document.querySelector(" + quote(selector) + ")");
    }

    /**
     * Goes to {@code hash} of the dashboard (the view's route) and waits until that view has
     * rendered what it first loads.
     */
    void show(String hash) {
      String view = hash.replaceFirst("^#", "").split("/")[0];
      // marked first: the hashchange event that renders the view comes after this script
      eval(
          "(() => { if (location.hash !== "
              + quote(hash)
              + ") { document.getElementById('view').dataset.state = 'navigating'; location.hash = "
              + quote(hash)
              + "; } return true; })()");
      waitFor(
          "view " + hash,
          "document.getElementById('view').dataset.view === "
              + quote(view)
              + " && document.getElementById('view').dataset.state === 'ready'");
    }

    /** Sets a form field's value, as typing would. */
    void fill(String selector, String value) {
      eval(
          "(() => { const e = document.querySelector("
              + quote(selector)
              + "); e.value = "
              + quote(value)
              + "; e.dispatchEvent(new Event('input', {bubbles: true})); return true; })()");
    }

    /** Clicks the first element matching {@code selector}. */
    void click(String selector) {
      eval("document.querySelector(" + quote(selector) + ").click(), true");
    }

    /** A PNG of the page as it shows now, {@code height} CSS pixels of it from the top. */
    void screenshot(Path file, int height) throws IOException {
      ObjectNode clip =
          params().put("x", 0).put("y", 0).put("width", 1280).put("height", height).put("scale", 1);
      ObjectNode p = params().put("format", "png").put("captureBeyondViewport", true);
      p.set("clip", clip);
      JsonNode r = call(session, "Page.captureScreenshot", p);
      Files.write(file, Base64.getDecoder().decode(r.get("data").asString()));
    }
  }

  static String quote(String s) {
    return Http.JSON.writeValueAsString(s);
  }

  private static String abbreviate(String s) {
    String t = s.replaceAll("\\s+", " ").trim();
    return t.length() > 600 ? t.substring(0, 600) + "…" : t;
  }

  @Override
  public void close() {
    try {
      socket.sendClose(WebSocket.NORMAL_CLOSURE, "").get(5, TimeUnit.SECONDS);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    } catch (ExecutionException | TimeoutException e) {
      // the browser is killed below anyway
    }
    process.destroy();
    try {
      if (!process.waitFor(10, TimeUnit.SECONDS)) {
        process.destroyForcibly().waitFor(10, TimeUnit.SECONDS);
      }
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      process.destroyForcibly();
    }
  }
}
