package io.flashvec.storage;

/**
 * The named points inside the engine's durable steps at which a crash test can stop the process.
 *
 * <p>Code that performs a durable step reports each point to its {@link FileIO} with {@link
 * FileIO#crashPoint(CrashPoint)}; the real file system ignores the call. A test {@code FileIO} (the
 * crash simulator in the test jar) halts there and then drops what was never fsynced, and a server
 * started with {@code flashvec.testing.crash-point} halts the JVM there ({@link HaltingFileIO}), so
 * a recovery can be checked after a crash at exactly that point of the step.
 *
 * <p>A new durable step adds its constants here (one line each, with the state the files are in at
 * that point) and one {@code io.crashPoint(...)} line where the step reaches it. Recovery from
 * every point must keep every acknowledged write, never show an unacknowledged schema change, and
 * open: whatever the step left half done is rolled forward or removed at start-up.
 *
 * <p>The constants are grouped by the module that reports them; storage code does not interpret
 * them.
 */
public enum CrashPoint {

  // ---- storage-nvme: the write-ahead log, atomic files, tree deletion

  /** A WAL record is about to be written: nothing of it is in the log. */
  WAL_APPEND_BEFORE_WRITE,
  /** A WAL record is written to the OS, not fsynced, its writer not acknowledged. */
  WAL_APPEND_WRITTEN,
  /** WAL records are fsynced; their writers are not yet acknowledged. */
  WAL_FSYNCED,
  /** A full WAL segment is forced and closed; the next segment does not exist yet. */
  WAL_ROLL_OLD_CLOSED,
  /** A new WAL segment (log start or roll) has its header, neither fsynced nor its dir entry. */
  WAL_SEGMENT_CREATED,
  /** A WAL segment below the checkpoint is deleted, the directory not fsynced; more may follow. */
  WAL_TRUNCATE_SEGMENT_DELETED,
  /** An atomically replaced file's temp copy is written and fsynced, not yet renamed. */
  ATOMIC_WRITE_TEMP_WRITTEN,
  /** An atomically replaced file is renamed into place, its directory not yet fsynced. */
  ATOMIC_WRITE_RENAMED,
  /** The first entry of a directory tree being deleted is gone, the rest is still there. */
  TREE_DELETE_PARTIAL,

  // ---- index-core: seal, segment build and install, checkpoint, compaction, payload indexes

  /** A growing segment is frozen and a new one takes writes; its data is only in the WAL. */
  SEAL_FROZEN,
  /** A segment's files are written and fsynced in {@code seg-N.tmp/}, not yet renamed. */
  SEGMENT_BUILD_FILES_WRITTEN,
  /** A built segment is renamed to {@code seg-N/}; no manifest lists it. */
  SEGMENT_BUILD_RENAMED,
  /** A built segment replaced its frozen growing segment in memory; nothing of it is committed. */
  SEGMENT_INSTALLED,
  /** A checkpoint wrote the deletion bitmaps; the manifest is the previous one. */
  CHECKPOINT_BITMAPS_WRITTEN,
  /** A checkpoint wrote the manifest; the WAL below it is not yet truncated. */
  CHECKPOINT_MANIFEST_WRITTEN,
  /** A compaction's segment is built, opened and payload-indexed; no manifest lists it. */
  COMPACTION_BUILT,
  /** The manifest without a compaction's sources is written; their files are still there. */
  COMPACTION_COMMITTED,
  /** A replaced segment lost its last reference; its directory is about to be deleted. */
  SEGMENT_FILES_DELETING,
  /** Lucene wrote a segment's payload index into {@code payload-<hash>.tmp/}, uncommitted. */
  PAYLOAD_INDEX_WRITTEN,
  /** A segment's payload index is committed (fsynced) in its {@code .tmp} directory. */
  PAYLOAD_INDEX_COMMITTED,
  /** A segment's payload index is renamed to {@code payload-<hash>/}, directory not fsynced. */
  PAYLOAD_INDEX_RENAMED,
  /** Every segment's index for a new payload schema is built; the schema is not committed. */
  PAYLOAD_SCHEMA_PREPARED,
  /** A new payload schema is committed to its file, not yet in effect nor acknowledged. */
  PAYLOAD_SCHEMA_COMMITTED,

  // ---- cluster: collection lifecycle in the metadata store

  /** The metadata lists a new collection; its directory does not exist yet. */
  COLLECTION_CREATE_METADATA_WRITTEN,
  /** The metadata no longer lists a deleted collection; its files are still there. */
  COLLECTION_DELETE_METADATA_REMOVED,
  /** A collection's new settings are persisted, not yet applied nor acknowledged. */
  COLLECTION_TUNING_WRITTEN;

  /**
   * The point named {@code name} (its constant's name, any case, {@code -} for {@code _}).
   *
   * @throws IllegalArgumentException naming the value and the known points when there is none
   */
  public static CrashPoint parse(String name) {
    String n = name.trim().replace('-', '_').toUpperCase(java.util.Locale.ROOT);
    for (CrashPoint p : values()) {
      if (p.name().equals(n)) {
        return p;
      }
    }
    throw new IllegalArgumentException(
        "unknown crash point [value="
            + name
            + ", known="
            + java.util.Arrays.toString(values())
            + "]");
  }
}
