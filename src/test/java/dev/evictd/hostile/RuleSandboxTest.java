package dev.evictd.hostile;

import static org.assertj.core.api.Assertions.assertThat;

import dev.evictd.api.EvictionConfig;
import dev.evictd.api.EvictionPlan;
import dev.evictd.api.FsLayout;
import dev.evictd.config.KubeletEvictionConfig;
import dev.evictd.config.YamlNode;
import dev.evictd.engine.Planner;
import dev.evictd.engine.PlannerHooks;
import dev.evictd.engine.RuleSet;
import dev.evictd.engine.RuleSource;
import dev.evictd.engine.SyncBudget;
import dev.evictd.ruleset.RuleCompiler;
import dev.evictd.ruleset.RuleSetCache;
import dev.evictd.stats.Summary;
import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.PodBuilder;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.TreeSet;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

/**
 * Rule sets that pass the policy lint and then try to do harm at run time (the files of {@code
 * src/test/resources/hostile-runtime/}, each run with the default rules): they keep the heap,
 * exhaust it, overflow the stack, allocate without end, hoard facts or backtrack in a regular
 * expression. Each time the sync fails (or finishes) within its budgets, {@link Planner#sync} never
 * throws, and the next sync decides as the default rules do.
 */
class RuleSandboxTest {
  static final Path RUNTIME = Path.of("src/test/resources/hostile-runtime");
  static final Instant T0 = Instant.parse("2026-01-01T00:00:00Z");
  static final long MI = 1024 * 1024;

  static EvictionConfig config() {
    String yaml = "evictionHard: {memory.available: 1Gi}\nenforceNodeAllocatable: []\n";
    return KubeletEvictionConfig.from(
        YamlNode.parse("k.yaml", yaml.getBytes(StandardCharsets.UTF_8)), "n", FsLayout.SHARED);
  }

  static Pod pod(String name, int priority) {
    return new PodBuilder()
        .withNewMetadata()
        .withName(name)
        .withNamespace("default")
        .withUid("uid-" + name)
        .endMetadata()
        .withNewSpec()
        .withPriority(priority)
        .addNewContainer()
        .withName("c")
        .endContainer()
        .endSpec()
        .build();
  }

  /** Memory pressure (500 MiB available, under the 1Gi hard threshold), each pod using 100 MiB. */
  static Summary pressure(List<Pod> pods) {
    List<Summary.PodStats> ps = new ArrayList<>();
    for (Pod p : pods) {
      ps.add(
          new Summary.PodStats(
              new Summary.PodReference(
                  p.getMetadata().getName(), "default", p.getMetadata().getUid()),
              List.of(),
              new Summary.MemoryStats(null, null, null, 100 * MI, null),
              List.of(),
              null,
              null));
    }
    return new Summary(
        new Summary.NodeStats(
            "n",
            new Summary.MemoryStats(null, 500 * MI, null, 4096 * MI, null),
            null,
            null,
            null,
            null),
        ps);
  }

  /** How a set is loaded: compiled from its DRL, or from its executable model (cached). */
  enum Route {
    COMPILED,
    MODEL
  }

  @TempDir static Path cache;

  /** The default rules with one hostile file of the run-time corpus added. */
  static RuleSet withDefaults(String file) throws IOException {
    return withDefaults(file, Route.COMPILED);
  }

  /** The same, loaded by {@code route}. */
  static RuleSet withDefaults(String file, Route route) throws IOException {
    List<RuleSource> sources = new ArrayList<>(RuleCompiler.readDefault());
    Path f = RUNTIME.resolve(file);
    sources.add(new RuleSource(file, f.toString(), Files.readString(f)));
    return load("hostile-runtime/" + file, sources, route);
  }

  private static RuleSet load(String source, List<RuleSource> sources, Route route) {
    if (route == Route.COMPILED) {
      RuleSet rs = RuleCompiler.compile(source, sources);
      assertThat(fromModel(rs)).isFalse();
      return rs;
    }
    RuleCompiler.Options o =
        RuleCompiler.Options.STRICT.withCache(
            RuleSetCache.at(cache).withModelBuilds(RuleSetCache.ModelBuilds.IN_PROCESS));
    RuleCompiler.compile(source, sources, o); // built and cached; then loaded as a restart would
    RuleSet rs = RuleCompiler.compile(source, sources, o);
    // a matches stays compiled (on RE2/J): the model would run it on java.util.regex
    boolean matches = sources.stream().anyMatch(s -> s.text().contains(" matches "));
    assertThat(fromModel(rs)).as(source).isEqualTo(!matches);
    return rs;
  }

