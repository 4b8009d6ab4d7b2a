package io.flashvec.cluster.local;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.flashvec.index.InvalidInputException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import tools.jackson.databind.JsonNode;
import tools.jackson.databind.json.JsonMapper;
import tools.jackson.databind.node.ObjectNode;

/**
 * The manifests of partial shard snapshots: file versions are content fingerprints, a partial copy
 * leaves out exactly the files a manifest names at their current content, and filling it back from
 * a shard refuses a file that changed or lies outside the shard.
 */
class PartialManifestTest {

  private static final JsonMapper JSON = JsonMapper.builder().build();

  @TempDir Path tmp;

  private static void write(Path p, String text) throws Exception {
    Files.createDirectories(p.getParent());
    Files.writeString(p, text, StandardCharsets.UTF_8);
  }

  private Path shard(String name, String deleted) throws Exception {
    Path s = tmp.resolve(name);
    write(s.resolve("segments/seg-0000000001/graph.fvs"), "graph of one");
    write(s.resolve("segments/seg-0000000001/deleted.fvs"), deleted);
    write(s.resolve("segments/seg-0000000001/index/tag.fvs"), "tag index");
    write(s.resolve("segments/seg-0000000002/graph.fvs"), "graph of two");
    return s;
  }

  @Test
  void aManifestNamesEverySegmentFileByItsContent() throws Exception {
    ObjectNode m = PartialManifest.of(shard("a", "d1"));
    assertThat(m.propertyNames()).containsExactly("seg-0000000001", "seg-0000000002");
    JsonNode one = m.get("seg-0000000001");
    assertThat(one.get("segment_id").asString()).isEqualTo("seg-0000000001");
    assertThat(one.get("segment_version").asLong()).isZero(); // no manifest.fvs: no checkpoint
    assertThat(one.get("file_versions").propertyNames())
        .containsExactly("deleted.fvs", "graph.fvs", "index/tag.fvs");
    // same content, same version; other content, another one
    ObjectNode other = PartialManifest.of(shard("b", "d2"));
    assertThat(other.at("/seg-0000000001/file_versions/graph.fvs"))
        .isEqualTo(one.at("/file_versions/graph.fvs"));
    assertThat(other.at("/seg-0000000001/file_versions/deleted.fvs"))
        .isNotEqualTo(one.at("/file_versions/deleted.fvs"));
    assertThat(one.at("/file_versions/graph.fvs").asLong()).isNotNegative();
  }

  @Test
  void aPartialCopyLeavesOutTheUnchangedFilesAndIsFilledBackFromTheShard() throws Exception {
    Path recipient = shard("recipient", "d1");
    Map<String, Map<String, Long>> base =
        PartialManifest.parse(PartialManifest.of(recipient)); // the recipient's manifest
    Path copy = shard("copy", "d2"); // the source moved on: another deleted.fvs
    write(copy.resolve("segments/seg-0000000003/graph.fvs"), "graph of three");
    Map<String, Map<String, Long>> omitted = PartialManifest.omit(copy, base);
    assertThat(omitted.keySet()).containsExactly("seg-0000000001", "seg-0000000002");
    assertThat(omitted.get("seg-0000000001").keySet())
        .containsExactly("graph.fvs", "index/tag.fvs");
    assertThat(copy.resolve("segments/seg-0000000001/graph.fvs")).doesNotExist();
    assertThat(copy.resolve("segments/seg-0000000001/deleted.fvs")).hasContent("d2");
    assertThat(copy.resolve("segments/seg-0000000003/graph.fvs")).exists();

    PartialManifest.fill(copy, recipient, JSON.valueToTree(omitted));
    assertThat(copy.resolve("segments/seg-0000000001/graph.fvs")).hasContent("graph of one");
    assertThat(copy.resolve("segments/seg-0000000001/index/tag.fvs")).hasContent("tag index");
    assertThat(copy.resolve("segments/seg-0000000002/graph.fvs")).hasContent("graph of two");
    assertThat(copy.resolve("segments/seg-0000000001/deleted.fvs")).hasContent("d2");
  }

  @Test
  void fillingFromAShardWhoseFileChangedIsRefusedWithoutWritingAnything() throws Exception {
    Path recipient = shard("recipient", "d1");
    Map<String, Map<String, Long>> base = PartialManifest.parse(PartialManifest.of(recipient));
    Path copy = shard("copy", "d1");
    Map<String, Map<String, Long>> omitted = PartialManifest.omit(copy, base);
    write(recipient.resolve("segments/seg-0000000002/graph.fvs"), "rebuilt");
    assertThatThrownBy(() -> PartialManifest.fill(copy, recipient, JSON.valueToTree(omitted)))
        .isInstanceOf(InvalidInputException.class)
        .hasMessageContaining("does not hold segments/seg-0000000002/graph.fvs");
    assertThat(copy.resolve("segments/seg-0000000001/graph.fvs")).doesNotExist();

    JsonNode outside = JSON.readTree("{\"..\":{\"../manifest.fvs\":1}}");
    assertThatThrownBy(() -> PartialManifest.fill(copy, recipient, outside))
        .isInstanceOf(InvalidInputException.class)
        .hasMessageContaining("outside the shard");
  }

  @Test
  void aManifestOtherThanQdrantsShapeIsRefusedNamingWhatIsWrong() {
    assertThatThrownBy(() -> PartialManifest.parse(JSON.readTree("[]")))
        .hasMessageContaining("an object of segments");
    assertThatThrownBy(() -> PartialManifest.parse(JSON.readTree("{\"s\":{}}")))
        .hasMessageContaining("manifest segment `s` has no `file_versions` object");
    assertThatThrownBy(
            () -> PartialManifest.parse(JSON.readTree("{\"s\":{\"file_versions\":{\"f\":\"x\"}}}")))
        .hasMessageContaining("[file=s/f, version=\"x\"]");
    // Qdrant's null version: the file is not known at a version, so it is sent
    assertThat(
            PartialManifest.parse(
                JSON.readTree("{\"s\":{\"file_versions\":{\"f\":null,\"g\":7}}}")))
        .isEqualTo(Map.of("s", Map.of("g", 7L)));
  }
}
