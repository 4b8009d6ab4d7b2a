package io.flashvec.cluster.metadata;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.flashvec.cluster.metadata.MetadataStore.CollectionMeta;
import io.flashvec.index.CollectionConfig;
import io.flashvec.index.CollectionTuning;
import io.flashvec.index.Distance;
import io.flashvec.index.IndexParams;
import io.flashvec.index.SparseVectorParams;
import io.flashvec.storage.CorruptFileException;
import io.flashvec.storage.FsyncPolicy;
import io.flashvec.storage.testing.CrashSimulatingFileIO;
import io.flashvec.storage.testing.FaultyFileIO;
import io.flashvec.testing.TestSeeds;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.api.io.TempDir;

@ExtendWith(TestSeeds.Reporter.class)
class LocalMetadataStoreTest {

  @TempDir Path dir;

  private final CrashSimulatingFileIO disk = new CrashSimulatingFileIO();
  private final FaultyFileIO io = new FaultyFileIO(disk);

  @AfterEach
  void noLeakedChannels() {
    io.assertNoOpenChannels();
  }

  private Path file() {
    return dir.resolve("meta").resolve("collections.json");
  }

  private static CollectionMeta meta(String name, int dim) {
    return new CollectionMeta(
        name,
        new CollectionConfig(dim, Distance.COSINE, 1, 1, IndexParams.DEFAULT),
        1_732_250_000_000L);
  }

  @Test
  void startsEmptyWithoutAFile() {
    LocalMetadataStore s = new LocalMetadataStore(dir, io);
    assertThat(s.list()).isEmpty();
    assertThat(s.get("docs")).isEmpty();
    assertThat(s.remove("docs")).isFalse();
    assertThat(Files.exists(file())).isFalse();
  }

  @Test
  void everyFieldSurvivesAReload() {
    CollectionMeta full =
        new CollectionMeta(
            "full",
            new CollectionConfig(
                768, Distance.EUCLID, 3, 2, new IndexParams(IndexParams.HNSW, 24, 150, 1.3f, 96)),
            1_732_250_123_456L);
    LocalMetadataStore s = new LocalMetadataStore(dir, io);
    assertThat(s.createIfAbsent(full)).isTrue();
    assertThat(s.createIfAbsent(meta("b", 4))).isTrue();
    assertThat(s.createIfAbsent(meta("a", 8))).isTrue();
    LocalMetadataStore reloaded = new LocalMetadataStore(dir, io);
    assertThat(reloaded.get("full")).contains(full);
    assertThat(reloaded.list()).containsExactly(meta("a", 8), meta("b", 4), full);
    for (Distance d : Distance.values()) {
      if (!d.graphable()) {
        continue; // no primary vector of it
      }
      CollectionMeta m =
          new CollectionMeta("d-" + d, new CollectionConfig(2, d, 1, 1, IndexParams.DEFAULT), 1L);
      reloaded.createIfAbsent(m);
      assertThat(new LocalMetadataStore(dir, io).get(m.name())).contains(m);
    }
    assertThat(Files.exists(file().resolveSibling("collections.json.tmp")))
        .as("no temp file left behind")
        .isFalse();
  }

  @Test
  void sparseVectorsSurviveAReloadAndOnlyTheirCollectionWritesThem() throws Exception {
    CollectionMeta sparse =
        new CollectionMeta(
            "hybrid",
            new CollectionConfig(
                4,
                Distance.DOT,
                1,
                1,
                IndexParams.DEFAULT,
                java.util.Map.of(
                    "sparse-text", SparseVectorParams.DEFAULT, "b", SparseVectorParams.DEFAULT)),
            1_732_250_123_456L);
    LocalMetadataStore s = new LocalMetadataStore(dir, io);
    assertThat(s.createIfAbsent(sparse)).isTrue();
    assertThat(s.createIfAbsent(meta("dense", 4))).isTrue();
    LocalMetadataStore reloaded = new LocalMetadataStore(dir, io);
    assertThat(reloaded.get("hybrid")).contains(sparse);
    assertThat(reloaded.get("hybrid").orElseThrow().config().sparseVectors().keySet())
        .containsExactly("b", "sparse-text");
    assertThat(reloaded.get("dense").orElseThrow().config().sparseVectors()).isEmpty();
    String json = Files.readString(file()).replaceAll("\\s", "");
    assertThat(json).contains("\"sparse_vectors\":{\"b\":{},\"sparse-text\":{}}");
    assertThat(json.indexOf("sparse_vectors")).isEqualTo(json.lastIndexOf("sparse_vectors"));
  }

