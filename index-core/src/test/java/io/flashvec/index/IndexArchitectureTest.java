package io.flashvec.index;

import static com.tngtech.archunit.lang.syntax.ArchRuleDefinition.noClasses;
import static com.tngtech.archunit.library.dependencies.SlicesRuleDefinition.slices;

import com.tngtech.archunit.core.domain.JavaClass;
import com.tngtech.archunit.core.domain.JavaClasses;
import com.tngtech.archunit.core.importer.ClassFileImporter;
import com.tngtech.archunit.core.importer.ImportOption;
import com.tngtech.archunit.library.dependencies.SliceAssignment;
import com.tngtech.archunit.library.dependencies.SliceIdentifier;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * The package structure of index-core, checked on its class files: the packages under {@code
 * io.flashvec.index} (the root among them) import each other in one direction only, and the root
 * holds the value types every layer shares (ids, points, metrics, parameters, the status
 * exceptions), so that it depends on no package of the engine.
 */
class IndexArchitectureTest {

  private static final String ROOT = "io.flashvec.index";

  /**
   * Each class belongs to its package directly under the root; the root's own classes to "root".
   */
  private static final SliceAssignment PACKAGES =
      new SliceAssignment() {
        @Override
        public SliceIdentifier getIdentifierOf(JavaClass c) {
          String p = c.getPackageName();
          if (p.equals(ROOT)) {
            return SliceIdentifier.of("root");
          }
          if (!p.startsWith(ROOT + ".")) {
            return SliceIdentifier.ignore();
          }
          String rest = p.substring(ROOT.length() + 1);
          int dot = rest.indexOf('.');
          return SliceIdentifier.of(dot < 0 ? rest : rest.substring(0, dot));
        }

        @Override
        public String getDescription() {
          return "the packages of " + ROOT;
        }
      };

  private static JavaClasses classes;

  @BeforeAll
  static void importClasses() {
    classes =
        new ClassFileImporter()
            .withImportOption(ImportOption.Predefined.DO_NOT_INCLUDE_TESTS)
            .importPackages(ROOT);
  }

  @Test
  void packagesHaveNoCycles() {
    slices().assignedFrom(PACKAGES).should().beFreeOfCycles().check(classes);
  }

  @Test
  void theRootHoldsValueTypesAndDependsOnNoEnginePackage() {
    noClasses()
        .that()
        .resideInAPackage(ROOT)
        .should()
        .dependOnClassesThat()
        .resideInAnyPackage(
            ROOT + ".collection..",
            ROOT + ".shard..",
            ROOT + ".segment..",
            ROOT + ".diskann..",
            ROOT + ".disk..",
            ROOT + ".payload..",
            ROOT + ".filter..",
            ROOT + ".query..")
        .because("the engine depends on its value types, not the other way round")
        .check(classes);
  }
}
