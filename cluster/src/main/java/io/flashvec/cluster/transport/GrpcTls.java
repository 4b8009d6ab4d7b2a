package io.flashvec.cluster.transport;

import io.grpc.ChannelCredentials;
import io.grpc.InsecureChannelCredentials;
import io.grpc.InsecureServerCredentials;
import io.grpc.ServerCredentials;
import io.grpc.TlsChannelCredentials;
import io.grpc.TlsServerCredentials;
import io.grpc.netty.shaded.io.grpc.netty.NettyChannelBuilder;
import io.grpc.netty.shaded.io.grpc.netty.NettyServerBuilder;
import io.grpc.util.AdvancedTlsX509KeyManager;
import io.grpc.util.AdvancedTlsX509TrustManager;
import java.io.ByteArrayInputStream;
import java.io.Closeable;
import java.io.IOException;
import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.security.GeneralSecurityException;
import java.security.KeyFactory;
import java.security.PrivateKey;
import java.security.Signature;
import java.security.cert.CertPathValidator;
import java.security.cert.CertificateException;
import java.security.cert.CertificateExpiredException;
import java.security.cert.CertificateFactory;
import java.security.cert.CertificateNotYetValidException;
import java.security.cert.PKIXParameters;
import java.security.cert.TrustAnchor;
import java.security.cert.X509Certificate;
import java.security.spec.PKCS8EncodedKeySpec;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Base64;
import java.util.List;
import java.util.Locale;
import java.util.Set;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ScheduledThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Transport security of the internal gRPC between cluster nodes: the query and index nodes' servers
 * and the channels proxies and query nodes open to them. Either plaintext ({@link #plaintext()},
 * the default: a cluster on one private network) or TLS from PEM files ({@link #fromPem}):
 *
 * <ul>
 *   <li>{@code cert}: this node's certificate (chain, leaf first), presented as a server and, for
 *       mutual TLS, as a client;
 *   <li>{@code key}: its private key, PKCS#8 PEM ({@code BEGIN PRIVATE KEY}; RSA, EC or Ed25519);
 *   <li>{@code ca}: the certificates trusted to sign peers' certificates.
 * </ul>
 *
 * <p>Clients verify the server's certificate chain against the CA and its name against the address
 * they dial ({@code <advertise-host>}), or against {@code authority} when set — one name every
 * node's certificate carries, for nodes whose addresses are not known in advance (pod IPs). Servers
 * require a client certificate signed by the CA by default ({@link ClientAuth#REQUIRE}): the
 * internal API carries writes and has no other authentication.
 *
 * <p>Every file is checked when this is built (readable, parsable, key matches certificate, not
 * expired), so a bad configuration stops the node at start with the path and the reason. The files
 * are re-read every {@code reloadInterval} when their modification time or size changed (for
 * rotated certificates, e.g. cert-manager); a rotation that does not load keeps the previous
 * credentials and logs why. New connections use the new credentials; open ones keep theirs.
 *
 * <p>Thread-safe. Owns one reload thread; {@link #close()} stops it.
 */
public final class GrpcTls implements Closeable {

  private static final Logger LOG = LoggerFactory.getLogger(GrpcTls.class);
  private static final Pattern PEM =
      Pattern.compile("-----BEGIN ([A-Z0-9 ]+)-----([A-Za-z0-9+/=\\s]*?)-----END \\1-----");

  /** Whether a server asks for and checks client certificates. */
  public enum ClientAuth {
    /** Mutual TLS: a client without a certificate signed by the CA is refused (the default). */
    REQUIRE,
    /** A client certificate is checked when one is presented. */
    OPTIONAL,
    /** Server-side TLS only. */
    NONE;

    /** Parses {@code require}, {@code optional} or {@code none} (any case). */
    public static ClientAuth parse(String value) {
      try {
        return valueOf(value.trim().toUpperCase(Locale.ROOT));
      } catch (IllegalArgumentException | NullPointerException e) {
        throw new IllegalArgumentException(
            "gRPC TLS client-auth must be require, optional or none [value=" + value + "]", e);
      }
    }
  }

  private final boolean enabled;
  private final PemFiles files;
  private final ClientAuth clientAuth;
  private final String authority;
  private final AdvancedTlsX509KeyManager keyManager;
  private final AdvancedTlsX509TrustManager clientTrust;
  private final AdvancedTlsX509TrustManager serverTrust;
  private final ScheduledExecutorService reloader;
  private volatile Stamp loaded;

  /** The three PEM files. */
  private record PemFiles(Path cert, Path key, Path ca) {}

  /** Modification times and sizes of the files when they were last loaded. */
  private record Stamp(
      long certTime, long certSize, long keyTime, long keySize, long caTime, long caSize) {
    static Stamp of(PemFiles f) throws IOException {
      return new Stamp(
          Files.getLastModifiedTime(f.cert()).toMillis(),
          Files.size(f.cert()),
          Files.getLastModifiedTime(f.key()).toMillis(),
          Files.size(f.key()),
          Files.getLastModifiedTime(f.ca()).toMillis(),
          Files.size(f.ca()));
    }
  }

  /** Loaded, checked credentials. */
  private record Material(X509Certificate[] chain, PrivateKey key, X509Certificate[] ca) {}

  private GrpcTls() {
    this.enabled = false;
    this.files = null;
    this.clientAuth = ClientAuth.NONE;
    this.authority = null;
    this.keyManager = null;
    this.clientTrust = null;
    this.serverTrust = null;
    this.reloader = null;
  }

  private GrpcTls(
      PemFiles files, ClientAuth clientAuth, String authority, Duration reloadInterval) {
    this.enabled = true;
    this.files = files;
    this.clientAuth = clientAuth;
    this.authority = authority == null || authority.isBlank() ? null : authority.trim();
    Material m = load(files);
    try {
      this.loaded = Stamp.of(files);
      keyManager = new AdvancedTlsX509KeyManager();
      keyManager.updateIdentityCredentials(m.chain(), m.key());
      clientTrust =
          AdvancedTlsX509TrustManager.newBuilder()
              .setVerification(
                  AdvancedTlsX509TrustManager.Verification.CERTIFICATE_AND_HOST_NAME_VERIFICATION)
              .build();
      clientTrust.updateTrustCredentials(m.ca());
      // A client certificate names a node, not the address it connects from: check the chain only.
      serverTrust =
          AdvancedTlsX509TrustManager.newBuilder()
              .setVerification(
                  AdvancedTlsX509TrustManager.Verification.CERTIFICATE_ONLY_VERIFICATION)
              .build();
      serverTrust.updateTrustCredentials(m.ca());
    } catch (IOException | GeneralSecurityException e) {
      throw new IllegalArgumentException(
          "cannot use the gRPC TLS files [cert="
              + files.cert()
              + ", key="
              + files.key()
              + ", ca="
              + files.ca()
              + "]: "
              + e.getMessage(),
          e);
    }
    if (reloadInterval != null && !reloadInterval.isZero() && !reloadInterval.isNegative()) {
      ScheduledThreadPoolExecutor s =
          new ScheduledThreadPoolExecutor(
              1, Thread.ofPlatform().name("flashvec-tls-reload").daemon(true).factory());
      s.setRemoveOnCancelPolicy(true);
      long ms = reloadInterval.toMillis();
      s.scheduleWithFixedDelay(this::reloadIfChanged, ms, ms, TimeUnit.MILLISECONDS);
      this.reloader = s;
    } else {
      this.reloader = null;
    }
    LOG.info(
        "internal gRPC uses TLS [cert={}, subject={}, notAfter={}, ca={}, clientAuth={},"
            + " authority={}]",
        files.cert(),
        m.chain()[0].getSubjectX500Principal().getName(),
        m.chain()[0].getNotAfter().toInstant(),
        files.ca(),
        clientAuth,
        this.authority == null ? "(the dialled host)" : this.authority);
  }

  /** No TLS: plaintext gRPC (the default). */
  public static GrpcTls plaintext() {
    return new GrpcTls();
  }

  /**
   * TLS from PEM files, checked now.
   *
   * @param cert this node's certificate chain (PEM, leaf first)
   * @param key its private key (PKCS#8 PEM)
   * @param ca certificates that sign peers' certificates (PEM)
   * @param clientAuth whether servers require client certificates
   * @param authority the name clients check servers' certificates against; {@code null} or blank:
   *     the host they dial
   * @param reloadInterval how often to look for rotated files; zero: never
   * @throws IllegalArgumentException naming the file and the reason when a file is unusable
   */
  public static GrpcTls fromPem(
      Path cert,
      Path key,
      Path ca,
      ClientAuth clientAuth,
      String authority,
      Duration reloadInterval) {
    if (cert == null || key == null || ca == null) {
      throw new IllegalArgumentException(
          "gRPC TLS needs a certificate, a key and a CA [cert="
              + cert
              + ", key="
              + key
              + ", ca="
              + ca
              + "]");
    }
    return new GrpcTls(
        new PemFiles(cert, key, ca),
        clientAuth == null ? ClientAuth.REQUIRE : clientAuth,
        authority,
        reloadInterval);
  }

  /** Whether TLS is on. */
  public boolean enabled() {
    return enabled;
  }

  /** The name servers' certificates are checked against, or {@code null} for the dialled host. */
  public String authority() {
    return authority;
  }

  /** A server builder on {@code address} with these credentials. */
  public NettyServerBuilder serverBuilder(InetSocketAddress address) {
    return NettyServerBuilder.forAddress(address, serverCredentials());
  }

  /** A channel builder to {@code target} ({@code host:port}) with these credentials. */
  public NettyChannelBuilder channelBuilder(String target) {
    NettyChannelBuilder b = NettyChannelBuilder.forTarget(target, channelCredentials());
    if (authority != null) {
      b.overrideAuthority(authority);
    }
    return b;
  }

  /** Server credentials: TLS (with client certificates as configured) or insecure. */
  public ServerCredentials serverCredentials() {
    if (!enabled) {
      return InsecureServerCredentials.create();
    }
    return TlsServerCredentials.newBuilder()
        .keyManager(keyManager)
        .trustManager(serverTrust)
        .clientAuth(
            switch (clientAuth) {
              case REQUIRE -> TlsServerCredentials.ClientAuth.REQUIRE;
              case OPTIONAL -> TlsServerCredentials.ClientAuth.OPTIONAL;
              case NONE -> TlsServerCredentials.ClientAuth.NONE;
            })
        .build();
  }

  /** Channel credentials: TLS presenting this node's certificate, or insecure. */
  public ChannelCredentials channelCredentials() {
    if (!enabled) {
      return InsecureChannelCredentials.create();
    }
    return TlsChannelCredentials.newBuilder()
        .keyManager(keyManager)
        .trustManager(clientTrust)
        .build();
  }

  /** Re-reads the files if they changed; keeps the old credentials if the new ones do not load. */
  void reloadIfChanged() {
    try {
      Stamp now = Stamp.of(files);
      if (now.equals(loaded)) {
        return;
      }
      Material m = load(files);
      keyManager.updateIdentityCredentials(m.chain(), m.key());
      clientTrust.updateTrustCredentials(m.ca());
      serverTrust.updateTrustCredentials(m.ca());
      loaded = now;
      LOG.info(
          "internal gRPC TLS files reloaded [cert={}, subject={}, notAfter={}]",
          files.cert(),
          m.chain()[0].getSubjectX500Principal().getName(),
          m.chain()[0].getNotAfter().toInstant());
    } catch (IOException | GeneralSecurityException | RuntimeException e) {
      LOG.warn(
          "gRPC TLS files changed but do not load; keeping the previous ones: {}", e.getMessage());
    }
  }

  @Override
  public void close() {
    if (reloader != null) {
      reloader.shutdownNow();
    }
  }

  // ------------------------------------------------------------------ loading and checks

  private static Material load(PemFiles f) {
    X509Certificate[] chain = certificates(f.cert(), "certificate");
    PrivateKey key = privateKey(f.key());
    X509Certificate[] ca = certificates(f.ca(), "CA");
    try {
      chain[0].checkValidity();
    } catch (CertificateExpiredException | CertificateNotYetValidException e) {
      throw new IllegalArgumentException(
          "the gRPC TLS certificate is not valid now [path="
              + f.cert()
              + ", notBefore="
              + chain[0].getNotBefore().toInstant()
              + ", notAfter="
              + chain[0].getNotAfter().toInstant()
              + "]",
          e);
    }
    if (!matches(key, chain[0])) {
      throw new IllegalArgumentException(
          "the gRPC TLS key does not belong to the certificate [cert="
              + f.cert()
              + ", key="
              + f.key()
              + "]");
    }
    if (!chainsTo(chain, ca)) {
      // Not fatal (the CA may be for peers signed elsewhere), but peers trusting the same CA
      // will refuse this node.
      LOG.warn(
          "the gRPC TLS certificate does not chain to the configured CA; peers that trust only"
              + " that CA will refuse this node [cert={}, issuer={}, ca={}]",
          f.cert(),
          chain[0].getIssuerX500Principal().getName(),
          f.ca());
    }
    return new Material(chain, key, ca);
  }

  private static String read(Path p, String what) {
    try {
      return Files.readString(p, StandardCharsets.US_ASCII);
    } catch (NoSuchFileException e) {
      throw new IllegalArgumentException(
          "the gRPC TLS " + what + " file does not exist [path=" + p + "]", e);
    } catch (IOException e) {
      throw new IllegalArgumentException(
          "cannot read the gRPC TLS " + what + " file [path=" + p + "]: " + e, e);
    }
  }

  private static X509Certificate[] certificates(Path p, String what) {
    String text = read(p, what);
    List<X509Certificate> out = new ArrayList<>();
    Matcher m = PEM.matcher(text);
    while (m.find()) {
      if (!m.group(1).equals("CERTIFICATE")) {
        continue;
      }
      try {
        out.add(
            (X509Certificate)
                CertificateFactory.getInstance("X.509")
                    .generateCertificate(new ByteArrayInputStream(decode(m.group(2)))));
      } catch (CertificateException | IllegalArgumentException e) {
        throw new IllegalArgumentException(
            "the gRPC TLS "
                + what
                + " file holds a certificate that does not parse [path="
                + p
                + "]: "
                + e.getMessage(),
            e);
      }
    }
    if (out.isEmpty()) {
      throw new IllegalArgumentException(
          "the gRPC TLS "
              + what
              + " file holds no PEM certificate (BEGIN CERTIFICATE) [path="
              + p
              + "]");
    }
    return out.toArray(X509Certificate[]::new);
  }

  private static PrivateKey privateKey(Path p) {
    String text = read(p, "key");
    Matcher m = PEM.matcher(text);
    while (m.find()) {
      String type = m.group(1);
      switch (type) {
        case "PRIVATE KEY" -> {
          byte[] der = decode(m.group(2));
          for (String alg : new String[] {"RSA", "EC", "Ed25519", "Ed448", "RSASSA-PSS"}) {
            try {
              return KeyFactory.getInstance(alg).generatePrivate(new PKCS8EncodedKeySpec(der));
            } catch (GeneralSecurityException e) {
              // try the next algorithm
            }
          }
          throw new IllegalArgumentException(
              "the gRPC TLS key is not an RSA, EC or EdDSA PKCS#8 key [path=" + p + "]");
        }
        case "RSA PRIVATE KEY", "EC PRIVATE KEY" ->
            throw new IllegalArgumentException(
                "the gRPC TLS key is in "
                    + (type.startsWith("RSA") ? "PKCS#1" : "SEC1")
                    + " format ("
                    + type
                    + "); convert it to PKCS#8: openssl pkcs8 -topk8 -nocrypt -in KEY -out"
                    + " KEY.pk8 [path="
                    + p
                    + "]");
        case "ENCRYPTED PRIVATE KEY" ->
            throw new IllegalArgumentException(
                "the gRPC TLS key is encrypted; give an unencrypted PKCS#8 key (openssl pkcs8"
                    + " -topk8 -nocrypt) and protect the file instead [path="
                    + p
                    + "]");
        default -> {
          // e.g. a certificate before the key in the same file
        }
      }
    }
    throw new IllegalArgumentException(
        "the gRPC TLS key file holds no PEM private key (BEGIN PRIVATE KEY) [path=" + p + "]");
  }

  private static byte[] decode(String base64) {
    return Base64.getMimeDecoder().decode(base64.replaceAll("\\s", ""));
  }

  /** Whether {@code key} signs what {@code cert}'s public key verifies. */
  private static boolean matches(PrivateKey key, X509Certificate cert) {
    String alg =
        switch (key.getAlgorithm()) {
          case "RSA" -> "SHA256withRSA";
          case "EC" -> "SHA256withECDSA";
          case "Ed25519", "EdDSA" -> "Ed25519";
          case "Ed448" -> "Ed448";
          default -> null;
        };
    if (alg == null) {
      return true; // cannot check; the handshake will tell
    }
    byte[] probe = "flashvec-grpc-tls-key-check".getBytes(StandardCharsets.US_ASCII);
    try {
      Signature s = Signature.getInstance(alg);
      s.initSign(key);
      s.update(probe);
      byte[] sig = s.sign();
      Signature v = Signature.getInstance(alg);
      v.initVerify(cert.getPublicKey());
      v.update(probe);
      return v.verify(sig);
    } catch (GeneralSecurityException e) {
      return false;
    }
  }

  private static boolean chainsTo(X509Certificate[] chain, X509Certificate[] ca) {
    try {
      Set<TrustAnchor> anchors = new java.util.HashSet<>();
      for (X509Certificate c : ca) {
        anchors.add(new TrustAnchor(c, null));
      }
      PKIXParameters params = new PKIXParameters(anchors);
      params.setRevocationEnabled(false);
      CertPathValidator.getInstance("PKIX")
          .validate(
              CertificateFactory.getInstance("X.509").generateCertPath(List.of(chain)), params);
      return true;
    } catch (GeneralSecurityException | IllegalArgumentException e) {
      return false;
    }
  }
}