  @Test
  void aCollectionWithoutAPrimaryVectorIsVersionedAndSurvivesAReload() throws Exception {
    CollectionMeta sparseOnly =
        new CollectionMeta(
            "sparse-only",
            CollectionConfig.withoutPrimary(
                1,
                1,
                IndexParams.DEFAULT,
                java.util.Map.of("text", SparseVectorParams.DEFAULT),
                java.util.Map.of()),
            1_732_250_123_456L);
    LocalMetadataStore s = new LocalMetadataStore(dir, io);
    assertThat(s.createIfAbsent(sparseOnly)).isTrue();
    assertThat(s.createIfAbsent(meta("dense", 4))).isTrue();
    LocalMetadataStore reloaded = new LocalMetadataStore(dir, io);
    assertThat(reloaded.get("sparse-only")).contains(sparseOnly);
    assertThat(reloaded.get("sparse-only").orElseThrow().config().hasPrimary()).isFalse();
    assertThat(reloaded.get("dense").orElseThrow().config().hasPrimary()).isTrue();
    String json = Files.readString(file()).replaceAll("\\s", "");
    // only the new form carries a version; the dense collection keeps the old shape
    assertThat(json.indexOf("\"config_version\":2"))
        .isEqualTo(json.lastIndexOf("\"config_version\""))
        .isPositive();
    assertThat(json).doesNotContain("\"size\":0");
    // a version this binary does not know is refused, not read as something else
    Files.writeString(
        file(),
        Files.readString(file()).replace("\"config_version\" : 2", "\"config_version\" : 3"));
    org.assertj.core.api.Assertions.assertThatThrownBy(() -> new LocalMetadataStore(dir, io))
        .hasMessageContaining(
            "unsupported collection config version [collection=sparse-only, config_version=3");
  }

  @Test
  void aNamedVectorSurvivesAReloadAndOnlyItsCollectionWritesTheName() throws Exception {
    CollectionMeta named =
        new CollectionMeta(
            "named",
            new CollectionConfig(
                4,
                Distance.DOT,
                1,
                1,
                IndexParams.DEFAULT,
                java.util.Map.of("sparse-text", SparseVectorParams.DEFAULT),
                "text"),
            1_732_250_123_456L);
    LocalMetadataStore s = new LocalMetadataStore(dir, io);
    assertThat(s.createIfAbsent(named)).isTrue();
    assertThat(s.createIfAbsent(meta("dense", 4))).isTrue();
    LocalMetadataStore reloaded = new LocalMetadataStore(dir, io);
    assertThat(reloaded.get("named")).contains(named);
    assertThat(reloaded.get("named").orElseThrow().config().vectorName()).isEqualTo("text");
    assertThat(reloaded.get("dense").orElseThrow().config().vectorName()).isEmpty();
    String json = Files.readString(file()).replaceAll("\\s", "");
    assertThat(json).contains("\"vector_name\":\"text\"");
    assertThat(json.indexOf("vector_name")).isEqualTo(json.lastIndexOf("vector_name"));
  }

