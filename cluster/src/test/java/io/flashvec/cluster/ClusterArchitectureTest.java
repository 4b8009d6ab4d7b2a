package io.flashvec.cluster;

import static com.tngtech.archunit.library.Architectures.layeredArchitecture;
import static com.tngtech.archunit.library.dependencies.SlicesRuleDefinition.slices;

import com.tngtech.archunit.core.domain.JavaClasses;
import com.tngtech.archunit.core.importer.ClassFileImporter;
import com.tngtech.archunit.core.importer.ImportOption;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * The layering of the cluster module's role packages, from the top:
 *
 * <pre>
 *   node                       assembles a process from the roles
 *   proxy   query   index      the roles; none of them knows another
 *   local                      replicas and collections on this node's disk (query, standalone)
 *   metadata   transport       etcd and the gRPC wire; neither knows the other
 *   io.flashvec.cluster        the public API (CollectionService); knows no role
 * </pre>
 *
 * A package may use the ones below it, never one beside or above it. Roles talk to each other only
 * over gRPC (transport) and through the metadata, so a role can be moved to its own process, and
 * tested alone, without dragging the others along.
 */
class ClusterArchitectureTest {

  private static JavaClasses classes;

  @BeforeAll
  static void importClasses() {
    classes =
        new ClassFileImporter()
            .withImportOption(ImportOption.Predefined.DO_NOT_INCLUDE_TESTS)
            .importPackages("io.flashvec.cluster");
  }

  @Test
  void rolePackagesDependOnlyDownwards() {
    layeredArchitecture()
        .consideringOnlyDependenciesInLayers()
        .layer("Node")
        .definedBy("io.flashvec.cluster.node..")
        .layer("Proxy")
        .definedBy("io.flashvec.cluster.proxy..")
        .layer("Query")
        .definedBy("io.flashvec.cluster.query..")
        .layer("Index")
        .definedBy("io.flashvec.cluster.index..")
        .layer("Local")
        .definedBy("io.flashvec.cluster.local..")
        .layer("Metadata")
        .definedBy("io.flashvec.cluster.metadata..")
        .layer("Transport")
        .definedBy("io.flashvec.cluster.transport..")
        .layer("Api")
        .definedBy("io.flashvec.cluster")
        .whereLayer("Node")
        .mayNotBeAccessedByAnyLayer()
        .whereLayer("Proxy")
        .mayOnlyAccessLayers("Api", "Metadata", "Transport")
        .whereLayer("Query")
        .mayOnlyAccessLayers("Api", "Local", "Metadata", "Transport")
        .whereLayer("Index")
        .mayOnlyAccessLayers("Api", "Metadata", "Transport")
        .whereLayer("Local")
        .mayOnlyAccessLayers("Api", "Metadata")
        .whereLayer("Metadata")
        .mayOnlyAccessLayers("Api")
        .whereLayer("Transport")
        .mayOnlyAccessLayers("Api")
        .whereLayer("Api")
        .mayNotAccessAnyLayer()
        .check(classes);
  }

  @Test
  void rolePackagesHaveNoCycles() {
    slices().matching("io.flashvec.cluster.(*)..").should().beFreeOfCycles().check(classes);
  }
}
