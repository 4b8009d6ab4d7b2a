package io.flashvec.loadgen.cli;

import io.flashvec.loadgen.client.PgVectorClient;
import io.flashvec.loadgen.client.QdrantRestClient;
import io.flashvec.loadgen.client.VectorDbClient;
import java.time.Duration;
import picocli.CommandLine.Option;

/** Options that pick and reach the system under test and its collection; a picocli mixin. */
public final class ClientOptions {
  @Option(names = "--collection", required = true, description = "Collection name.")
  String collection;

  @Option(
      names = "--url",
      defaultValue = "http://127.0.0.1:8080",
      description = "Server base URL (default: ${DEFAULT-VALUE}).")
  String url;

  @Option(
      names = "--target",
      defaultValue = "rest",
      description =
          "System under test: rest (FlashVec or Qdrant REST API) or pgvector (JDBC, see --jdbc-url)"
              + " (default: ${DEFAULT-VALUE}).")
  String target;

  @Option(
      names = "--system",
      description =
          "Name of the system under test as reports show it, e.g. \"Qdrant 1.12\" (default:"
              + " FlashVec when the server exports flashvec_ metrics, pgvector, else"
              + " Qdrant-compatible REST).")
  String system;

  @Option(
      names = "--jdbc-url",
      description =
          "JDBC URL for --target pgvector, e.g. jdbc:postgresql://127.0.0.1:5432/postgres?user=postgres.")
  String jdbcUrl;

  @Option(names = "--api-key", description = "Sent as header api-key.")
  String apiKey;

  @Option(
      names = "--timeout",
      defaultValue = "60s",
      converter = DurationConverter.class,
      description = "Per-request timeout (default: ${DEFAULT-VALUE}).")
  Duration timeout;

  @Option(
      names = "--http",
      defaultValue = "apache",
      description =
          "REST client implementation: apache (HttpClient 5 classic, least client CPU) or jdk"
              + " (java.net.http) (default: ${DEFAULT-VALUE}).")
  String http;

  @Option(
      names = "--payload-buckets",
      defaultValue = "0",
      description =
          "REST ingest: give point i the payload {\"bucket\": i %% N}, for filtered benchmarks"
              + " (0: no payload).")
  int payloadBuckets;

  @Option(
      names = "--filter-buckets-below",
      defaultValue = "0",
      description =
          "REST search: filter every query to bucket < X (selectivity X/N with --payload-buckets"
              + " N); recall is measured against the filtered ground truth (0: no filter).")
  int filterBucketsBelow;

  @Option(
      names = "--cpus",
      description =
          "Pin the load generator (all its threads) to these CPUs, a taskset list such as 1 or"
              + " 2-3, before it opens its clients; pin the server to others (taskset -c 0"
              + " ./flashvec run) so that a figure is the server's, not the client's. Default: no"
              + " pinning.")
  String cpus;

  /** Opens the client for the chosen target, first pinning this process to {@code --cpus}. */
  VectorDbClient open() {
    if (cpus != null) {
      CpuPinning.pinSelf(cpus);
    }
    return switch (target) {
      case "rest", "flashvec", "qdrant" -> {
        QdrantRestClient c =
            new QdrantRestClient(
                url,
                apiKey,
                timeout,
                QdrantRestClient.Http.valueOf(http.toUpperCase(java.util.Locale.ROOT)));
        c.setPayloadBuckets(payloadBuckets);
        if (filterBucketsBelow > 0) {
          c.setFilter(
              "{\"must\":[{\"key\":\"bucket\",\"range\":{\"lt\":" + filterBucketsBelow + "}}]}");
        }
        yield c;
      }
      case "pgvector" -> {
        if (jdbcUrl == null) {
          throw new IllegalArgumentException("--target pgvector needs --jdbc-url");
        }
        yield new PgVectorClient(jdbcUrl);
      }
      default ->
          throw new IllegalArgumentException(
              "unknown target [target=" + target + ", expected rest or pgvector]");
    };
  }

  /** Where results say they ran against. */
  String describe() {
    return target.equals("pgvector") ? jdbcUrl.replaceAll("password=[^&]*", "password=***") : url;
  }
}