  @Test
  void aMultivectorFieldSurvivesAReloadAndOnlyItWritesItsConfig() throws Exception {
    CollectionMeta multi =
        new CollectionMeta(
            "multi",
            new CollectionConfig(
                4,
                Distance.DOT,
                1,
                1,
                IndexParams.DEFAULT,
                java.util.Map.of(),
                "text",
                java.util.Map.of(
                    "colbert",
                    new io.flashvec.index.DenseVectorParams(3, Distance.COSINE, true, true),
                    "image",
                    new io.flashvec.index.DenseVectorParams(2, Distance.EUCLID))),
            1_732_250_123_456L);
    LocalMetadataStore s = new LocalMetadataStore(dir, io);
    assertThat(s.createIfAbsent(multi)).isTrue();
    LocalMetadataStore reloaded = new LocalMetadataStore(dir, io);
    assertThat(reloaded.get("multi")).contains(multi);
    assertThat(reloaded.get("multi").orElseThrow().config().multivectors())
        .isEqualTo(java.util.Map.of("colbert", 3));
    String json = Files.readString(file()).replaceAll("\\s", "");
    assertThat(json).contains("\"multivector_config\":{\"comparator\":\"max_sim\"}");
    assertThat(json.indexOf("multivector_config"))
        .isEqualTo(json.lastIndexOf("multivector_config"));
  }

  @Test
  void theFileIsTheDocumentedJson() throws Exception {
    LocalMetadataStore s = new LocalMetadataStore(dir, io);
    s.createIfAbsent(meta("docs", 768));
    s.replaceAliases(java.util.Map.of("prod", "docs"));
    String json = Files.readString(file());
    assertThat(json.replaceAll("\\s", ""))
        .isEqualTo(
            "{\"format_version\":1,\"collections\":[{\"name\":\"docs\",\"created_at\":1732250000000,"
                + "\"config\":{\"size\":768,\"distance\":\"Cosine\",\"shard_number\":1,"
                + "\"replication_factor\":1,\"index\":{\"type\":\"diskann\",\"max_degree\":64,"
                + "\"build_search_list\":100,\"alpha\":1.2,\"pq_subspaces\":0}},"
                + "\"tuning\":{\"indexing_threshold\":-1,\"wal_fsync_policy\":null,"
                + "\"on_disk_payload\":true}}],"
                + "\"aliases\":[{\"alias_name\":\"prod\",\"collection_name\":\"docs\"}]}");
  }

  @Test
  void aliasesAreReadBackAndGoWithTheirCollection() throws Exception {
    LocalMetadataStore s = new LocalMetadataStore(dir, io);
    s.createIfAbsent(meta("a", 4));
    s.createIfAbsent(meta("b", 4));
    s.replaceAliases(java.util.Map.of("a1", "a", "a2", "a", "b1", "b"));
    assertThat(new LocalMetadataStore(dir, io).aliases())
        .isEqualTo(java.util.Map.of("a1", "a", "a2", "a", "b1", "b"));
    assertThat(s.remove("a")).isTrue();
    assertThat(s.aliases()).isEqualTo(java.util.Map.of("b1", "b"));
    assertThat(new LocalMetadataStore(dir, io).aliases()).isEqualTo(java.util.Map.of("b1", "b"));
    // a file written before aliases existed has none
    String old = Files.readString(file()).replaceAll(",\\s*\"aliases\"[^]]*]", "");
    assertThat(old).doesNotContain("aliases");
    Files.writeString(file(), old);
    LocalMetadataStore reread = new LocalMetadataStore(dir, io);
    assertThat(reread.aliases()).isEmpty();
    assertThat(reread.list()).extracting(CollectionMeta::name).containsExactly("b");
  }

  @Test
  void updatedTuningIsPersisted() {
    LocalMetadataStore s = new LocalMetadataStore(dir, io);
    s.createIfAbsent(meta("docs", 4));
    CollectionTuning t = new CollectionTuning(0, FsyncPolicy.NEVER, false);
    assertThat(s.updateTuning("docs", t)).isTrue();
    assertThat(s.updateTuning("absent", t)).isFalse();
    assertThat(new LocalMetadataStore(dir, io).get("docs").orElseThrow().tuning()).isEqualTo(t);
  }

