package io.flashvec.index.collection;

import static org.assertj.core.api.Assertions.assertThat;

import io.flashvec.index.CollectionConfig;
import io.flashvec.index.DenseVectorParams;
import io.flashvec.index.Distance;
import io.flashvec.index.FieldIndex;
import io.flashvec.index.IndexParams;
import io.flashvec.index.Point;
import io.flashvec.index.PointId;
import io.flashvec.index.Record;
import io.flashvec.index.SearchParams;
import io.flashvec.index.TestVectors;
import io.flashvec.index.query.DenseSearchRequest;
import io.flashvec.index.segment.FieldGraph;
import io.flashvec.index.segment.SealedSegment;
import io.flashvec.index.shard.Shard;
import io.flashvec.index.shard.Snapshot;
import io.flashvec.storage.FileIO;
import io.flashvec.storage.Wal;
import io.flashvec.testing.Await;
import io.flashvec.testing.TestSeeds;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.stream.Stream;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.api.io.TempDir;

/**
 * Field graphs written into their segment's directory (ADR 0040): a reopened collection reads them
 * instead of building them again and answers as before; a corrupt file, other settings or a write
 * that died before its rename build the graph again; a deleted field's file goes at the next open.
 */
@ExtendWith(TestSeeds.Reporter.class)
class FieldGraphFilesTest {

  static final int POINTS = 1500;
  static final int FIELD_DIM = 16;

  @TempDir Path tmp;

  private final List<Collection> open = new ArrayList<>();
  private final ExecutorService builds = Executors.newSingleThreadExecutor();
  private Collection collection;

  @AfterEach
  void close() throws IOException {
    for (Collection c : open) {
      c.close();
    }
    builds.shutdownNow();
  }

  private static CollectionConfig config(FieldIndex index) {
    return new CollectionConfig(
        4,
        Distance.DOT,
        1,
        1,
        IndexParams.DEFAULT,
        Map.of(),
        "image",
        Map.of("text", new DenseVectorParams(FIELD_DIM, Distance.EUCLID, false, false, index)));
  }

  private Collection open(CollectionConfig config, FileIO io) {
    Collection c =
        Collection.open(
            "g",
            tmp.resolve("g"),
            config,
            new Shard.Options(100_000, Wal.Options.defaults(), io)
                .withBuildExecutor(builds)
                .withCompaction(
                    new Shard.Compaction(
                        builds, null, 0.2, 10, Shard.Compaction.DEFAULT_MAX_SEGMENT_POINTS, false))
                .withIndexedFields(config.denseVectors()));
    open.add(c);
    collection = c;
    return c;
  }

  private void reopen(CollectionConfig config, FileIO io) throws IOException {
    collection.close();
    open.remove(collection);
    open(config, io);
  }

  /** Writes the points and seals them into one segment. */
  private void fill(Random r) {
    fill(r, 0);
  }

  /** Writes {@link #POINTS} points from id {@code from} and seals them into one segment. */
  private void fill(Random r, int from) {
    List<Point> pts = new ArrayList<>();
    for (int i = from; i < from + POINTS; i++) {
      pts.add(
          new Point(
              PointId.of(i),
              TestVectors.gaussian(r, 4),
              null,
              Map.of(),
              Map.of("text", TestVectors.gaussian(r, FIELD_DIM))));
    }
    collection.upsert(pts, true);
    collection.flush();
  }

  /** The field's graph in the one sealed segment ({@code null}: none yet). */
  private FieldGraph graph() {
    Snapshot snap = collection.shards().get(0).acquire();
    try {
      List<SealedSegment> sealed = snap.sealed();
      return sealed.isEmpty() ? null : sealed.get(0).fieldGraph("text");
    } finally {
      snap.release();
    }
  }

  private Path segmentDir() {
    Snapshot snap = collection.shards().get(0).acquire();
    try {
      return snap.sealed().get(0).directory();
    } finally {
      snap.release();
    }
  }

  private long segmentDiskBytes() {
    Snapshot snap = collection.shards().get(0).acquire();
    try {
      return snap.sealed().get(0).diskBytes();
    } finally {
      snap.release();
    }
  }

