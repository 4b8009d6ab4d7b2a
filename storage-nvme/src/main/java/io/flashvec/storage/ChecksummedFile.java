package io.flashvec.storage;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.charset.StandardCharsets;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.util.zip.CRC32C;

/**
 * Small files (segment metadata, deletion bitmaps, manifests) with a header, a body and a checksum
 * footer, written atomically and verified completely when read.
 *
 * <pre>
 * header (little-endian)
 *   u32   magic 0x31465646 ("FVF1")
 *   u16   length of the format name, then the name in UTF-8 (e.g. "segment-meta")
 *   u32   format version
 *   u64   segment id (or 0 when the file belongs to no segment)
 * body    opaque bytes
 * footer
 *   u64   body length
 *   u32   CRC32C of header and body
 *   u32   magic 0x544F4F46 ("FOOT")
 * </pre>
 */
public final class ChecksummedFile {

  static final int MAGIC = 0x31465646;
  static final int FOOTER_MAGIC = 0x544F4F46;
  static final int FOOTER_BYTES = 16;

  /** A verified file's header fields and body. */
  public record Contents(String format, int version, long segmentId, ByteBuffer body) {}

  private ChecksummedFile() {}

  /** Atomically writes a file (temp, fsync, rename, fsync directory). */
  public static void write(
      FileIO io, Path path, String format, int version, long segmentId, byte[] body)
      throws IOException {
    byte[] name = format.getBytes(StandardCharsets.UTF_8);
    int headerBytes = 4 + 2 + name.length + 4 + 8;
    ByteBuffer b =
        ByteBuffer.allocate(headerBytes + body.length + FOOTER_BYTES)
            .order(ByteOrder.LITTLE_ENDIAN);
    b.putInt(MAGIC).putShort((short) name.length).put(name).putInt(version).putLong(segmentId);
    b.put(body);
    CRC32C crc = new CRC32C();
    crc.update(b.array(), 0, b.position());
    b.putLong(body.length).putInt((int) crc.getValue()).putInt(FOOTER_MAGIC);
    AtomicFiles.write(io, path, b.array());
  }

  /**
   * Reads and verifies a file.
   *
   * @throws CorruptFileException if the magic, lengths or checksum do not match, or the format name
   *     differs from {@code expectedFormat}
   * @throws FormatVersionException if the version is outside {@code [minVersion, maxVersion]}
   * @throws NoSuchFileException if it does not exist
   */
  public static Contents read(
      FileIO io, Path path, String expectedFormat, int minVersion, int maxVersion)
      throws IOException {
    byte[] all = io.readAllBytes(path);
    ByteBuffer b = ByteBuffer.wrap(all).order(ByteOrder.LITTLE_ENDIAN);
    if (all.length < 4 + 2 + 4 + 8 + FOOTER_BYTES || b.getInt() != MAGIC) {
      throw new CorruptFileException(
          "not a FlashVec file or truncated [bytes=" + all.length + "]", path);
    }
    int nameLen = Short.toUnsignedInt(b.getShort());
    if (nameLen > all.length - b.position() - 12 - FOOTER_BYTES) {
      throw new CorruptFileException("header is truncated [nameLength=" + nameLen + "]", path);
    }
    byte[] name = new byte[nameLen];
    b.get(name);
    String format = new String(name, StandardCharsets.UTF_8);
    int version = b.getInt();
    long segmentId = b.getLong();
    int bodyStart = b.position();
    int footer = all.length - FOOTER_BYTES;
    ByteBuffer f = ByteBuffer.wrap(all, footer, FOOTER_BYTES).order(ByteOrder.LITTLE_ENDIAN);
    long bodyLen = f.getLong();
    int storedCrc = f.getInt();
    int footerMagic = f.getInt();
    if (footerMagic != FOOTER_MAGIC || bodyLen != footer - bodyStart) {
      throw new CorruptFileException(
          "footer is missing or does not match the file length [bodyLength="
              + bodyLen
              + ", actual="
              + (footer - bodyStart)
              + "]",
          path);
    }
    CRC32C crc = new CRC32C();
    crc.update(all, 0, footer);
    if ((int) crc.getValue() != storedCrc) {
      throw new CorruptFileException(
          "checksum mismatch [stored="
              + Integer.toHexString(storedCrc)
              + ", actual="
              + Long.toHexString(crc.getValue())
              + "]",
          path);
    }
    if (!format.equals(expectedFormat)) {
      throw new CorruptFileException(
          "unexpected file format [expected=" + expectedFormat + ", got=" + format + "]", path);
    }
    if (version < minVersion || version > maxVersion) {
      throw new FormatVersionException(path, format, version, minVersion, maxVersion);
    }
    return new Contents(
        format,
        version,
        segmentId,
        ByteBuffer.wrap(all, bodyStart, footer - bodyStart).slice().order(ByteOrder.LITTLE_ENDIAN));
  }

  /** CRC32C and length of a whole (possibly large) file, streamed. */
  public static long[] crcAndLength(FileIO io, Path path) throws IOException {
    CRC32C crc = new CRC32C();
    long len = 0;
    try (var ch = io.open(path, java.nio.file.StandardOpenOption.READ)) {
      ByteBuffer buf = ByteBuffer.allocate(1 << 20);
      int n;
      while ((n = ch.read(buf.clear())) > 0) {
        crc.update(buf.array(), 0, n);
        len += n;
      }
    }
    return new long[] {crc.getValue() & 0xFFFFFFFFL, len};
  }
}