  @Test
  void vectorFieldsAddedAndDeletedArePersistedWithTheirGeneration() throws Exception {
    LocalMetadataStore s = new LocalMetadataStore(dir, io);
    CollectionConfig created =
        new CollectionConfig(
            4,
            Distance.DOT,
            1,
            1,
            IndexParams.DEFAULT,
            java.util.Map.of(),
            "image",
            java.util.Map.of("text", new io.flashvec.index.DenseVectorParams(3, Distance.EUCLID)));
    s.createIfAbsent(new CollectionMeta("docs", created, 1L));
    // a collection whose fields never changed keeps the shape older versions read
    assertThat(Files.readString(file())).doesNotContain("field_generation");
    CollectionConfig changed =
        created
            .withoutDenseVector("text")
            .withDenseVector(
                "text", new io.flashvec.index.DenseVectorParams(5, Distance.COSINE, false, true))
            .withoutDenseVector("image");
    assertThat(s.updateConfig("docs", changed)).isTrue();
    assertThat(s.updateConfig("absent", changed)).isFalse();
    assertThat(Files.readString(file())).contains("\"field_generation\" : 3");
    CollectionConfig read = new LocalMetadataStore(dir, io).get("docs").orElseThrow().config();
    assertThat(read).isEqualTo(changed);
    assertThat(read.primaryRetired()).isTrue();
    assertThat(read.internalName("text")).isEqualTo(changed.internalName("text"));
    assertThat(read.denseField(read.internalName("text")).multivector()).isTrue();
  }

  @Test
  void strictModeAndMetadataAreStoredAsJsonObjectsAndOlderFilesHaveNeither() throws Exception {
    LocalMetadataStore s = new LocalMetadataStore(dir, io);
    s.createIfAbsent(meta("docs", 4));
    CollectionTuning t =
        CollectionTuning.DEFAULT
            .withStrictMode("{\"enabled\":true,\"max_query_limit\":5}")
            .withMetadata("{\"team\":\"search\",\"n\":[1,2]}");
    s.updateTuning("docs", t);
    String json = Files.readString(file());
    assertThat(json).contains("\"strict_mode_config\" : {").contains("\"metadata\" : {");
    CollectionTuning read = new LocalMetadataStore(dir, io).get("docs").orElseThrow().tuning();
    assertThat(read).isEqualTo(t);
    // a setting changed later keeps them
    assertThat(read.merge(100, null, null).strictMode()).isEqualTo(t.strictMode());

    // a file written before they existed opens, with neither
    s.updateTuning("docs", CollectionTuning.DEFAULT);
    assertThat(Files.readString(file())).doesNotContain("strict_mode_config", "metadata");
    CollectionTuning old = new LocalMetadataStore(dir, io).get("docs").orElseThrow().tuning();
    assertThat(old.strictMode()).isNull();
    assertThat(old.metadata()).isNull();
  }

  @Test
  void aCollectionsWalSegmentSizeIsStoredOnlyWhenItHasOneAndKeptByLaterChanges() throws Exception {
    LocalMetadataStore s = new LocalMetadataStore(dir, io);
    s.createIfAbsent(meta("docs", 4));
    assertThat(Files.readString(file())).doesNotContain("wal_segment_bytes");
    assertThat(new LocalMetadataStore(dir, io).get("docs").orElseThrow().tuning().walSegmentBytes())
        .isZero();
    CollectionTuning t = CollectionTuning.DEFAULT.withWalSegmentBytes(1 << 20);
    s.updateTuning("docs", t);
    assertThat(Files.readString(file())).contains("\"wal_segment_bytes\" : 1048576");
    CollectionTuning read = new LocalMetadataStore(dir, io).get("docs").orElseThrow().tuning();
    assertThat(read).isEqualTo(t);
    assertThat(read.merge(100, FsyncPolicy.NEVER, false).withStrictMode("{}").walSegmentBytes())
        .isEqualTo(1 << 20);
  }

  @Test
  void retainedWalSegmentsAndOptimizationSlotsAreStoredOnlyWhenGivenAndKeptByLaterChanges()
      throws Exception {
    LocalMetadataStore s = new LocalMetadataStore(dir, io);
    s.createIfAbsent(meta("docs", 4));
    assertThat(Files.readString(file()))
        .doesNotContain("wal_retain_closed")
        .doesNotContain("max_optimization_threads");
    CollectionTuning t = CollectionTuning.DEFAULT.withWalRetainClosed(2).withOptimizationJobs(1);
    s.updateTuning("docs", t);
    assertThat(Files.readString(file()))
        .contains("\"wal_retain_closed\" : 2")
        .contains("\"max_optimization_threads\" : 1");
    CollectionTuning read = new LocalMetadataStore(dir, io).get("docs").orElseThrow().tuning();
    assertThat(read).isEqualTo(t);
    CollectionTuning later =
        read.merge(100, FsyncPolicy.NEVER, false)
            .withStrictMode("{}")
            .withMetadata("{}")
            .withSparseIdf(java.util.Set.of("t"))
            .withWalSegmentBytes(1 << 20)
            .withSegmentNumber(3)
            .withQuantizationConfig("{}")
            .withMemoryShown(java.util.Set.of(CollectionTuning.VECTORS_MEMORY));
    assertThat(later.walRetainClosed()).isEqualTo(2);
    assertThat(later.optimizationJobs()).isEqualTo(1);
  }

