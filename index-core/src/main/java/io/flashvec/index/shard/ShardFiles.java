package io.flashvec.index.shard;

import io.flashvec.storage.FileIO;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.nio.file.FileAlreadyExistsException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.stream.Stream;

/**
 * A copy of a shard's files as of one WAL position, for snapshots: the committed manifest, the
 * segment directories it lists, and the WAL, which a shard opened from the copy replays from the
 * manifest's checkpoint as after a crash.
 *
 * <p>The copy is taken under the shard's write lock (no write, seal install or checkpoint runs
 * meanwhile) after the WAL is synced. Every file but the newest WAL file is immutable once written
 * or is replaced by a rename ({@code manifest.fvs}, {@code deleted.fvs}), so it is hard-linked: the
 * copy costs no data I/O and holds the writers only for the time of the links. The newest WAL file
 * keeps growing, so its bytes up to the synced end are copied. Directories of segments the manifest
 * does not list (a build or merge in progress) and {@code .tmp} files in those it lists (a field
 * graph's file being written in the background, ADR 0040) are left out.
 */
final class ShardFiles {

  private ShardFiles() {}

  /** Copies {@code shardDir}'s files into {@code target}, which must not exist. Lock held. */
  static void copy(FileIO io, Path shardDir, Path walDir, Path target) throws IOException {
    Files.createDirectories(target.getParent());
    Files.createDirectory(target);
    ShardManifest m = ShardManifest.read(io, shardDir);
    Path manifest = shardDir.resolve(ShardManifest.FILE);
    if (Files.exists(manifest)) {
      link(manifest, target.resolve(ShardManifest.FILE));
    }
    for (int id : m.segmentIds()) {
      String name = String.format(Locale.ROOT, "seg-%010d", id);
      Path src = shardDir.resolve("segments").resolve(name);
      if (Files.isDirectory(src)) {
        linkTree(src, target.resolve("segments").resolve(name));
      }
    }
    Path walTarget = target.resolve(shardDir.relativize(walDir));
    Files.createDirectories(walTarget);
    List<Path> logs = new ArrayList<>();
    try (Stream<Path> s = Files.list(walDir)) {
      s.filter(Files::isRegularFile).sorted().forEach(logs::add);
    }
    for (int i = 0; i < logs.size(); i++) {
      Path log = logs.get(i);
      Path to = walTarget.resolve(log.getFileName().toString());
      if (i < logs.size() - 1) {
        link(log, to);
      } else {
        copyPrefix(log, to, Files.size(log));
      }
    }
  }

  private static void linkTree(Path src, Path dst) throws IOException {
    List<Path> all = new ArrayList<>();
    try (Stream<Path> s = Files.walk(src)) {
      s.forEach(all::add);
    }
    for (Path p : all) {
      if (underTemp(src.relativize(p))) {
        // an interrupted or running write (a field graph's file written in the background): the
        // file may be renamed away meanwhile, and a shard opened from the copy removes it anyway
        continue;
      }
      Path to = dst.resolve(src.relativize(p).toString());
      if (Files.isDirectory(p)) {
        Files.createDirectories(to);
      } else if (Files.isRegularFile(p)) {
        Files.createDirectories(to.getParent());
        link(p, to);
      }
    }
  }

  /** Whether a path (relative to a segment directory) is or lies under a {@code .tmp} entry. */
  private static boolean underTemp(Path relative) {
    for (Path part : relative) {
      if (part.toString().endsWith(".tmp")) {
        return true;
      }
    }
    return false;
  }

  /** A hard link, or a copy where the file system has none. */
  private static void link(Path src, Path dst) throws IOException {
    try {
      Files.createLink(dst, src);
    } catch (UnsupportedOperationException | FileAlreadyExistsException e) {
      throw e instanceof FileAlreadyExistsException f ? f : new IOException(e);
    } catch (IOException e) {
      Files.copy(src, dst);
    }
  }

  private static void copyPrefix(Path src, Path dst, long length) throws IOException {
    try (InputStream in = Files.newInputStream(src);
        OutputStream out = Files.newOutputStream(dst)) {
      byte[] buf = new byte[1 << 16];
      long left = length;
      while (left > 0) {
        int n = in.read(buf, 0, (int) Math.min(buf.length, left));
        if (n < 0) {
          break;
        }
        out.write(buf, 0, n);
        left -= n;
      }
    }
  }
}