  /** Whether a set's rules came from an executable model (their consequences are the model's). */
  static boolean fromModel(RuleSet rs) {
    return rs.kieBase().getKiePackages().stream()
        .flatMap(p -> p.getRules().stream())
        .filter(r -> !((org.drools.base.definitions.rule.impl.RuleImpl) r).isQuery())
        .allMatch(
            r ->
                ((org.drools.base.definitions.rule.impl.RuleImpl) r)
                    .getConsequence()
                    .getClass()
                    .getName()
                    .startsWith("org.drools.modelcompiler."));
  }

  private static EvictionPlan sync(Planner planner, int step, List<Pod> pods) {
    return planner.sync(
        T0.plusSeconds(10L * step), pressure(pods), pods, PlannerHooks.noReclaim(null));
  }

  /** The next sync without the hostile pod decides as the default rules do: the lowest priority. */
  private static void nextSyncWorks(Planner planner, int step) {
    List<Pod> fine = List.of(pod("a", 10), pod("b", 0));
    EvictionPlan p = sync(planner, step, fine);
    assertThat(p.failed()).as("%s", p.failure()).isFalse();
    assertThat(p.decisions()).extracting(d -> d.pod().name()).containsExactly("b");
  }

  @ParameterizedTest
  @EnumSource(Route.class)
  void aRuleThatKeeps48MiBEverySyncFailsThoseSyncsAndTheSessionLetsTheArraysGo(Route route)
      throws IOException {
    SyncBudget budget = SyncBudget.DEFAULT.withKept(10_000, 20, 32 * MI);
    try (Planner planner =
        new Planner(withDefaults("keeps-48mib-every-sync.drl", route), config(), budget)) {
      List<Pod> pods = List.of(pod("hog", 0), pod("a", 10));
      for (int i = 1; i <= 12; i++) { // 576 MiB kept by now without the budget
        EvictionPlan p = sync(planner, i, pods);
        assertThat(p.failed()).as("sync %d", i).isTrue();
        assertThat(p.failure())
            .contains("the facts rules inserted hold more than 32.0 MiB")
            .contains("long[6291456] of about 48.0 MiB")
            .contains("the session is rebuilt from the state kept before this sync");
        assertThat(p.decisions()).isEmpty();
      }
      nextSyncWorks(planner, 13);
      assertThat(planner.abandonedRuleThreads()).isZero();
    }
  }

  @ParameterizedTest
  @EnumSource(Route.class)
  void anOutOfMemoryErrorInRuleCodeFailsTheSyncNotTheProcess(Route route) throws IOException {
    try (Planner planner = new Planner(withDefaults("out-of-memory.drl", route), config())) {
      for (int i = 1; i <= 3; i++) {
        EvictionPlan p = sync(planner, i, List.of(pod("oom", 0), pod("a", 10)));
        assertThat(p.failed()).isTrue();
        assertThat(p.failure())
            .contains("rule \"hostile: out of memory\" failed")
            .contains("OutOfMemoryError")
            .contains("the session is rebuilt from the state kept before this sync");
        assertThat(p.decisions()).isEmpty();
      }
      nextSyncWorks(planner, 4);
    }
  }

  @ParameterizedTest
  @EnumSource(Route.class)
  void aStackOverflowInAConditionFailsTheSyncNotTheProcess(Route route) throws IOException {
    try (Planner planner = new Planner(withDefaults("stack-overflow.drl", route), config())) {
      EvictionPlan p = sync(planner, 1, List.of(pod("deep", 0), pod("a", 10)));
      assertThat(p.failed()).isTrue();
      assertThat(p.failure()).contains("StackOverflowError");
      assertThat(p.decisions()).isEmpty();
      nextSyncWorks(planner, 2);
    }
  }