  @Test
  void memoryPlacementsShownAreStoredOnlyWhenGivenAndKeptByLaterChanges() throws Exception {
    LocalMetadataStore s = new LocalMetadataStore(dir, io);
    s.createIfAbsent(meta("docs", 4));
    assertThat(Files.readString(file())).doesNotContain("memory_shown");
    assertThat(new LocalMetadataStore(dir, io).get("docs").orElseThrow().tuning().memoryShown())
        .isEmpty();
    CollectionTuning t =
        CollectionTuning.DEFAULT
            .merge(null, null, false)
            .withMemoryShown(java.util.Set.of(CollectionTuning.PAYLOAD_MEMORY));
    s.updateTuning("docs", t);
    assertThat(Files.readString(file())).contains("\"memory_shown\" : [ \"payload\" ]");
    CollectionTuning read = new LocalMetadataStore(dir, io).get("docs").orElseThrow().tuning();
    assertThat(read).isEqualTo(t);
    CollectionTuning later =
        read.merge(100, FsyncPolicy.NEVER, true)
            .withStrictMode("{}")
            .withMetadata("{}")
            .withSparseIdf(java.util.Set.of("t"))
            .withWalSegmentBytes(1 << 20)
            .withMemoryShown(java.util.Set.of(CollectionTuning.VECTORS_MEMORY));
    assertThat(later.memoryShown())
        .containsExactly(CollectionTuning.PAYLOAD_MEMORY, CollectionTuning.VECTORS_MEMORY);
  }

  @Test
  void metadataWrittenBeforeOnDiskPayloadKeepsPayloadsOnDisk() throws Exception {
    LocalMetadataStore s = new LocalMetadataStore(dir, io);
    s.createIfAbsent(meta("docs", 4));
    s.updateTuning("docs", new CollectionTuning(0, null, false));
    String json = Files.readString(file());
    assertThat(json).contains("\"on_disk_payload\" : false");
    Files.writeString(file(), json.replace(",\n      \"on_disk_payload\" : false", ""));
    assertThat(Files.readString(file())).doesNotContain("on_disk_payload");
    assertThat(new LocalMetadataStore(dir, io).get("docs").orElseThrow().tuning())
        .isEqualTo(new CollectionTuning(0, null, true));
  }

  @Test
  void createIfAbsentAndRemoveReportWhetherTheyChangedAnything() {
    LocalMetadataStore s = new LocalMetadataStore(dir, io);
    assertThat(s.createIfAbsent(meta("docs", 4))).isTrue();
    assertThat(s.createIfAbsent(meta("docs", 8))).as("duplicate").isFalse();
    assertThat(s.get("docs")).contains(meta("docs", 4));
    assertThat(s.remove("docs")).isTrue();
    assertThat(s.remove("docs")).isFalse();
    assertThat(new LocalMetadataStore(dir, io).list()).isEmpty();
  }

  @Test
  void concurrentCreatesOfOneNameHaveOneWinner() throws Exception {
    LocalMetadataStore s = new LocalMetadataStore(dir, io);
    ExecutorService pool = Executors.newFixedThreadPool(4);
    try {
      CountDownLatch start = new CountDownLatch(1);
      List<Future<Boolean>> results = new ArrayList<>();
      for (int i = 0; i < 8; i++) {
        int dim = i + 1;
        results.add(
            pool.submit(
                () -> {
                  start.await();
                  return s.createIfAbsent(meta("race", dim));
                }));
      }
      start.countDown();
      int winners = 0;
      for (Future<Boolean> f : results) {
        winners += f.get() ? 1 : 0;
      }
      assertThat(winners).isEqualTo(1);
      assertThat(new LocalMetadataStore(dir, io).get("race")).isEqualTo(s.get("race"));
    } finally {
      pool.shutdownNow();
    }
  }

