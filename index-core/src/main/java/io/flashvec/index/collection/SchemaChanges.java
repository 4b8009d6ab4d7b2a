package io.flashvec.index.collection;

import io.flashvec.index.payload.PayloadSchema;
import io.flashvec.index.shard.Shard;
import io.flashvec.storage.CrashPoint;
import io.flashvec.storage.FileIO;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.UnaryOperator;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The payload schema of shards that share one: a collection's shards, or the one shard of a cluster
 * replica. The schema is committed as a file in their directory ({@link PayloadSchema#write}) and
 * every shard builds the indexes it names.
 *
 * <p>A change with {@code wait} builds every segment's indexes first and commits the schema after,
 * so that an index shows in {@link #current()} (and survives a crash) only once it is complete; a
 * crash before the commit leaves the old schema. A change without {@code wait} is committed at once
 * (it is acknowledged, so it must survive a crash) and its indexes are built in the background, or
 * at the next open after a crash. Queries use the previous indexes until each segment's new one is
 * ready.
 *
 * <p>Thread-safe.
 */
public final class SchemaChanges {

  private static final Logger LOG = LoggerFactory.getLogger(SchemaChanges.class);

  private final String name;
  private final Path dir;
  private final FileIO io;
  private final List<Shard> shards;
  private volatile PayloadSchema committed;

  /** Serialises index builds of schema changes: of two quick changes, the later one wins. */
  private final Object apply = new Object();

  /** Serialises commits of the schema (short: one small atomic file write). */
  private final Object commit = new Object();

  /** Background index builds of changes committed without {@code wait}. */
  private final AtomicInteger builds = new AtomicInteger();

  private SchemaChanges(
      String name, Path dir, FileIO io, List<Shard> shards, PayloadSchema committed) {
    this.name = name;
    this.dir = dir;
    this.io = io;
    this.shards = List.copyOf(shards);
    this.committed = committed;
  }

  /**
   * Reads the schema committed in {@code dir} and brings every shard to it (each segment's indexes
   * are opened, missing ones built).
   *
   * @param name what the shards hold, for logs
   */
  public static SchemaChanges open(String name, Path dir, FileIO io, List<Shard> shards) {
    PayloadSchema schema;
    try {
      schema = PayloadSchema.read(io, dir);
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
    for (Shard s : shards) {
      s.setPayloadSchema(schema);
    }
    return new SchemaChanges(name, dir, io, shards, schema);
  }

  /** The committed schema. */
  public PayloadSchema current() {
    return committed;
  }

  /** Whether a change committed without {@code wait} is still building its indexes. */
  public boolean building() {
    return builds.get() > 0;
  }

  /**
   * Applies {@code change} to the committed schema, as the class comment says; returns whether the
   * indexes were built before this returned ({@code wait}).
   *
   * @throws io.flashvec.index.InsufficientStorageException if the new indexes would not fit above
   *     the free-space reserve
   */
  public boolean change(UnaryOperator<PayloadSchema> change, boolean wait) {
    requireSpaceForIndexes(change.apply(committed));
    if (wait) {
      synchronized (apply) {
        PayloadSchema target = change.apply(committed);
        if (!target.equals(committed)) {
          for (Shard s : shards) {
            s.preparePayloadSchema(target); // built, not used: a crash now leaves the old schema
          }
          io.crashPoint(CrashPoint.PAYLOAD_SCHEMA_PREPARED);
        }
        // Applied to the schema committed by then: a change without wait may have come first.
        commit(change);
        applyCommitted(); // opens what was prepared, removes the old indexes
      }
      return true;
    }
    commit(change);
    builds.incrementAndGet();
    Thread.ofVirtual()
        .name("payload-index-" + name)
        .start(
            () -> {
              try {
                synchronized (apply) {
                  applyCommitted();
                }
              } catch (RuntimeException e) {
                LOG.error("payload index build failed [collection={}]", name, e);
              } finally {
                builds.decrementAndGet();
              }
            });
    return false;
  }

  /**
   * Refuses (507) a schema change whose indexes would not fit above the free-space reserve: every
   * sealed segment's index is rebuilt for the new schema, so it is better refused than recorded
   * with indexes that cannot be built.
   */
  private void requireSpaceForIndexes(PayloadSchema next) {
    if (next.isEmpty() || next.equals(committed)) {
      return;
    }
    long need = 0;
    for (Shard s : shards) {
      need += s.payloadIndexBytes();
    }
    if (need > 0) {
      shards.getFirst().requireSpace(need + need / 4 + (1 << 20), "payload index creation");
    }
  }

  /** Durably replaces the schema by {@code change} of the committed one: the commit point. */
  private void commit(UnaryOperator<PayloadSchema> change) {
    synchronized (commit) {
      PayloadSchema next = change.apply(committed);
      if (next.equals(committed)) {
        return;
      }
      try {
        next.write(io, dir);
      } catch (IOException e) {
        throw new UncheckedIOException(
            "cannot write the payload schema [collection=" + name + "]", e);
      }
      io.crashPoint(CrashPoint.PAYLOAD_SCHEMA_COMMITTED);
      committed = next;
    }
  }

  /** Brings every shard's indexes to the newest committed schema (holding {@link #apply}). */
  private void applyCommitted() {
    PayloadSchema schema = committed;
    for (Shard s : shards) {
      s.setPayloadSchema(schema);
    }
  }
}
