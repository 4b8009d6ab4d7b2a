package io.flashvec.api.it;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.KeyStore;
import java.security.cert.Certificate;
import java.util.List;
import javax.net.ssl.SSLContext;
import javax.net.ssl.TrustManagerFactory;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * REST over TLS with a certificate we provide (Spring Boot's {@code server.ssl.*}): a self-signed
 * certificate made with the JDK's keytool, trusted by the client; plain HTTP is refused.
 */
class TlsIT {

  @TempDir Path tmp;

  @Test
  void restServesOverTlsWithAProvidedCertificate() throws Exception {
    Path p12 = tmp.resolve("server.p12");
    Process keytool =
        new ProcessBuilder(
                List.of(
                    Path.of(System.getProperty("java.home"), "bin", "keytool").toString(),
                    "-genkeypair",
                    "-alias",
                    "flashvec",
                    "-keyalg",
                    "EC",
                    "-groupname",
                    "secp256r1",
                    "-dname",
                    "CN=localhost",
                    "-ext",
                    "san=ip:127.0.0.1,dns:localhost",
                    "-validity",
                    "2",
                    "-storetype",
                    "PKCS12",
                    "-keystore",
                    p12.toString(),
                    "-storepass",
                    "changeit"))
            .redirectErrorStream(true)
            .start();
    assertThat(keytool.waitFor())
        .as(new String(keytool.getInputStream().readAllBytes(), StandardCharsets.UTF_8))
        .isZero();

    KeyStore ks = KeyStore.getInstance("PKCS12");
    try (InputStream in = Files.newInputStream(p12)) {
      ks.load(in, "changeit".toCharArray());
    }
    Certificate cert = ks.getCertificate("flashvec");
    KeyStore trust = KeyStore.getInstance("PKCS12");
    trust.load(null, null);
    trust.setCertificateEntry("flashvec", cert);
    TrustManagerFactory tmf =
        TrustManagerFactory.getInstance(TrustManagerFactory.getDefaultAlgorithm());
    tmf.init(trust);
    SSLContext ssl = SSLContext.getInstance("TLS");
    ssl.init(null, tmf.getTrustManagers(), null);

    try (ServerProcess server =
        new ServerProcess(
                tmp.resolve("data"),
                tmp.resolve("server.log"),
                "--server.ssl.enabled=true",
                "--server.ssl.key-store=" + p12,
                "--server.ssl.key-store-type=PKCS12",
                "--server.ssl.key-store-password=changeit")
            .withTls(ssl)
            .start()) {
      assertThat(server.url()).startsWith("https://");
      Http https = new Http(server.url(), ssl);
      assertThat(
              https
                  .put("/collections/t", "{\"vectors\":{\"size\":2,\"distance\":\"Dot\"}}")
                  .status())
          .isEqualTo(200);
      assertThat(https.get("/collections/t").status()).isEqualTo(200);
      // plain HTTP gets no answer a client could mistake for success
      Http plain = new Http("http://127.0.0.1:" + server.port());
      int status;
      try {
        status = plain.get("/collections").status();
      } catch (RuntimeException e) {
        status = -1; // the TLS port closed the plain connection
      }
      assertThat(status).isNotEqualTo(200);
    }
  }
}
