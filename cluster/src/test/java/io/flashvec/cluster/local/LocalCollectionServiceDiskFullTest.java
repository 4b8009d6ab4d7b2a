package io.flashvec.cluster.local;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.flashvec.index.CollectionConfig;
import io.flashvec.index.Distance;
import io.flashvec.index.IndexParams;
import io.flashvec.index.InsufficientStorageException;
import io.flashvec.index.Point;
import io.flashvec.index.PointId;
import io.flashvec.index.shard.Shard;
import io.flashvec.storage.DiskSpace;
import io.flashvec.storage.Wal;
import io.flashvec.storage.testing.FaultyFileIO;
import io.flashvec.storage.testing.FaultyFileIO.Op;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.stream.Stream;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Collection-level work on a full disk answers 507 and leaves nothing half-created; the service
 * works again once space is freed.
 */
class LocalCollectionServiceDiskFullTest {

  private static final CollectionConfig CONFIG =
      new CollectionConfig(4, Distance.DOT, 2, 1, IndexParams.DEFAULT);

  @TempDir Path data;

  private final FaultyFileIO io = new FaultyFileIO();
  private LocalCollectionService service;

  @AfterEach
  void close() {
    if (service != null) {
      service.close();
    }
    io.assertNoOpenChannels();
  }

  private LocalCollectionService open(long minFreeBytes) {
    service =
        new LocalCollectionService(
            data,
            new Shard.Options(50, Wal.Options.defaults().withSegmentBytes(32 << 10), io)
                .withDiskSpace(new DiskSpace(io, minFreeBytes)));
    service.recover();
    return service;
  }

  @Test
  void creatingACollectionBelowTheReserveIs507AndLeavesNothingBehind() throws Exception {
    LocalCollectionService s = open(1 << 20);
    io.spaceLeft(1 << 20);
    assertThatThrownBy(() -> s.createCollection("c", CONFIG))
        .isInstanceOf(InsufficientStorageException.class)
        .hasMessageStartingWith(
            "Insufficient storage: collection creation refused, the data directory's disk is full"
                + " (1 MiB free, 1 MiB kept in reserve)");
    assertThat(s.listCollections()).isEmpty();

    io.spaceLeft(FaultyFileIO.UNLIMITED);
    s.createCollection("c", CONFIG);
    s.upsert("c", List.of(new Point(PointId.of(1), new float[] {1, 0, 0, 0}, null)), true);
    assertThat(s.count("c")).isEqualTo(1);
  }

  @Test
  void aCreationThatMeetsENOSPCIs507AndLeavesNoFiles() throws Exception {
    LocalCollectionService s = open(0);
    // The device fills up after the check: the first WAL segment cannot be written.
    io.noSpaceFailures(true)
        .failOnce(Op.WRITE, 1, p -> p.getFileName().toString().startsWith("wal-"));
    assertThatThrownBy(() -> s.createCollection("c", CONFIG))
        .isInstanceOf(InsufficientStorageException.class)
        .hasMessageStartingWith("Insufficient storage: collection creation refused")
        .hasMessageNotContaining(data.toString());
    assertThat(s.listCollections()).isEmpty();
    try (Stream<Path> files = Files.list(data.resolve("collections"))) {
      assertThat(files).isEmpty();
    }
    io.disarm();
    s.createCollection("c", CONFIG);
    assertThat(s.listCollections()).containsExactly("c");
  }

  @Test
  void stopBackgroundWorkSaysWhatRanAndStartsNothingNew() {
    LocalCollectionService s = open(0);
    s.createCollection("c", CONFIG);
    assertThat(s.stopBackgroundWork()).as("nothing was running").isEmpty();
    // Writes and reads go on until close.
    s.upsert("c", List.of(new Point(PointId.of(1), new float[] {1, 0, 0, 0}, null)), true);
    assertThat(s.count("c")).isEqualTo(1);
  }
}
