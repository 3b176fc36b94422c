package dev.evictd;

import static com.tngtech.archunit.base.DescribedPredicate.describe;
import static com.tngtech.archunit.core.domain.JavaClass.Predicates.resideInAPackage;
import static com.tngtech.archunit.lang.syntax.ArchRuleDefinition.classes;
import static com.tngtech.archunit.lang.syntax.ArchRuleDefinition.noClasses;
import static com.tngtech.archunit.library.Architectures.layeredArchitecture;
import static com.tngtech.archunit.library.dependencies.SlicesRuleDefinition.slices;

import com.tngtech.archunit.base.DescribedPredicate;
import com.tngtech.archunit.core.domain.JavaClass;
import com.tngtech.archunit.core.domain.JavaClasses;
import com.tngtech.archunit.core.importer.ClassFileImporter;
import com.tngtech.archunit.core.importer.ImportOption;
import com.tngtech.archunit.library.Architectures.LayeredArchitecture;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * The main code's packages form no cycle and every one sits in its layer ({@link
 * #everyPackageKeepsToItsLayer}); the bottom layers stay at the bottom: {@code api} (the facts and
 * values rules see), {@code stats} (the Summary model), {@code k8s} (the Go ports over them) and
 * {@code ports} (the agent's seams) name no package above them.
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

  /** The packages every layer above {@code config} builds on. */
  private static final String[] BASE = {"stats", "api", "k8s", "config"};

  /**
   * The layers as they are meant to be, bottom first: the Summary model and the facts at the
   * bottom, the Go ports over them and configuration over those (configuration reads the kubelet's
   * feature gates from {@code k8s}); then, side by side, the agent's seams ({@code ports}) with the
   * host and cluster adapters on them ({@code linux}, {@code kube}, then {@code executor}) and the
   * planner ({@code engine}) with rule loading on it ({@code ruleset}); the fixture runner beside
   * the agent (neither names the other), the admission webhook beside both, the CLI on top. Three
   * dependencies break it today, each a single use, each named here as the one exception allowed
   * (moving the type is the fix, left to the owners of the code it would touch).
   */
  @Test
  void everyPackageKeepsToItsLayer() {
    LayeredArchitecture layers = layeredArchitecture().consideringOnlyDependenciesInLayers();
    for (String layer : LAYERS) {
      layers = layers.layer(layer).definedBy("dev.evictd." + layer + "..");
    }
    layers
        .whereLayer("stats")
        .mayNotAccessAnyLayer()
        .whereLayer("api")
        .mayOnlyAccessLayers("stats")
        .whereLayer("k8s")
        .mayOnlyAccessLayers("stats", "api")
        .whereLayer("config")
        .mayOnlyAccessLayers("stats", "api", "k8s")
        .whereLayer("ports")
        .mayOnlyAccessLayers(BASE)
        .whereLayer("engine")
        .mayOnlyAccessLayers(BASE)
        .whereLayer("ruleset")
        .mayOnlyAccessLayers(with(BASE, "engine"))
        .whereLayer("linux")
        .mayOnlyAccessLayers(with(BASE, "ports"))
        .whereLayer("kube")
        .mayOnlyAccessLayers(with(BASE, "ports"))
        .whereLayer("executor")
        .mayOnlyAccessLayers(with(BASE, "ports", "linux", "kube"))
        .whereLayer("fixture")
        .mayOnlyAccessLayers(with(BASE, "engine", "ruleset"))
        .whereLayer("agent")
        .mayOnlyAccessLayers(with(BASE, "ports", "engine", "ruleset", "linux", "kube", "executor"))
        .whereLayer("admission")
        .mayOnlyAccessLayers(with(BASE, "ports", "kube"))
        // the default rules pre-built at build time (rules/*.drl, DRL package dev.evictd.rules):
        // they name the rules' vocabulary only, and no code names them (the engine loads them)
        .whereLayer("rules")
        .mayOnlyAccessLayers(with(BASE, "engine"))
        .whereLayer("rules")
        .mayNotBeAccessedByAnyLayer()
        // ports -> engine: PodSource.isGone compares uids as PodFacts.uid makes them (the uid, or
        // namespace/name without one); the rule belongs with the pod model below both
        .ignoreDependency(
            resideInAPackage("dev.evictd.ports.."), named("dev.evictd.engine.PodFacts"))
        // kube -> engine: the informer's store keeps pods as PodCompaction.forStore leaves them;
        // PodCompaction (and its FrozenMap) belong below both, beside the pod model
        .ignoreDependency(
            resideInAPackage("dev.evictd.kube.."), named("dev.evictd.engine.PodCompaction"))
        // agent -> fixture: standalone mode's --pods-file and the plan command read pods, a Summary
        // and a kubelet configuration through CapturedInputs, which belongs in the kubelet-facing
        // code (it brings PlainJsonPods and the generated PodBinder with it)
        .ignoreDependency(
            resideInAPackage("dev.evictd.agent.."), named("dev.evictd.fixture.CapturedInputs"))
        .check(main);
  }

  @Test
  void everyPackageHasALayer() {
    classes()
        .should()
        .resideInAnyPackage(
            java.util.stream.Stream.of(LAYERS)
                .map(p -> "dev.evictd." + p + "..")
                .toArray(String[]::new))
        .check(main);
  }

  private static final String[] LAYERS = {
    "stats",
    "api",
    "config",
    "k8s",
    "ports",
    "engine",
    "ruleset",
    "linux",
    "kube",
    "executor",
    "fixture",
    "agent",
    "admission",
    "cli",
    "rules"
  };

  private static String[] with(String[] base, String... more) {
    return java.util.stream.Stream.concat(
            java.util.Arrays.stream(base), java.util.Arrays.stream(more))
        .toArray(String[]::new);
  }

  /** The class of that name and its nested classes. */
  private static DescribedPredicate<JavaClass> named(String name) {
    return describe(name, c -> c.getName().equals(name) || c.getName().startsWith(name + "$"));
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
