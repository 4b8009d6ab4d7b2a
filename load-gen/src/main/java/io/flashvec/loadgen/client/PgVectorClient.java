package io.flashvec.loadgen.client;

import io.flashvec.loadgen.dataset.Distance;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.regex.Pattern;

/**
 * PostgreSQL + pgvector as a system under test, over JDBC (HNSW, m=16, ef_construction=64 by
 * default, as the peer comparisons use it). A collection is a table {@code (id bigint primary key,
 * embedding vector(D))}; {@code --index hnsw} creates an HNSW index with the metric's operator
 * class; {@code search_list} is applied as {@code hnsw.ef_search}.
 *
 * <p>Thread-safe: each call borrows a connection from a pool (created on demand, one per concurrent
 * caller) and returns it; {@link #close()} closes them all. Has no Prometheus metrics.
 */
public final class PgVectorClient implements VectorDbClient {
  private static final Pattern NAME = Pattern.compile("[A-Za-z_][A-Za-z0-9_]{0,62}");

  private final String jdbcUrl;
  private final ConcurrentLinkedQueue<Conn> pool = new ConcurrentLinkedQueue<>();
  private final List<Conn> all = new ArrayList<>();
  private final Map<String, Distance> distances = new ConcurrentHashMap<>();

  /** A pooled connection and the {@code hnsw.ef_search} it was last set to. */
  private static final class Conn {
    final Connection c;
    int efSearch = -1;

    Conn(Connection c) {
      this.c = c;
    }
  }

  /** Creates a client; connections are opened lazily. */
  public PgVectorClient(String jdbcUrl) {
    this.jdbcUrl = jdbcUrl;
  }

  @Override
  public String target() {
    return "pgvector";
  }

  @Override
  public boolean collectionExists(String collection) {
    return withConn(
        c -> {
          try (PreparedStatement ps = c.c.prepareStatement("SELECT to_regclass(?) IS NOT NULL")) {
            ps.setString(1, table(collection));
            try (ResultSet rs = ps.executeQuery()) {
              rs.next();
              return rs.getBoolean(1);
            }
          }
        });
  }

  @Override
  public void createCollection(
      String collection,
      int dim,
      Distance distance,
      String indexType,
      Map<String, String> indexParams) {
    String t = table(collection);
    distances.put(t, distance);
    withConn(
        c -> {
          try (Statement st = c.c.createStatement()) {
            st.execute("CREATE EXTENSION IF NOT EXISTS vector");
            st.execute(
                "CREATE TABLE IF NOT EXISTS "
                    + t
                    + " (id bigint PRIMARY KEY, embedding vector("
                    + dim
                    + ") NOT NULL)");
            if (indexType != null && !indexType.equals("flat")) {
              if (!indexType.equals("hnsw")) {
                throw new IllegalArgumentException(
                    "pgvector supports index types hnsw and flat [index=" + indexType + "]");
              }
              String m = indexParams.getOrDefault("m", "16");
              String ef = indexParams.getOrDefault("ef_construction", "64");
              st.execute(
                  "CREATE INDEX IF NOT EXISTS "
                      + t
                      + "_hnsw ON "
                      + t
                      + " USING hnsw (embedding "
                      + opclass(distance)
                      + ") WITH (m = "
                      + Integer.parseInt(m)
                      + ", ef_construction = "
                      + Integer.parseInt(ef)
                      + ")");
            }
          }
          return null;
        });
  }

  @Override
  public void deleteCollection(String collection) {
    withConn(
        c -> {
          try (Statement st = c.c.createStatement()) {
            st.execute("DROP TABLE IF EXISTS " + table(collection));
          }
          return null;
        });
  }

  @Override
  public void upsert(String collection, long[] ids, float[][] vectors) {
    String sql =
        "INSERT INTO "
            + table(collection)
            + " (id, embedding) VALUES (?, ?::vector)"
            + " ON CONFLICT (id) DO UPDATE SET embedding = EXCLUDED.embedding";
    withConn(
        c -> {
          try (PreparedStatement ps = c.c.prepareStatement(sql)) {
            for (int i = 0; i < ids.length; i++) {
              ps.setLong(1, ids[i]);
              ps.setString(2, literal(vectors[i]));
              ps.addBatch();
            }
            ps.executeBatch();
          }
          return null;
        });
  }