  private List<Path> graphFiles() throws IOException {
    try (Stream<Path> s = Files.list(segmentDir())) {
      return s.filter(p -> p.getFileName().toString().startsWith(FieldGraph.FILE_PREFIX))
          .sorted()
          .toList();
    }
  }

  private Path graphFile() {
    return segmentDir().resolve(FieldGraph.fileName("text"));
  }

  /** Waits until the field's graph is complete and its file written. */
  private void awaitWritten() {
    Await.until(
        Duration.ofSeconds(60),
        "the field graph built and written",
        () -> {
          FieldGraph g = graph();
          return g != null && g.built() == g.nodes() && g.fileBytes() > 0;
        });
  }

  /** Ids and scores of searches of the field, each as "id:score,..." for exact comparison. */
  private List<String> answers(long seed) {
    return answers(seed, false);
  }

  /** As above, by an exact scan when {@code exact}. */
  private List<String> answers(long seed, boolean exact) {
    Random r = new Random(seed);
    List<String> out = new ArrayList<>();
    for (int i = 0; i < 20; i++) {
      List<Record> found =
          collection.denseSearch(
              new DenseSearchRequest(
                  "text",
                  TestVectors.gaussian(r, FIELD_DIM),
                  10,
                  0,
                  null,
                  null,
                  false,
                  false,
                  new SearchParams(0, 0, 0, exact)));
      StringBuilder sb = new StringBuilder();
      for (Record rec : found) {
        sb.append(rec.id()).append(':').append(rec.score()).append(',');
      }
      out.add(sb.toString());
    }
    return out;
  }

  @Test
  void aReopenReadsTheGraphItWroteAndAnswersAsBefore() throws IOException {
    Random r = TestSeeds.random("FieldGraphFilesTest.roundTrip");
    open(config(FieldIndex.DEFAULT), FileIO.DEFAULT);
    fill(r);
    awaitWritten();
    assertThat(graph().loaded()).isFalse();
    assertThat(graphFiles()).containsExactly(graphFile());
    long seed = r.nextLong();
    List<String> before = answers(seed);
    long diskBefore = segmentDiskBytes();
    assertThat(diskBefore).isGreaterThan(Files.size(graphFile()));

    reopen(config(FieldIndex.DEFAULT), FileIO.DEFAULT);
    FieldGraph g = graph();
    assertThat(g.loaded()).as("read from its file, not built").isTrue();
    assertThat(g.built()).isEqualTo(g.nodes()).isEqualTo(POINTS);
    assertThat(answers(seed)).isEqualTo(before);
    assertThat(segmentDiskBytes())
        .as("the file counts in the segment's bytes")
        .isEqualTo(diskBefore);

    // a snapshot's copy links the graph's file, not a temp file being written meanwhile
    Path writing = segmentDir().resolve(FieldGraph.fileName("other") + ".tmp");
    Files.write(writing, new byte[] {1, 2, 3});
    Path copy = tmp.resolve("copy");
    collection.shards().get(0).copyFiles(copy);
    Path copied = copy.resolve("segments").resolve(segmentDir().getFileName());
    assertThat(copied.resolve(graphFile().getFileName())).hasSameBinaryContentAs(graphFile());
    assertThat(copied.resolve(writing.getFileName())).doesNotExist();
  }

  @Test
  void aCorruptFileIsDeletedAndTheGraphBuiltAgain() throws IOException {
    Random r = TestSeeds.random("FieldGraphFilesTest.corrupt");
    open(config(FieldIndex.DEFAULT), FileIO.DEFAULT);
    fill(r);
    awaitWritten();
    long seed = r.nextLong();
    List<String> before = answers(seed);
    Path file = graphFile();
    // a changed byte among the int8 codes (after a header of about 6 KB: the ordinals), which only
    // the checksum can tell
    long at = 6200 + FIELD_DIM * 500;
    byte[] all = Files.readAllBytes(file);
    try (var ch = java.nio.channels.FileChannel.open(file, StandardOpenOption.WRITE)) {
      ch.write(java.nio.ByteBuffer.wrap(new byte[] {(byte) (all[(int) at] ^ 0x5A)}), at);
    }
    reopen(config(FieldIndex.DEFAULT), FileIO.DEFAULT);
    assertThat(graph().loaded()).isFalse();
    awaitWritten();
    assertThat(answers(seed)).as("the graph built again answers as the first").isEqualTo(before);

    reopen(config(FieldIndex.DEFAULT), FileIO.DEFAULT);
    assertThat(graph().loaded()).as("the file written again is read").isTrue();
  }

