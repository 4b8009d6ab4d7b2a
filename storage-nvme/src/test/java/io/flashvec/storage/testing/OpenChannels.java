package io.flashvec.storage.testing;

import java.io.IOException;
import java.nio.channels.FileChannel;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;

/**
 * Remembers which file a channel handed out by a test {@code FileIO} belongs to, and whether the
 * code under test closed it: the file-descriptor half of the leak check. {@link FileChannel} keeps
 * identity equality, so a concurrent map keyed by channel is an identity map.
 */
final class OpenChannels {

  private final Map<FileChannel, Path> channels = new ConcurrentHashMap<>();

  FileChannel add(FileChannel channel, Path path) {
    if (channels.size() > 256) {
      channels.keySet().removeIf(ch -> !ch.isOpen());
    }
    channels.put(channel, path);
    return channel;
  }

  /** The file behind a channel, or {@code null} when it did not come from this tracker. */
  Path pathOf(FileChannel channel) {
    return channels.get(channel);
  }

  /** Files whose channels are still open, sorted. */
  List<Path> stillOpen() {
    List<Path> open = new ArrayList<>();
    channels.forEach(
        (ch, p) -> {
          if (ch.isOpen()) {
            open.add(p);
          }
        });
    open.sort(null);
    return open;
  }

  /** Closes every channel still open (a dying process releases its descriptors). */
  void closeAll() {
    for (FileChannel ch : channels.keySet()) {
      try {
        ch.close();
      } catch (IOException e) {
        // A dying process does not care.
      }
    }
  }

  void assertAllClosed(String owner) {
    List<Path> open = stillOpen();
    if (!open.isEmpty()) {
      throw new AssertionError(
          "file channels leaked [io=" + owner + ", count=" + open.size() + ", files=" + open + "]");
    }
  }
}
