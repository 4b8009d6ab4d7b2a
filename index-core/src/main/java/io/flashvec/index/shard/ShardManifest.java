package io.flashvec.index.shard;

import io.flashvec.storage.ChecksummedFile;
import io.flashvec.storage.FileIO;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;

/**
 * A shard's durable state besides its WAL: which sealed segments exist and up to which WAL sequence
 * number they (with their deletion bitmaps) cover. Stored as {@code manifest.fvs}, a {@link
 * ChecksummedFile} ({@code shard-manifest} v1) replaced atomically:
 *
 * <pre>
 * u64 checkpointSeq | u32 nextSegmentId | u32 count | count * u32 segmentId
 * </pre>
 */
public record ShardManifest(long checkpointSeq, int nextSegmentId, List<Integer> segmentIds) {

  static final String FILE = "manifest.fvs";
  static final String FORMAT = "shard-manifest";
  static final int VERSION = 1;

  /** Reads a shard's manifest; an empty manifest when there is none yet. */
  public static ShardManifest read(FileIO io, Path shardDir) throws IOException {
    Path p = shardDir.resolve(FILE);
    if (!Files.exists(p)) {
      return new ShardManifest(0, 0, List.of());
    }
    ByteBuffer b = ChecksummedFile.read(io, p, FORMAT, VERSION, VERSION).body();
    long cp = b.getLong();
    int next = b.getInt();
    int n = b.getInt();
    List<Integer> ids = new ArrayList<>(n);
    for (int i = 0; i < n; i++) {
      ids.add(b.getInt());
    }
    return new ShardManifest(cp, next, ids);
  }

  /** Atomically replaces a shard's manifest. */
  public static void write(FileIO io, Path shardDir, ShardManifest m) throws IOException {
    ByteBuffer b =
        ByteBuffer.allocate(8 + 4 + 4 + 4 * m.segmentIds().size()).order(ByteOrder.LITTLE_ENDIAN);
    b.putLong(m.checkpointSeq()).putInt(m.nextSegmentId()).putInt(m.segmentIds().size());
    for (int id : m.segmentIds()) {
      b.putInt(id);
    }
    ChecksummedFile.write(io, shardDir.resolve(FILE), FORMAT, VERSION, 0, b.array());
  }
}