  @Test
  void otherSettingsBuildTheGraphAgainAndADeletedFieldsFileGoes() throws IOException {
    Random r = TestSeeds.random("FieldGraphFilesTest.settings");
    open(config(FieldIndex.DEFAULT), FileIO.DEFAULT);
    fill(r);
    awaitWritten();

    FieldIndex m8 = new FieldIndex(8, 100, Float.NaN, "{\"m\":8}", null, false);
    reopen(config(m8), FileIO.DEFAULT);
    assertThat(graph().loaded()).as("built with m 16, wanted m 8").isFalse();
    awaitWritten();
    reopen(config(m8), FileIO.DEFAULT);
    assertThat(graph().loaded()).isTrue();

    FieldIndex quantile = new FieldIndex(8, 100, 0.99f, "{\"m\":8}", null, false);
    reopen(config(quantile), FileIO.DEFAULT);
    assertThat(graph().loaded()).as("another quantile").isFalse();
    awaitWritten();

    // the field deleted: its values stay in the segment, its graph and file do not
    reopen(config(m8).withoutDenseVector("text"), FileIO.DEFAULT);
    assertThat(graph()).isNull();
    assertThat(graphFiles()).isEmpty();
  }

  /** The share of the exact answers' ids that {@code found} has too. */
  private static double recall(List<String> exact, List<String> found) {
    int hits = 0;
    int all = 0;
    for (int i = 0; i < exact.size(); i++) {
      List<String> want = ids(exact.get(i));
      List<String> got = ids(found.get(i));
      all += want.size();
      hits += (int) want.stream().filter(got::contains).count();
    }
    return (double) hits / all;
  }

  private static List<String> ids(String answer) {
    return Stream.of(answer.split(",")).map(a -> a.substring(0, a.indexOf(':'))).toList();
  }

  /**
   * A config change of the field's graph settings (a collection update) rebuilds the graphs of the
   * open segments with the new settings and writes them to a file of those settings; m 0 drops the
   * graph and its file. Searches answer meanwhile and after, as an exact scan does.
   */
  @Test
  void changedGraphSettingsRebuildTheGraphsOfOpenSegments() throws IOException {
    Random r = TestSeeds.random("FieldGraphFilesTest.reconfigure");
    CollectionConfig config = config(FieldIndex.DEFAULT);
    open(config, FileIO.DEFAULT);
    fill(r);
    awaitWritten();
    long seed = r.nextLong();
    List<String> exact = answers(seed, true);
    assertThat(recall(exact, answers(seed))).isGreaterThanOrEqualTo(0.9);
    FieldGraph before = graph();

    FieldIndex m8 = new FieldIndex(8, 64, 0.99f, "{\"m\":8,\"ef_construct\":64}", null, false);
    CollectionConfig next = config.withDenseIndex("text", m8);
    collection.reconfigure(next);
    FieldGraph g = graph();
    assertThat(g).isNotSameAs(before);
    assertThat(g.params()).isEqualTo(new FieldGraph.Params(8, 64, 0.99f));
    // while it builds, the nodes it lacks are scanned
    assertThat(recall(exact, answers(seed))).isGreaterThanOrEqualTo(0.9);
    awaitWritten();
    assertThat(recall(exact, answers(seed))).isGreaterThanOrEqualTo(0.9);
    assertThat(graphFiles()).containsExactly(graphFile());

    reopen(next, FileIO.DEFAULT);
    assertThat(graph().loaded()).as("the file holds the new settings").isTrue();
    assertThat(graph().params()).isEqualTo(new FieldGraph.Params(8, 64, 0.99f));

    // unchanged settings keep the graph
    FieldGraph kept = graph();
    collection.reconfigure(next);
    assertThat(graph()).isSameAs(kept);

    // m 0: no graph, no file; searches scan
    collection.reconfigure(next.withDenseIndex("text", FieldIndex.NONE));
    assertThat(graph()).isNull();
    assertThat(graphFiles()).isEmpty();
    // the same points as the exact search's (their scores may differ in the last bit)
    assertThat(answers(seed).stream().map(FieldGraphFilesTest::ids).toList())
        .isEqualTo(exact.stream().map(FieldGraphFilesTest::ids).toList());

    // and back: the graph is built again
    collection.reconfigure(next);
    awaitWritten();
    assertThat(graph().params().m()).isEqualTo(8);
    assertThat(recall(exact, answers(seed))).isGreaterThanOrEqualTo(0.9);
  }