  @Test
  void aFailedWriteChangesNothing() {
    LocalMetadataStore s = new LocalMetadataStore(dir, io);
    s.createIfAbsent(meta("kept", 4));
    io.failOnce(FaultyFileIO.Op.ATOMIC_MOVE, 1);
    assertThatThrownBy(() -> s.createIfAbsent(meta("lost", 4)))
        .isInstanceOf(UncheckedIOException.class)
        .hasMessageContaining("cannot write metadata")
        .hasRootCauseInstanceOf(FaultyFileIO.InjectedIOException.class);
    assertThat(s.get("lost")).as("rolled back in memory").isEmpty();
    assertThat(new LocalMetadataStore(dir, io).list()).containsExactly(meta("kept", 4));

    io.failOnce(FaultyFileIO.Op.WRITE, 1);
    assertThatThrownBy(() -> s.remove("kept")).isInstanceOf(UncheckedIOException.class);
    assertThat(s.get("kept")).as("rolled back in memory").contains(meta("kept", 4));
    assertThat(new LocalMetadataStore(dir, io).list()).containsExactly(meta("kept", 4));

    // The store keeps working once the device does.
    assertThat(s.createIfAbsent(meta("lost", 4))).isTrue();
    assertThat(new LocalMetadataStore(dir, io).list())
        .containsExactly(meta("kept", 4), meta("lost", 4));
  }

  @Test
  void everyReturnedChangeSurvivesAPowerLoss() throws Exception {
    Random r = TestSeeds.random("LocalMetadataStoreTest.powerLoss");
    int rounds = TestSeeds.atLeast(r, 10);
    for (int round = 0; round < rounds; round++) {
      Path d = dir.resolve("round-" + round);
      CrashSimulatingFileIO crashy = new CrashSimulatingFileIO();
      LocalMetadataStore s = new LocalMetadataStore(d, crashy);
      List<String> expected = new ArrayList<>();
      int ops = 1 + r.nextInt(8);
      for (int i = 0; i < ops; i++) {
        if (!expected.isEmpty() && r.nextInt(3) == 0) {
          String gone = expected.remove(r.nextInt(expected.size()));
          assertThat(s.remove(gone)).isTrue();
        } else {
          String name = "c" + i;
          assertThat(s.createIfAbsent(meta(name, 4))).isTrue();
          expected.add(name);
        }
      }
      crashy.crash(r);
      expected.sort(null);
      assertThat(new LocalMetadataStore(d, new CrashSimulatingFileIO()).list())
          .as("round %d, %s", round, TestSeeds.reproduceWith())
          .extracting(CollectionMeta::name)
          .containsExactlyElementsOf(expected);
    }
  }

  @Test
  void corruptOrFutureFilesAreRefusedNamingTheFile() throws Exception {
    Files.createDirectories(file().getParent());
    Files.writeString(file(), "{\"format_version\": 1, \"collections\": [", StandardCharsets.UTF_8);
    assertThatThrownBy(() -> new LocalMetadataStore(dir, io))
        .isInstanceOf(CorruptFileException.class)
        .hasMessage("metadata is not valid JSON [file=" + file() + "]");

    Files.writeString(file(), "{\"format_version\": 2, \"collections\": []}");
    assertThatThrownBy(() -> new LocalMetadataStore(dir, io))
        .isInstanceOf(CorruptFileException.class)
        .hasMessage(
            "unsupported metadata format version [version=2, supported=1] [file=" + file() + "]");

    Files.writeString(file(), "{\"collections\": []}");
    assertThatThrownBy(() -> new LocalMetadataStore(dir, io))
        .isInstanceOf(CorruptFileException.class)
        .hasMessageStartingWith("unsupported metadata format version [version=-1, supported=1]");
  }
}
