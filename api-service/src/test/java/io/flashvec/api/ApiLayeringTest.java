package io.flashvec.api;

import static com.tngtech.archunit.base.DescribedPredicate.not;
import static com.tngtech.archunit.core.domain.JavaClass.Predicates.resideInAPackage;
import static com.tngtech.archunit.core.domain.JavaClass.Predicates.resideInAnyPackage;
import static com.tngtech.archunit.core.domain.JavaClass.Predicates.type;
import static com.tngtech.archunit.lang.syntax.ArchRuleDefinition.noClasses;

import com.tngtech.archunit.core.domain.JavaClasses;
import com.tngtech.archunit.core.importer.ClassFileImporter;
import com.tngtech.archunit.core.importer.ImportOption;
import io.flashvec.index.segment.Segment;
import io.flashvec.storage.FsyncPolicy;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * The REST layer sees the engine only through its public API, so the engine's insides can change
 * without touching it:
 *
 * <ul>
 *   <li>cluster: {@code io.flashvec.cluster} (the {@code CollectionService} it serves) and {@code
 *       io.flashvec.cluster.node} (the node it starts and its settings) — never a role's package
 *       (proxy, query, index, metadata, transport, local);
 *   <li>index-core: the value types, requests and results ({@code io.flashvec.index}, {@code
 *       .query}, {@code .filter}, {@code .payload}, {@code .collection}), the memory plan the
 *       server sizes itself by ({@code .memory}: settings, the start-up line, gauges, the
 *       launcher's {@code -Xmx}) and {@link Segment.State}, which a collection's description
 *       reports per segment — never the shard engine, its segments or its graphs;
 *   <li>storage: only {@link FsyncPolicy}, a collection setting the API reads and shows.
 * </ul>
 */
class ApiLayeringTest {

  private static JavaClasses api;

  @BeforeAll
  static void importClasses() {
    api =
        new ClassFileImporter()
            .withImportOption(ImportOption.Predefined.DO_NOT_INCLUDE_TESTS)
            .importPackages("io.flashvec.api");
  }

  @Test
  void usesOnlyTheClustersPublicApi() {
    noClasses()
        .that()
        .resideInAPackage("io.flashvec.api..")
        .should()
        .dependOnClassesThat(
            resideInAPackage("io.flashvec.cluster..")
                .and(not(resideInAnyPackage("io.flashvec.cluster", "io.flashvec.cluster.node"))))
        .check(api);
  }

  @Test
  void usesNoShardEngineInternals() {
    noClasses()
        .that()
        .resideInAPackage("io.flashvec.api..")
        .should()
        .dependOnClassesThat(
            resideInAPackage("io.flashvec.index..")
                .and(
                    not(resideInAnyPackage(
                            "io.flashvec.index",
                            "io.flashvec.index.query",
                            "io.flashvec.index.filter",
                            "io.flashvec.index.payload",
                            "io.flashvec.index.collection",
                            "io.flashvec.index.memory"))
                        .and(not(type(Segment.State.class)))))
        .check(api);
  }

  @Test
  void usesNoStorageInternals() {
    noClasses()
        .that()
        .resideInAPackage("io.flashvec.api..")
        .should()
        .dependOnClassesThat(
            resideInAPackage("io.flashvec.storage..").and(not(type(FsyncPolicy.class))))
        .check(api);
  }
}