  /** A merge's new segment gets its graph and file; the merged segments' go with their files. */
  @Test
  void aMergeWritesItsGraphAndDeletesTheFilesOfTheSegmentsItReplaces() throws IOException {
    Random r = TestSeeds.random("FieldGraphFilesTest.merge");
    open(config(FieldIndex.DEFAULT), FileIO.DEFAULT);
    fill(r, 0);
    awaitWritten();
    fill(r, POINTS);
    List<Path> merged = new ArrayList<>();
    Await.until(
        Duration.ofSeconds(60),
        "two sealed segments with their graph files",
        () -> {
          merged.clear();
          Snapshot snap = collection.shards().get(0).acquire();
          try {
            for (SealedSegment s : snap.sealed()) {
              FieldGraph g = s.fieldGraph("text");
              if (g != null && g.fileBytes() > 0) {
                merged.add(s.directory());
              }
            }
          } finally {
            snap.release();
          }
          return merged.size() == 2;
        });
    collection.compact(true);
    Await.until(
        Duration.ofSeconds(60),
        "one merged segment whose graph is written, the merged ones deleted",
        () -> {
          Snapshot snap = collection.shards().get(0).acquire();
          try {
            if (snap.sealed().size() != 1) {
              return false;
            }
            FieldGraph g = snap.sealed().get(0).fieldGraph("text");
            return g != null
                && g.nodes() == 2 * POINTS
                && g.fileBytes() > 0
                && merged.stream().noneMatch(Files::exists);
          } finally {
            snap.release();
          }
        });
    assertThat(graphFiles()).containsExactly(graphFile());
  }

  /**
   * The process dies between the temp file's fsync and its rename: the temp file stays, the graph
   * has no file; the next open removes the temp file and builds the graph again.
   */
  @Test
  void aWriteKilledBeforeItsRenameLeavesATempFileTheNextOpenRemoves() throws IOException {
    Random r = TestSeeds.random("FieldGraphFilesTest.killed");
    DyingIO io = new DyingIO();
    open(config(FieldIndex.DEFAULT), io);
    fill(r);
    Await.until(Duration.ofSeconds(60), "the write killed at its rename", () -> io.killed);
    Path tempFile = segmentDir().resolve(FieldGraph.fileName("text") + ".tmp");
    assertThat(tempFile).exists();
    assertThat(graphFile()).doesNotExist();
    assertThat(graph().built()).as("the graph itself is complete").isEqualTo(POINTS);

    reopen(config(FieldIndex.DEFAULT), FileIO.DEFAULT);
    assertThat(tempFile).doesNotExist();
    assertThat(graph().loaded()).isFalse();
    awaitWritten();
    assertThat(graphFiles()).containsExactly(graphFile());
  }

  /**
   * The file system of a process killed at a field graph file's rename: the rename fails and
   * nothing removes the temp file afterwards, as after a SIGKILL.
   */
  private static final class DyingIO extends FileIO {
    volatile boolean killed;

    @Override
    public void atomicMove(Path source, Path target) throws IOException {
      if (target.getFileName().toString().startsWith(FieldGraph.FILE_PREFIX)) {
        killed = true;
        throw new IOException("killed before the rename");
      }
      super.atomicMove(source, target);
    }

    @Override
    public void deleteIfExists(Path path) throws IOException {
      if (killed && path.getFileName().toString().startsWith(FieldGraph.FILE_PREFIX)) {
        throw new IOException("killed");
      }
      super.deleteIfExists(path);
    }
  }
}