  @Override
  public void delete(String collection, long[] ids) {
    withConn(
        c -> {
          try (PreparedStatement ps =
              c.c.prepareStatement("DELETE FROM " + table(collection) + " WHERE id = ANY (?)")) {
            Long[] boxed = new Long[ids.length];
            for (int i = 0; i < ids.length; i++) {
              boxed[i] = ids[i];
            }
            ps.setArray(1, c.c.createArrayOf("bigint", boxed));
            ps.executeUpdate();
          }
          return null;
        });
  }

  @Override
  public PreparedVector prepare(float[] vector) {
    return new PreparedVector(vector, literal(vector));
  }

  @Override
  public long[] search(String collection, PreparedVector vector, int k, SearchParams params) {
    String t = table(collection);
    Distance d = distances.computeIfAbsent(t, this::detectDistance);
    String sql =
        "SELECT id FROM " + t + " ORDER BY embedding " + operator(d) + " ?::vector LIMIT " + k;
    return withConn(
        c -> {
          if (params != null && params.searchList() != null && c.efSearch != params.searchList()) {
            try (Statement st = c.c.createStatement()) {
              st.execute("SET hnsw.ef_search = " + params.searchList());
            }
            c.efSearch = params.searchList();
          }
          try (PreparedStatement ps = c.c.prepareStatement(sql)) {
            ps.setString(1, vector.json());
            try (ResultSet rs = ps.executeQuery()) {
              long[] out = new long[k];
              int n = 0;
              while (rs.next() && n < k) {
                out[n++] = rs.getLong(1);
              }
              return n == k ? out : java.util.Arrays.copyOf(out, n);
            }
          }
        });
  }

  @Override
  public CollectionInfo collectionInfo(String collection) {
    return withConn(
        c -> {
          try (Statement st = c.c.createStatement();
              ResultSet rs = st.executeQuery("SELECT count(*) FROM " + table(collection))) {
            rs.next();
            // pgvector builds its index synchronously on insert: always fully indexed
            return new CollectionInfo("green", rs.getLong(1), rs.getLong(1));
          }
        });
  }

  @Override
  public String metricsText() {
    return null;
  }

  @Override
  public void close() {
    synchronized (all) {
      for (Conn c : all) {
        try {
          c.c.close();
        } catch (SQLException e) {
          // closing: nothing useful to do
        }
      }
      all.clear();
    }
    pool.clear();
  }

  /** pgvector's text literal of a vector: {@code [1.0,2.5,...]}. */
  static String literal(float[] v) {
    StringBuilder sb = new StringBuilder(v.length * 10);
    sb.append('[');
    for (int i = 0; i < v.length; i++) {
      if (i > 0) {
        sb.append(',');
      }
      sb.append(v[i]);
    }
    return sb.append(']').toString();
  }

  static String operator(Distance d) {
    return switch (d) {
      case COSINE -> "<=>";
      case DOT -> "<#>";
      case EUCLID -> "<->";
    };
  }

  static String opclass(Distance d) {
    return switch (d) {
      case COSINE -> "vector_cosine_ops";
      case DOT -> "vector_ip_ops";
      case EUCLID -> "vector_l2_ops";
    };
  }

  static String table(String collection) {
    if (!NAME.matcher(collection).matches()) {
      throw new IllegalArgumentException(
          "collection name is not a plain SQL identifier [collection=" + collection + "]");
    }
    return collection.toLowerCase(java.util.Locale.ROOT);
  }

  private Distance detectDistance(String t) {
    return withConn(
        c -> {
          try (PreparedStatement ps =
              c.c.prepareStatement("SELECT indexdef FROM pg_indexes WHERE tablename = ?")) {
            ps.setString(1, t);
            try (ResultSet rs = ps.executeQuery()) {
              while (rs.next()) {
                String def = rs.getString(1);
                if (def.contains("vector_ip_ops")) {
                  return Distance.DOT;
                }
                if (def.contains("vector_l2_ops")) {
                  return Distance.EUCLID;
                }
                if (def.contains("vector_cosine_ops")) {
                  return Distance.COSINE;
                }
              }
            }
          }
          return Distance.COSINE;
        });
  }

  private interface SqlCall<T> {
    T call(Conn c) throws SQLException;
  }

  private <T> T withConn(SqlCall<T> call) {
    Conn c = pool.poll();
    try {
      if (c == null) {
        c = new Conn(DriverManager.getConnection(jdbcUrl));
        synchronized (all) {
          all.add(c);
        }
      }
      T out = call.call(c);
      pool.add(c);
      return out;
    } catch (SQLException e) {
      if (c != null) {
        pool.add(c);
      }
      throw new ServerException("pgvector call failed [error=" + e.getMessage() + "]", 0);
    }
  }
}