  @ParameterizedTest
  @EnumSource(Route.class)
  void aSyncThatAllocatesPastItsBudgetFailsAndTheNextWorks(Route route) throws IOException {
    SyncBudget budget = SyncBudget.DEFAULT.withAllocation(128 * MI, 0);
    try (Planner planner =
        new Planner(withDefaults("allocates-a-gibibyte.drl", route), config(), budget)) {
      EvictionPlan p = sync(planner, 1, List.of(pod("churn", 0), pod("a", 10)));
      assertThat(p.failed()).isTrue();
      assertThat(p.failure())
          .contains(
              "rule \"hostile: allocate a gibibyte\" allocated more than the budget of 128.0 MiB")
          .contains("in phase observe");
      assertThat(p.decisions()).isEmpty();
      nextSyncWorks(planner, 2);
      assertThat(planner.abandonedRuleThreads()).isZero();
    }
  }

  @ParameterizedTest
  @EnumSource(Route.class)
  void aRuleThatHoardsFactsFailsPastTheKeptFactsBudget(Route route) throws IOException {
    SyncBudget budget = SyncBudget.DEFAULT.withKept(2_500, 20, 64 * MI);
    try (Planner planner =
        new Planner(withDefaults("keeps-a-fact-every-sync.drl", route), config(), budget)) {
      List<Pod> pods = List.of(pod("hoarder", 0), pod("a", 10));
      assertThat(sync(planner, 1, pods).failed()).isFalse();
      assertThat(sync(planner, 2, pods).failed()).isFalse();
      EvictionPlan third = sync(planner, 3, pods);
      assertThat(third.failed()).isTrue();
      assertThat(third.failure())
          .contains("rules keep")
          .contains("facts they inserted in the session (at most 2540 with 2 pods)");
      // the session was rebuilt without them: the count starts again
      assertThat(sync(planner, 4, pods).failed()).isFalse();
      nextSyncWorks(planner, 5);
    }
  }

  @ParameterizedTest
  @EnumSource(Route.class)
  void matchesRunsInLinearTimeSoNoPatternBacktracksForEver(Route route) throws IOException {
    SyncBudget budget = SyncBudget.DEFAULT.withTime(Duration.ofSeconds(5));
    try (Planner planner =
        new Planner(withDefaults("regex-backtracking.drl", route), config(), budget)) {
      String sixty = "a".repeat(60);
      List<Pod> pods = List.of(pod(sixty, 0), pod("a".repeat(59) + "b", 10));
      for (int i = 1; i <= 3; i++) {
        EvictionPlan p = sync(planner, i, pods);
        assertThat(p.failed()).as("%s", p.failure()).isFalse();
        assertThat(p.decisions()).extracting(d -> d.pod().name()).containsExactly(sixty);
      }
      assertThat(planner.abandonedRuleThreads()).isZero();
    }
  }

  /** Live threads, by name, other than the rule threads and JUnit's own. */
  private static Set<String> threads() {
    Set<String> out = new TreeSet<>();
    for (Thread t : Thread.getAllStackTraces().keySet()) {
      if (t.isAlive() && !t.getName().startsWith("evictd-rules-")) {
        out.add(t.getName());
      }
    }
    return out;
  }

  @ParameterizedTest
  @EnumSource(Route.class)
  void rulesRunOnTheRuleThreadOnlyEvenWithStreamsInFromAndConsequences(Route route) {
    String drl =
        "package dev.evictd.rules;\nimport dev.evictd.api.*;\nimport java.util.stream.StreamSupport;\n"
            + "rule \"sequential streams everywhere\" ruleflow-group \"observe\"\nwhen\n"
            + "  $p: PodFact()\n"
            + "  $n: Long() from StreamSupport.stream($p.labels().keySet().spliterator(), false).count()\n"
            + "then\n"
            + "  insert(java.util.stream.IntStream.range(0, 10000).boxed().map(i -> i * 2)"
            + ".reduce(0, Integer::sum) + $n);\nend\n";
    List<RuleSource> sources = new ArrayList<>(RuleCompiler.readDefault());
    sources.add(new RuleSource("streams.drl", "streams.drl", drl));
    RuleSet rules = load("streams", sources, route);
    try (Planner planner = new Planner(rules, config())) {
      List<Pod> pods = new ArrayList<>();
      for (int i = 0; i < 40; i++) {
        pods.add(pod("p" + i, i));
      }
      sync(planner, 0, pods); // the rule thread and the engine's own threads, if any, start here
      Set<String> before = threads();
      for (int i = 1; i <= 30; i++) {
        assertThat(sync(planner, i, pods).failed()).isFalse();
      }
      // no thread started by rule code (threads of earlier tests may end meanwhile)
      assertThat(threads()).as("threads after the syncs").isSubsetOf(before);
    }
  }
}
