package dev.evictd;

import static com.tngtech.archunit.lang.syntax.ArchRuleDefinition.noClasses;
import static com.tngtech.archunit.library.dependencies.SlicesRuleDefinition.slices;

import com.tngtech.archunit.core.domain.JavaClasses;
import com.tngtech.archunit.core.importer.ClassFileImporter;
import com.tngtech.archunit.core.importer.ImportOption;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * The main code's packages form no cycle, and the bottom layers stay at the bottom: {@code api}
 * (the facts and values rules see), {@code stats} (the Summary model), {@code k8s} (the Go ports
 * over them) and {@code ports} (the agent's seams) name no package above them.
 */
class PackageCyclesTest {
  private static JavaClasses main;

  @BeforeAll
  static void importMainClasses() {
    main =
        new ClassFileImporter()
            .withImportOption(ImportOption.Predefined.DO_NOT_INCLUDE_TESTS)
            .withImportOption(ImportOption.Predefined.DO_NOT_INCLUDE_JARS)
            .importPackages("dev.evictd");
  }

  @Test
  void noPackageCycle() {
    slices().matching("dev.evictd.(*)..").should().beFreeOfCycles().check(main);
  }

  @Test
  void apiNamesOnlyTheSummaryModel() {
    noClasses()
        .that()
        .resideInAPackage("dev.evictd.api..")
        .should()
        .dependOnClassesThat()
        .resideInAnyPackage(above("api", "stats"))
        .check(main);
  }

  @Test
  void theSummaryModelNamesOnlyApi() {
    noClasses()
        .that()
        .resideInAPackage("dev.evictd.stats..")
        .should()
        .dependOnClassesThat()
        .resideInAnyPackage(above("stats", "api"))
        .check(main);
  }

  @Test
  void theGoPortsNameOnlyFactsAndTheSummaryModel() {
    noClasses()
        .that()
        .resideInAPackage("dev.evictd.k8s..")
        .should()
        .dependOnClassesThat()
        .resideInAnyPackage(above("k8s", "api", "stats"))
        .check(main);
  }

  @Test
  void theSeamsNameNoImplementationAndNoUser() {
    noClasses()
        .that()
        .resideInAPackage("dev.evictd.ports..")
        .should()
        .dependOnClassesThat()
        .resideInAnyPackage(
            "dev.evictd.agent..",
            "dev.evictd.cli..",
            "dev.evictd.executor..",
            "dev.evictd.fixture..",
            "dev.evictd.kube..",
            "dev.evictd.linux..")
        .check(main);
  }

  @Test
  void theAdaptersDoNotReachBackIntoTheAgentOrTheCli() {
    noClasses()
        .that()
        .resideInAnyPackage("dev.evictd.kube..", "dev.evictd.linux..", "dev.evictd.executor..")
        .should()
        .dependOnClassesThat()
        .resideInAnyPackage("dev.evictd.agent..", "dev.evictd.cli..")
        .check(main);
  }

  /** Every evictd package of the target layout except {@code allowed}, as ArchUnit patterns. */
  private static String[] above(String... allowed) {
    java.util.List<String> all =
        new java.util.ArrayList<>(
            java.util.List.of(
                "api",
                "stats",
                "k8s",
                "ports",
                "config",
                "ruleset",
                "engine",
                "linux",
                "executor",
                "kube",
                "agent",
                "fixture",
                "cli"));
    all.removeAll(java.util.List.of(allowed));
    return all.stream().map(p -> "dev.evictd." + p + "..").toArray(String[]::new);
  }
}
