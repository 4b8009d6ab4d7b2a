package io.flashvec.cluster.transport;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.flashvec.cluster.testing.TestCertificates;
import io.flashvec.cluster.transport.GrpcTls.ClientAuth;
import io.flashvec.cluster.transport.grpc.HealthReply;
import io.flashvec.cluster.transport.grpc.HealthRequest;
import io.flashvec.cluster.transport.grpc.ShardServiceGrpc;
import io.grpc.ManagedChannel;
import io.grpc.Server;
import io.grpc.Status;
import io.grpc.StatusRuntimeException;
import io.grpc.netty.shaded.io.grpc.netty.NettyChannelBuilder;
import io.grpc.stub.StreamObserver;
import java.io.IOException;
import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;
import org.junit.jupiter.api.io.TempDir;

/**
 * TLS of the internal gRPC with certificates made by keytool: mutual TLS works; plaintext clients,
 * clients without a certificate and clients of another CA are refused; the authority override; a
 * rotated certificate is picked up; and bad files stop the node with the file and the reason.
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class GrpcTlsTest {

  private Path dir;

  private TestCertificates ca;
  private TestCertificates otherCa;
  private TestCertificates.Pem server;
  private TestCertificates.Pem client;
  private TestCertificates.Pem internalOnly;
  private TestCertificates.Pem foreign;
  private final List<AutoCloseable> open = new ArrayList<>();

  @BeforeAll
  void certificates(@TempDir Path tmp) {
    dir = tmp;
    ca = TestCertificates.create(dir.resolve("ca"), "flashvec-test-ca");
    otherCa = TestCertificates.create(dir.resolve("other"), "other-ca");
    server = ca.issue("query-1", "ip:127.0.0.1,dns:localhost");
    client = ca.issue("proxy-1", "dns:proxy-1");
    internalOnly = ca.issue("index-1", "dns:flashvec-internal");
    foreign = otherCa.issue("intruder", "ip:127.0.0.1");
  }

  @AfterEach
  void closeAll() throws Exception {
    for (AutoCloseable c : open.reversed()) {
      c.close();
    }
    open.clear();
  }

  private GrpcTls tls(TestCertificates.Pem pem, Path caPem, ClientAuth auth, String authority) {
    GrpcTls t = GrpcTls.fromPem(pem.cert(), pem.key(), caPem, auth, authority, Duration.ZERO);
    open.add(t);
    return t;
  }

  /** A server answering Health on a free loopback port; returns its port. */
  private int serve(GrpcTls tls) throws IOException {
    Server s =
        tls.serverBuilder(new InetSocketAddress("127.0.0.1", 0))
            .addService(
                new ShardServiceGrpc.ShardServiceImplBase() {
                  @Override
                  public void health(HealthRequest req, StreamObserver<HealthReply> out) {
                    out.onNext(
                        HealthReply.newBuilder().setNodeId("query-1").setReady(true).build());
                    out.onCompleted();
                  }
                })
            .build()
            .start();
    open.add(
        () -> {
          s.shutdownNow();
          s.awaitTermination(5, TimeUnit.SECONDS);
        });
    return s.getPort();
  }

  private HealthReply call(ManagedChannel ch) {
    open.add(
        () -> {
          ch.shutdownNow();
          ch.awaitTermination(5, TimeUnit.SECONDS);
        });
    return ShardServiceGrpc.newBlockingStub(ch)
        .withDeadlineAfter(10, TimeUnit.SECONDS)
        .health(HealthRequest.getDefaultInstance());
  }

  @Test
  void mutualTlsCallSucceeds() throws Exception {
    int port = serve(tls(server, ca.caPem(), ClientAuth.REQUIRE, null));
    GrpcTls c = tls(client, ca.caPem(), ClientAuth.REQUIRE, null);
    assertThat(call(c.channelBuilder("127.0.0.1:" + port).build()).getNodeId())
        .isEqualTo("query-1");
  }

  @Test
  void plaintextClientIsRefused() throws Exception {
    int port = serve(tls(server, ca.caPem(), ClientAuth.REQUIRE, null));
    assertThatThrownBy(
            () -> call(NettyChannelBuilder.forTarget("127.0.0.1:" + port).usePlaintext().build()))
        .isInstanceOfSatisfying(
            StatusRuntimeException.class,
            e -> assertThat(e.getStatus().getCode()).isEqualTo(Status.Code.UNAVAILABLE));
  }

  @Test
  void clientWithoutCertificateIsRefusedUnlessClientAuthIsNone() throws Exception {
    int port = serve(tls(server, ca.caPem(), ClientAuth.REQUIRE, null));
    io.grpc.ChannelCredentials noCert =
        io.grpc.TlsChannelCredentials.newBuilder().trustManager(ca.caPem().toFile()).build();
    assertThatThrownBy(
            () -> call(NettyChannelBuilder.forTarget("127.0.0.1:" + port, noCert).build()))
        .isInstanceOfSatisfying(
            StatusRuntimeException.class,
            e -> assertThat(e.getStatus().getCode()).isEqualTo(Status.Code.UNAVAILABLE));

    int open = serve(tls(server, ca.caPem(), ClientAuth.NONE, null));
    assertThat(call(NettyChannelBuilder.forTarget("127.0.0.1:" + open, noCert).build()).getReady())
        .isTrue();
  }

  @Test
  void certificatesOfAnotherCaAreRefusedBothWays() throws Exception {
    int port = serve(tls(server, ca.caPem(), ClientAuth.REQUIRE, null));
    // a client whose certificate another CA signed (it trusts our CA, so only its own cert fails)
    GrpcTls intruder = tls(foreign, ca.caPem(), ClientAuth.REQUIRE, null);
    assertThatThrownBy(() -> call(intruder.channelBuilder("127.0.0.1:" + port).build()))
        .isInstanceOf(StatusRuntimeException.class);
    // a client that trusts only the other CA refuses our server
    GrpcTls wrongTrust = tls(client, otherCa.caPem(), ClientAuth.REQUIRE, null);
    assertThatThrownBy(() -> call(wrongTrust.channelBuilder("127.0.0.1:" + port).build()))
        .isInstanceOf(StatusRuntimeException.class);
  }

  @Test
  void serverNameIsCheckedAgainstTheDialledHostOrTheAuthority() throws Exception {
    // the certificate names flashvec-internal only, not 127.0.0.1
    int port = serve(tls(internalOnly, ca.caPem(), ClientAuth.REQUIRE, null));
    GrpcTls byHost = tls(client, ca.caPem(), ClientAuth.REQUIRE, null);
    assertThatThrownBy(() -> call(byHost.channelBuilder("127.0.0.1:" + port).build()))
        .isInstanceOf(StatusRuntimeException.class);
    GrpcTls byName = tls(client, ca.caPem(), ClientAuth.REQUIRE, "flashvec-internal");
    assertThat(byName.authority()).isEqualTo("flashvec-internal");
    assertThat(call(byName.channelBuilder("127.0.0.1:" + port).build()).getReady()).isTrue();
  }

  @Test
  void rotatedFilesAreReloaded() throws Exception {
    Path cert = dir.resolve("rot/cert.pem");
    Path key = dir.resolve("rot/key.pem");
    Path caFile = dir.resolve("rot/ca.pem");
    Files.createDirectories(cert.getParent());
    Files.copy(server.cert(), cert, StandardCopyOption.REPLACE_EXISTING);
    Files.copy(server.key(), key, StandardCopyOption.REPLACE_EXISTING);
    Files.copy(ca.caPem(), caFile, StandardCopyOption.REPLACE_EXISTING);
    GrpcTls rotating = tls(new TestCertificates.Pem(cert, key), caFile, ClientAuth.NONE, null);
    int port = serve(rotating);
    GrpcTls oldTrust = tls(client, ca.caPem(), ClientAuth.REQUIRE, null);
    GrpcTls newTrust = tls(client, otherCa.caPem(), ClientAuth.REQUIRE, null);
    assertThat(call(oldTrust.channelBuilder("127.0.0.1:" + port).build()).getReady()).isTrue();

    // the server's certificate is replaced by one of the other CA; a broken key first is ignored
    Files.writeString(key, "garbage", StandardCharsets.US_ASCII);
    rotating.reloadIfChanged();
    assertThat(call(oldTrust.channelBuilder("127.0.0.1:" + port).build()).getReady()).isTrue();
    Files.copy(foreign.cert(), cert, StandardCopyOption.REPLACE_EXISTING);
    Files.copy(foreign.key(), key, StandardCopyOption.REPLACE_EXISTING);
    rotating.reloadIfChanged();
    assertThat(call(newTrust.channelBuilder("127.0.0.1:" + port).build()).getReady()).isTrue();
    assertThatThrownBy(() -> call(oldTrust.channelBuilder("127.0.0.1:" + port).build()))
        .isInstanceOf(StatusRuntimeException.class);
  }

  @Test
  void badFilesAreRejectedWithThePathAndTheReason() throws Exception {
    Path missing = dir.resolve("nope.pem");
    assertThatThrownBy(
            () ->
                GrpcTls.fromPem(
                    missing, server.key(), ca.caPem(), ClientAuth.REQUIRE, null, Duration.ZERO))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessage("the gRPC TLS certificate file does not exist [path=" + missing + "]");

    Path pkcs1 = dir.resolve("pkcs1.pem");
    Files.writeString(pkcs1, TestCertificates.pem("RSA PRIVATE KEY", new byte[] {1, 2, 3}));
    assertThatThrownBy(
            () ->
                GrpcTls.fromPem(
                    server.cert(), pkcs1, ca.caPem(), ClientAuth.REQUIRE, null, Duration.ZERO))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessage(
            "the gRPC TLS key is in PKCS#1 format (RSA PRIVATE KEY); convert it to PKCS#8:"
                + " openssl pkcs8 -topk8 -nocrypt -in KEY -out KEY.pk8 [path="
                + pkcs1
                + "]");

    assertThatThrownBy(
            () ->
                GrpcTls.fromPem(
                    server.cert(),
                    server.cert(),
                    ca.caPem(),
                    ClientAuth.REQUIRE,
                    null,
                    Duration.ZERO))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessage(
            "the gRPC TLS key file holds no PEM private key (BEGIN PRIVATE KEY) [path="
                + server.cert()
                + "]");

    assertThatThrownBy(
            () ->
                GrpcTls.fromPem(
                    server.key(),
                    server.key(),
                    ca.caPem(),
                    ClientAuth.REQUIRE,
                    null,
                    Duration.ZERO))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessage(
            "the gRPC TLS certificate file holds no PEM certificate (BEGIN CERTIFICATE) [path="
                + server.key()
                + "]");

    assertThatThrownBy(
            () ->
                GrpcTls.fromPem(
                    server.cert(),
                    client.key(),
                    ca.caPem(),
                    ClientAuth.REQUIRE,
                    null,
                    Duration.ZERO))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessage(
            "the gRPC TLS key does not belong to the certificate [cert="
                + server.cert()
                + ", key="
                + client.key()
                + "]");

    TestCertificates.Pem expired = ca.issue("expired", "ip:127.0.0.1", "-3d", 1);
    assertThatThrownBy(
            () ->
                GrpcTls.fromPem(
                    expired.cert(),
                    expired.key(),
                    ca.caPem(),
                    ClientAuth.REQUIRE,
                    null,
                    Duration.ZERO))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageStartingWith(
            "the gRPC TLS certificate is not valid now [path=" + expired.cert() + ", notBefore=");

    assertThatThrownBy(() -> ClientAuth.parse("mutual"))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessage("gRPC TLS client-auth must be require, optional or none [value=mutual]");
    assertThat(ClientAuth.parse(" Optional ")).isEqualTo(ClientAuth.OPTIONAL);
  }

  @Test
  void plaintextIsTheDefault() {
    GrpcTls p = GrpcTls.plaintext();
    assertThat(p.enabled()).isFalse();
    assertThat(p.serverCredentials()).isInstanceOf(io.grpc.InsecureServerCredentials.class);
    assertThat(p.channelCredentials()).isInstanceOf(io.grpc.InsecureChannelCredentials.class);
    p.close();
  }
}
