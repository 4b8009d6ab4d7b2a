package io.flashvec.cluster.testing;

import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.GeneralSecurityException;
import java.security.Key;
import java.security.KeyStore;
import java.util.ArrayList;
import java.util.Base64;
import java.util.List;
import java.util.concurrent.TimeUnit;

/**
 * A throw-away certificate authority for TLS tests, made with the JDK's {@code keytool} (no OpenSSL
 * or BouncyCastle needed): {@link #create} makes the CA, {@link #issue} a node certificate signed
 * by it, written as PEM files the way operators provide them (certificate, PKCS#8 key, CA bundle).
 * EC P-256 keys; certificates valid for two days unless told otherwise.
 *
 * <p>Each call runs two or three short {@code keytool} processes (well under a second each on an
 * idle machine). Not thread-safe.
 */
public final class TestCertificates {

  private static final String PASS = "changeit";

  private final Path dir;
  private final Path caStore;
  private final Path caPem;

  /** A node's PEM files. */
  public record Pem(Path cert, Path key) {}

  private TestCertificates(Path dir, Path caStore, Path caPem) {
    this.dir = dir;
    this.caStore = caStore;
    this.caPem = caPem;
  }

  /** A new CA named {@code CN=<name>} with its files under {@code dir}. */
  public static TestCertificates create(Path dir, String name) {
    try {
      Files.createDirectories(dir);
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
    Path store = dir.resolve(name + "-ca.p12");
    Path pem = dir.resolve(name + "-ca.pem");
    keytool(
        "-genkeypair",
        "-alias",
        "ca",
        "-keyalg",
        "EC",
        "-groupname",
        "secp256r1",
        "-dname",
        "CN=" + name,
        "-ext",
        "bc:c",
        "-validity",
        "3",
        "-storetype",
        "PKCS12",
        "-keystore",
        store.toString(),
        "-storepass",
        PASS);
    keytool(
        "-exportcert",
        "-rfc",
        "-alias",
        "ca",
        "-keystore",
        store.toString(),
        "-storepass",
        PASS,
        "-file",
        pem.toString());
    return new TestCertificates(dir, store, pem);
  }

  /** The CA certificate, PEM. */
  public Path caPem() {
    return caPem;
  }

  /**
   * A certificate for {@code CN=<name>} with subject alternative names {@code san} (keytool syntax,
   * e.g. {@code ip:127.0.0.1,dns:localhost}), for servers and clients, valid from now for two days.
   */
  public Pem issue(String name, String san) {
    return issue(name, san, null, 2);
  }

  /**
   * As {@link #issue(String, String)}, valid from {@code startDate} (keytool syntax, e.g. {@code
   * -3d}; {@code null}: now) for {@code validityDays}.
   */
  public Pem issue(String name, String san, String startDate, int validityDays) {
    Path store = dir.resolve(name + ".p12");
    Path csr = dir.resolve(name + ".csr");
    Path cert = dir.resolve(name + ".pem");
    Path key = dir.resolve(name + "-key.pem");
    keytool(
        "-genkeypair",
        "-alias",
        "node",
        "-keyalg",
        "EC",
        "-groupname",
        "secp256r1",
        "-dname",
        "CN=" + name,
        "-storetype",
        "PKCS12",
        "-keystore",
        store.toString(),
        "-storepass",
        PASS);
    keytool(
        "-certreq",
        "-alias",
        "node",
        "-keystore",
        store.toString(),
        "-storepass",
        PASS,
        "-file",
        csr.toString());
    List<String> gen =
        new ArrayList<>(
            List.of(
                "-gencert",
                "-alias",
                "ca",
                "-keystore",
                caStore.toString(),
                "-storepass",
                PASS,
                "-infile",
                csr.toString(),
                "-outfile",
                cert.toString(),
                "-rfc",
                "-ext",
                "san=" + san,
                "-ext",
                "eku=serverAuth,clientAuth",
                "-validity",
                Integer.toString(validityDays)));
    if (startDate != null) {
      gen.add("-startdate");
      gen.add(startDate);
    }
    keytool(gen.toArray(String[]::new));
    try {
      KeyStore ks = KeyStore.getInstance("PKCS12");
      try (InputStream in = Files.newInputStream(store)) {
        ks.load(in, PASS.toCharArray());
      }
      Key k = ks.getKey("node", PASS.toCharArray());
      Files.writeString(key, pem("PRIVATE KEY", k.getEncoded()), StandardCharsets.US_ASCII);
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    } catch (GeneralSecurityException e) {
      throw new IllegalStateException(e);
    }
    return new Pem(cert, key);
  }

  /** {@code der} as a PEM block of {@code type}. */
  public static String pem(String type, byte[] der) {
    return "-----BEGIN "
        + type
        + "-----\n"
        + Base64.getMimeEncoder(64, "\n".getBytes(StandardCharsets.US_ASCII)).encodeToString(der)
        + "\n-----END "
        + type
        + "-----\n";
  }

  private static void keytool(String... args) {
    List<String> cmd = new ArrayList<>();
    cmd.add(Path.of(System.getProperty("java.home"), "bin", "keytool").toString());
    // keytool is a JVM: start it lean (about 3x faster on a busy 2-core machine)
    cmd.add("-J-XX:TieredStopAtLevel=1");
    cmd.add("-J-XX:+UseSerialGC");
    cmd.add("-noprompt");
    cmd.addAll(List.of(args));
    try {
      Process p = new ProcessBuilder(cmd).redirectErrorStream(true).start();
      String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
      if (!p.waitFor(60, TimeUnit.SECONDS) || p.exitValue() != 0) {
        throw new IllegalStateException("keytool failed: " + String.join(" ", cmd) + "\n" + out);
      }
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new IllegalStateException(e);
    }
  }
}
