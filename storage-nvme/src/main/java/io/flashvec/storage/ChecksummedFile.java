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

  /**
   * Writes a file of {@link ChecksummedFile}'s layout whose body is too large to hold twice in
   * memory (a field graph's codes and adjacency): the body is streamed through a buffer into {@code
   * <path>.tmp}, checksummed on the way, and {@link #commit} fsyncs it, renames it over {@code
   * path} and fsyncs the directory, as {@link AtomicFiles#write} does. {@link #close} without a
   * commit removes the temp file; a process that dies first leaves it, and the next open of the
   * segment removes {@code *.tmp}. Not thread-safe.
   */
  public static final class Writer implements java.io.Closeable {
    private final FileIO io;
    private final Path path;
    private final Path tmp;
    private final java.nio.channels.FileChannel ch;
    private final ByteBuffer buf = ByteBuffer.allocate(1 << 20).order(ByteOrder.LITTLE_ENDIAN);
    private final CRC32C crc = new CRC32C();
    private final long headerBytes;
    private long flushed;
    private boolean committed;

    private Writer(FileIO io, Path path, String format, int version, long segmentId)
        throws IOException {
      this.io = io;
      this.path = path;
      this.tmp = path.toAbsolutePath().getParent().resolve(path.getFileName() + ".tmp");
      this.ch =
          io.open(
              tmp,
              java.nio.file.StandardOpenOption.CREATE,
              java.nio.file.StandardOpenOption.WRITE,
              java.nio.file.StandardOpenOption.TRUNCATE_EXISTING);
      byte[] name = format.getBytes(StandardCharsets.UTF_8);
      buf.putInt(MAGIC).putShort((short) name.length).put(name).putInt(version).putLong(segmentId);
      this.headerBytes = buf.position();
    }

    /** Starts writing {@code path}'s temp file: the header is written, the body is next. */
    public static Writer create(FileIO io, Path path, String format, int version, long segmentId)
        throws IOException {
      return new Writer(io, path, format, version, segmentId);
    }

    private void room(int bytes) throws IOException {
      if (buf.remaining() < bytes) {
        flush();
      }
    }

    private void flush() throws IOException {
      buf.flip();
      crc.update(buf.array(), 0, buf.limit());
      flushed += buf.limit();
      io.writeFully(ch, buf);
      buf.clear();
    }

    public Writer putByte(byte v) throws IOException {
      room(1);
      buf.put(v);
      return this;
    }

    public Writer putShort(short v) throws IOException {
      room(2);
      buf.putShort(v);
      return this;
    }

    public Writer putInt(int v) throws IOException {
      room(4);
      buf.putInt(v);
      return this;
    }

    public Writer putLong(long v) throws IOException {
      room(8);
      buf.putLong(v);
      return this;
    }

    public Writer putFloat(float v) throws IOException {
      room(4);
      buf.putFloat(v);
      return this;
    }

    public Writer put(byte[] a, int off, int len) throws IOException {
      while (len > 0) {
        room(1);
        int n = Math.min(len, buf.remaining());
        buf.put(a, off, n);
        off += n;
        len -= n;
      }
      return this;
    }

    public Writer putInts(int[] a, int off, int len) throws IOException {
      while (len > 0) {
        room(4);
        int n = Math.min(len, buf.remaining() / 4);
        buf.asIntBuffer().put(a, off, n);
        buf.position(buf.position() + 4 * n);
        off += n;
        len -= n;
      }
      return this;
    }

    public Writer putLongs(long[] a, int off, int len) throws IOException {
      while (len > 0) {
        room(8);
        int n = Math.min(len, buf.remaining() / 8);
        buf.asLongBuffer().put(a, off, n);
        buf.position(buf.position() + 8 * n);
        off += n;
        len -= n;
      }
      return this;
    }

    public Writer putFloats(float[] a, int off, int len) throws IOException {
      while (len > 0) {
        room(4);
        int n = Math.min(len, buf.remaining() / 4);
        buf.asFloatBuffer().put(a, off, n);
        buf.position(buf.position() + 4 * n);
        off += n;
        len -= n;
      }
      return this;
    }

    /** Bytes of the body so far. */
    public long bodyBytes() {
      return flushed + buf.position() - headerBytes;
    }

    /** The file offset of the body's first byte (the header's length). */
    public long bodyOffset() {
      return headerBytes;
    }

    /**
     * Writes the footer, fsyncs the temp file, renames it over the target and fsyncs the directory.
     */
    public void commit() throws IOException {
      long body = bodyBytes();
      flush();
      buf.putLong(body).putInt((int) crc.getValue()).putInt(FOOTER_MAGIC);
      buf.flip();
      io.writeFully(ch, buf);
      io.force(ch, true);
      ch.close();
      io.atomicMove(tmp, path);
      committed = true;
      io.fsyncDirectory(path.toAbsolutePath().getParent());
    }

    /** Closes the file; without a {@link #commit} the temp file is removed. */
    @Override
    public void close() throws IOException {
      if (ch.isOpen()) {
        ch.close();
      }
      if (!committed) {
        io.deleteIfExists(tmp);
      }
    }
  }

  /**
   * Reads a file of {@link ChecksummedFile}'s layout without holding it whole in memory: the body
   * is read through a buffer and checksummed on the way, and {@link #finish} checks the footer and
   * the checksum once it is consumed. Until {@link #finish} returns, nothing read may be trusted.
   * Not thread-safe.
   */
  public static final class Reader implements java.io.Closeable {
    private final Path path;
    private final java.nio.channels.FileChannel ch;
    private final ByteBuffer buf = ByteBuffer.allocate(1 << 20).order(ByteOrder.LITTLE_ENDIAN);
    private final CRC32C crc = new CRC32C();
    private final long bodyEnd;
    private final long bodyStart;
    private long pos; // file offset of the byte after the buffer's contents
    private final String format;
    private final int version;
    private final long segmentId;

    private Reader(FileIO io, Path path, String expectedFormat, int minVersion, int maxVersion)
        throws IOException {
      this.path = path;
      this.ch = io.open(path, java.nio.file.StandardOpenOption.READ);
      try {
        long size = ch.size();
        this.bodyEnd = size - FOOTER_BYTES;
        buf.limit(0);
        if (size < 4 + 2 + 4 + 8 + FOOTER_BYTES || getInt() != MAGIC) {
          throw new CorruptFileException(
              "not a FlashVec file or truncated [bytes=" + size + "]", path);
        }
        int nameLen = Short.toUnsignedInt(getShort());
        if (nameLen > 1024) {
          throw new CorruptFileException("header is truncated [nameLength=" + nameLen + "]", path);
        }
        byte[] name = new byte[nameLen];
        get(name, 0, nameLen);
        this.format = new String(name, StandardCharsets.UTF_8);
        this.version = getInt();
        this.segmentId = getLong();
        this.bodyStart = offset();
        if (!format.equals(expectedFormat)) {
          throw new CorruptFileException(
              "unexpected file format [expected=" + expectedFormat + ", got=" + format + "]", path);
        }
        if (version < minVersion || version > maxVersion) {
          throw new FormatVersionException(path, format, version, minVersion, maxVersion);
        }
      } catch (IOException | RuntimeException e) {
        ch.close();
        throw e;
      }
    }

    /**
     * Opens a file and reads its header.
     *
     * @throws CorruptFileException if it is truncated or the format name differs
     * @throws FormatVersionException if the version is outside {@code [minVersion, maxVersion]}
     * @throws NoSuchFileException if it does not exist
     */
    public static Reader open(
        FileIO io, Path path, String expectedFormat, int minVersion, int maxVersion)
        throws IOException {
      return new Reader(io, path, expectedFormat, minVersion, maxVersion);
    }

    public int version() {
      return version;
    }

    public long segmentId() {
      return segmentId;
    }

    public Path path() {
      return path;
    }

    /** The file offset of the next byte {@link #getInt} and the others read. */
    private long offset() {
      return pos - buf.remaining();
    }

    /** The file offset of the body's first byte (the header's length). */
    public long bodyOffset() {
      return bodyStart;
    }

    /** The file offset of the next byte to be read. */
    public long position() {
      return offset();
    }

    /** Reads past {@code bytes} bytes of the body, checksumming them. */
    public void skip(long bytes) throws IOException {
      while (bytes > 0) {
        need(1);
        int n = (int) Math.min(bytes, buf.remaining());
        buf.position(buf.position() + n);
        bytes -= n;
      }
    }

    /** Body bytes not read yet. */
    public long remaining() {
      return bodyEnd - offset();
    }

    private void need(int bytes) throws IOException {
      if (buf.remaining() >= bytes) {
        return;
      }
      buf.compact();
      long want = Math.min(buf.remaining(), bodyEnd - pos);
      if (want < bytes - buf.position()) {
        throw new CorruptFileException(
            "body is truncated [offset=" + offset() + ", wanted=" + bytes + "]", path);
      }
      int start = buf.position();
      buf.limit(start + (int) want);
      while (buf.hasRemaining()) {
        int n = ch.read(buf, pos + (buf.position() - start));
        if (n < 0) {
          throw new CorruptFileException("file ended early [offset=" + pos + "]", path);
        }
      }
      crc.update(buf.array(), start, (int) want);
      pos += want;
      buf.flip();
    }

    public byte get() throws IOException {
      need(1);
      return buf.get();
    }

    public short getShort() throws IOException {
      need(2);
      return buf.getShort();
    }

    public int getInt() throws IOException {
      need(4);
      return buf.getInt();
    }

    public long getLong() throws IOException {
      need(8);
      return buf.getLong();
    }

    public float getFloat() throws IOException {
      need(4);
      return buf.getFloat();
    }

    public void get(byte[] a, int off, int len) throws IOException {
      while (len > 0) {
        need(1);
        int n = Math.min(len, buf.remaining());
        buf.get(a, off, n);
        off += n;
        len -= n;
      }
    }

    public void getInts(int[] a, int off, int len) throws IOException {
      while (len > 0) {
        need(4);
        int n = Math.min(len, buf.remaining() / 4);
        buf.asIntBuffer().get(a, off, n);
        buf.position(buf.position() + 4 * n);
        off += n;
        len -= n;
      }
    }

    public void getLongs(long[] a, int off, int len) throws IOException {
      while (len > 0) {
        need(8);
        int n = Math.min(len, buf.remaining() / 8);
        buf.asLongBuffer().get(a, off, n);
        buf.position(buf.position() + 8 * n);
        off += n;
        len -= n;
      }
    }

    public void getFloats(float[] a, int off, int len) throws IOException {
      while (len > 0) {
        need(4);
        int n = Math.min(len, buf.remaining() / 4);
        buf.asFloatBuffer().get(a, off, n);
        buf.position(buf.position() + 4 * n);
        off += n;
        len -= n;
      }
    }

    /**
     * Checks that the body was read to its end and that the footer and checksum match.
     *
     * @throws CorruptFileException if they do not
     */
    public void finish() throws IOException {
      if (remaining() != 0) {
        throw new CorruptFileException("body has trailing bytes [bytes=" + remaining() + "]", path);
      }
      ByteBuffer f = ByteBuffer.allocate(FOOTER_BYTES).order(ByteOrder.LITTLE_ENDIAN);
      while (f.hasRemaining()) {
        if (ch.read(f, bodyEnd + f.position()) < 0) {
          throw new CorruptFileException("footer is truncated", path);
        }
      }
      f.flip();
      long bodyLen = f.getLong();
      int storedCrc = f.getInt();
      int footerMagic = f.getInt();
      if (footerMagic != FOOTER_MAGIC || bodyLen != bodyEnd - bodyStart) {
        throw new CorruptFileException(
            "footer is missing or does not match the file length [bodyLength="
                + bodyLen
                + ", actual="
                + (bodyEnd - bodyStart)
                + "]",
            path);
      }
      if ((int) crc.getValue() != storedCrc) {
        throw new CorruptFileException(
            "checksum mismatch [stored="
                + Integer.toHexString(storedCrc)
                + ", actual="
                + Long.toHexString(crc.getValue())
                + "]",
            path);
      }
    }

    @Override
    public void close() throws IOException {
      ch.close();
    }
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
