package io.flashvec.cluster.transport;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.flashvec.index.FlashVecException;
import io.flashvec.index.InsufficientMemoryException;
import io.flashvec.index.InvalidInputException;
import io.flashvec.index.NotFoundException;
import io.flashvec.index.TooLargeException;
import io.grpc.CallOptions;
import io.grpc.ManagedChannel;
import io.grpc.MethodDescriptor;
import io.grpc.Server;
import io.grpc.ServerServiceDefinition;
import io.grpc.StatusRuntimeException;
import io.grpc.inprocess.InProcessChannelBuilder;
import io.grpc.inprocess.InProcessServerBuilder;
import io.grpc.stub.ClientCalls;
import io.grpc.stub.ServerCalls;
import java.io.ByteArrayInputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * A server-side failure crosses a real (in-process) gRPC call and comes back as the HTTP status the
 * serving node meant, trailers included.
 */
class GrpcErrorsTest {

  private static final MethodDescriptor.Marshaller<byte[]> BYTES =
      new MethodDescriptor.Marshaller<>() {
        @Override
        public InputStream stream(byte[] value) {
          return new ByteArrayInputStream(value);
        }

        @Override
        public byte[] parse(InputStream stream) {
          try {
            return stream.readAllBytes();
          } catch (IOException e) {
            throw new UncheckedIOException(e);
          }
        }
      };

  private static final MethodDescriptor<byte[], byte[]> FAIL =
      MethodDescriptor.<byte[], byte[]>newBuilder()
          .setType(MethodDescriptor.MethodType.UNARY)
          .setFullMethodName("test.Errors/Fail")
          .setRequestMarshaller(BYTES)
          .setResponseMarshaller(BYTES)
          .build();

  private volatile Throwable toThrow;
  private Server server;
  private ManagedChannel channel;

  @BeforeEach
  void start() throws IOException {
    String name = InProcessServerBuilder.generateName();
    server =
        InProcessServerBuilder.forName(name)
            .directExecutor()
            .addService(
                ServerServiceDefinition.builder("test.Errors")
                    .addMethod(
                        FAIL,
                        ServerCalls.asyncUnaryCall(
                            (req, out) -> out.onError(GrpcErrors.toStatus(toThrow, "[test]"))))
                    .build())
            .build()
            .start();
    channel = InProcessChannelBuilder.forName(name).directExecutor().build();
  }

  @AfterEach
  void stop() throws InterruptedException {
    channel.shutdownNow().awaitTermination(5, TimeUnit.SECONDS);
    server.shutdownNow().awaitTermination(5, TimeUnit.SECONDS);
  }

  private StatusRuntimeException call(Throwable t) {
    toThrow = t;
    return assertThrows(
        StatusRuntimeException.class,
        () -> ClientCalls.blockingUnaryCall(channel, FAIL, CallOptions.DEFAULT, new byte[0]));
  }

  @Test
  void memoryOrDiskExhaustedStays507AndIsNotRetriedElsewhere() {
    StatusRuntimeException e = call(new InsufficientMemoryException("resident index is full"));
    assertFalse(GrpcErrors.retryable(e), "another replica cannot take the primary's write");
    FlashVecException client = GrpcErrors.clientError(e);
    assertNotNull(client);
    assertEquals(507, client.httpStatus());
    assertTrue(client.getMessage().contains("resident index is full"), client.getMessage());
  }

  @Test
  void tooLargeStays413() {
    FlashVecException client = GrpcErrors.clientError(call(new TooLargeException("too big")));
    assertInstanceOf(TooLargeException.class, client);
    assertEquals(413, client.httpStatus());
  }

  @Test
  void typedClientErrorsKeepTheirClass() {
    assertInstanceOf(
        InvalidInputException.class,
        GrpcErrors.clientError(call(new InvalidInputException("bad vector"))));
    assertInstanceOf(
        NotFoundException.class, GrpcErrors.clientError(call(new NotFoundException("no such"))));
  }

  @Test
  void internalFailuresAreAFailedReplica() {
    StatusRuntimeException e = call(new IllegalStateException("boom"));
    assertTrue(GrpcErrors.retryable(e));
    assertEquals(null, GrpcErrors.clientError(e));
    assertEquals(-1, GrpcErrors.httpStatus(e));
  }
}
