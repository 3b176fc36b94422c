package dev.evictd.agent;

import static org.assertj.core.api.Assertions.assertThat;

import dev.evictd.api.EvictionConfig;
import dev.evictd.api.EvictionMethod;
import dev.evictd.api.EvictionPlan;
import dev.evictd.api.FsLayout;
import dev.evictd.config.KubeletEvictionConfig;
import dev.evictd.config.YamlNode;
import dev.evictd.engine.Planner;
import dev.evictd.engine.RuleSet;
import dev.evictd.engine.SyncBudget;
import dev.evictd.ports.EventSink;
import dev.evictd.ruleset.RuleCompiler;
import dev.evictd.stats.Summary;
import dev.evictd.testing.FakeStatsProvider;
import dev.evictd.testing.RecordingEvictor;
import dev.evictd.testing.StuckRule;
import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.PodBuilder;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Clock;
import java.time.Duration;
import java.util.List;
import java.util.function.BooleanSupplier;
import java.util.stream.Stream;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Hot reloads on probation, with the real planner, real rule sets from the hostile corpus ({@code
 * hostile-rules/runtime/}) and the real rules watch: a set that fails at run time is rolled back
 * within its probation while pressure evictions go on with the previous rules, and it is not loaded
 * again until its content changes.
 */
class RuleProbationTest {
  static final Path RUNTIME = Path.of("src/test/resources/hostile-rules/runtime");
  static final int N = 3;

  /**
   * The rules' time budget here: short, so that stuck syncs end soon, and long enough for the
   * default rules on a busy machine.
   */
  static final Duration BUDGET = Duration.ofSeconds(2);

  static RuleSet defaults;

  static final EvictionConfig CONFIG =
      KubeletEvictionConfig.from(
          YamlNode.parse(
              "k.yaml", "evictionHard: {memory.available: 1Gi}\n".getBytes(StandardCharsets.UTF_8)),
          "node-1",
          FsLayout.SHARED);

  static final Summary QUIET = FakeStatsProvider.memory(5000, 3000, "a", 900, "b", 100);
  static final Summary PRESSURE = FakeStatsProvider.memory(500, 7000, "a", 900, "b", 100);

  @TempDir Path tmp;
  Path rulesDir;
  Path stateDir;
  FakeStatsProvider stats = new FakeStatsProvider();
  RecordingEvictor evictor = new RecordingEvictor();
  java.util.concurrent.atomic.AtomicReference<List<Pod>> pods =
      new java.util.concurrent.atomic.AtomicReference<>(List.of(pod("a"), pod("b")));
  AgentMetrics metrics = new AgentMetrics(Clock.systemUTC());
  RuleStateStore store;
  RuleProbation probation;
  EvictionManager manager;
  RulesReloader reloader;

  @BeforeAll
  static void compile() {
    defaults = RuleCompiler.compileDefault();
  }

  static Pod pod(String name) {
    return new PodBuilder()
        .withNewMetadata()
        .withName(name)
        .withNamespace("default")
        .withUid("default/" + name)
        .endMetadata()
        .withNewSpec()
        .withNodeName("node-1")
        .addNewContainer()
        .withName("c")
        .withImage("busybox")
        .endContainer()
        .endSpec()
        .build();
  }

  /**
   * The agent's reload path on {@code rulesDir} (extends the defaults), its initial set trusted
   * after N clean syncs.
   */
  void start(RuleCompiler.Options options) throws Exception {
    rulesDir = Files.createDirectories(tmp.resolve("rules"));
    stateDir = tmp.resolve("state");
    Files.writeString(rulesDir.resolve("rules.yaml"), "extends: default\n");
    RuleSet initial = RuleCompiler.compile(rulesDir, options);
    store = new RuleStateStore(stateDir);
    probation =
        new RuleProbation(
            N,
            store,
            CONFIG,
            () -> defaults,
            sources -> RuleCompiler.compile("saved", sources, options),
            metrics::rulesReload,
            Clock.systemUTC());
    probation.shadowBudget(SyncBudget.DEFAULT.withTime(BUDGET));
    probation.started(initial, rulesDir);
    stats.set(QUIET);
    manager =
        new EvictionManager(
            new Planner(initial, CONFIG, SyncBudget.DEFAULT.withTime(BUDGET)),
            stats,
            () -> pods.get(),
            evictor,
            x -> true,
            EventSink.NONE,
            metrics,
            Clock.systemUTC(),
            new EvictionManager.Settings(
                Duration.ofSeconds(10), Duration.ZERO, EvictionMethod.DELETE, false, false));
    manager.setProbation(probation);
    probation.onSwap(manager::swapRules);
    reloader =
        new RulesReloader(
            rulesDir,
            initial.sha256(),
            dir -> RuleCompiler.compile(dir, options),
            rs -> probation.admit(rs, rulesDir, manager.lastInputs()),
            f -> metrics.rulesReload(RuleProbation.FAILED),
            s -> metrics.rulesReload(RuleProbation.UNCHANGED),
            Duration.ofMillis(100));
    assertThat(probation.onProbation()).as("a set never trusted on this node").isTrue();
    for (int i = 0; i < N; i++) {
      assertThat(manager.syncOnce("quiet").outcome()).isEqualTo("ok");
    }
    assertThat(probation.onProbation()).isFalse();
    assertThat(probation.trusted().sha256()).isEqualTo(initial.sha256());
    assertThat(store.lastGood().sha256()).isEqualTo(initial.sha256());
    assertThat(count("trusted")).isEqualTo(1.0);
  }

  static EvictionPlan plan(List<EvictionPlan.RefusedDecision> refused) {
    return new EvictionPlan(
        1,
        java.time.Instant.EPOCH,
        List.of(),
        List.of(),
        List.of(),
        null,
        List.of(),
        false,
        List.of(),
        List.of(),
        List.of(),
        java.util.Map.of(),
        List.of(),
        null,
        refused);
  }

  @AfterEach
  void close() {
    StuckRule.release();
    if (reloader != null) {
      reloader.close();
    }
    if (manager != null) {
      manager.close();
    }
  }

  double count(String result) {
    String line = "evictd_rule_reloads_total{result=\"" + result + "\"} ";
    return metrics
        .scrape()
        .lines()
        .filter(l -> l.startsWith(line))
        .mapToDouble(l -> Double.parseDouble(l.substring(line.length())))
        .findFirst()
        .orElse(0);
  }

  /** Pushes a corpus rule set into the watched directory, as a ConfigMap update would. */
  void push(String corpusEntry) throws Exception {
    try (Stream<Path> s = Files.list(RUNTIME.resolve(corpusEntry))) {
      for (Path f : s.toList()) {
        Files.copy(
            f,
            rulesDir.resolve(f.getFileName()),
            java.nio.file.StandardCopyOption.REPLACE_EXISTING);
      }
    }
  }

  static boolean await(BooleanSupplier c) throws InterruptedException {
    long deadline = System.nanoTime() + 30_000_000_000L;
    while (!c.getAsBoolean() && System.nanoTime() < deadline) {
      Thread.sleep(20);
    }
    return c.getAsBoolean();
  }

  /**
   * Pushes a set that fails only under pressure, lets it pass its shadow sync on quiet inputs, then
   * brings pressure: the set is rolled back within N syncs and the previous rules evict.
   */
  void rolledBackUnderPressure(String corpusEntry, String failure) throws Exception {
    start(RuleCompiler.Options.STRICT);
    String trusted = manager.rulesSha256();
    push(corpusEntry);
    assertThat(await(() -> count("loaded") == 1.0)).as("the watch hands the set over").isTrue();
    assertThat(probation.onProbation()).isTrue();
    var quiet = manager.syncOnce("quiet");
    assertThat(quiet.outcome()).isEqualTo("ok");
    String bad = manager.rulesSha256();
    assertThat(bad).isNotEqualTo(trusted);

    stats.set(PRESSURE);
    int syncs = 1;
    EvictionManager.SyncResult r = manager.syncOnce("pressure");
    while (!r.outcome().equals("failed") && syncs < N) {
      syncs++;
      r = manager.syncOnce("pressure");
    }
    assertThat(r.outcome()).isEqualTo("failed");
    assertThat(r.plan().failure()).contains(failure);
    assertThat(syncs).isLessThanOrEqualTo(N);
    assertThat(count("rolled_back")).isEqualTo(1.0);
    assertThat(store.bad(bad)).isNotNull();
    assertThat(store.bad(bad).reason()).contains(failure);

    // the next sync runs the previous rules, which evict under pressure
    EvictionManager.SyncResult after = manager.syncOnce("pressure");
    assertThat(manager.rulesSha256()).isEqualTo(trusted);
    assertThat(after.outcome()).isEqualTo("ok");
    assertThat(after.plan().decisions()).extracting(d -> d.pod().name()).containsExactly("a");
    assertThat(evictor.decisions()).extracting(d -> d.pod().name()).containsExactly("a");

    // after a restart the bad set is not loaded: the last trusted one is
    RuleStateStore reopened = new RuleStateStore(stateDir);
    RuleSet configured = RuleCompiler.compile(rulesDir);
    assertThat(configured.sha256()).isEqualTo(bad);
    RuleSet chosen =
        RuleProbation.choose(
            configured,
            reopened,
            sources -> RuleCompiler.compile("saved", sources),
            () -> defaults);
    assertThat(chosen.sha256()).isEqualTo(trusted);

    // the same content again is refused at once; changed content is tried again
    assertThat(probation.admit(configured, rulesDir, manager.lastInputs()))
        .isEqualTo(RuleProbation.REJECTED);
    assertThat(manager.rulesSha256()).isEqualTo(trusted);
    stats.set(QUIET);
    manager.syncOnce("quiet"); // the next shadow sync runs on quiet inputs
    Path drl;
    try (Stream<Path> s = Files.list(rulesDir)) {
      drl = s.filter(f -> f.toString().endsWith(".drl")).findFirst().orElseThrow();
    }
    Files.writeString(drl, Files.readString(drl) + "\n// changed\n");
    assertThat(await(() -> count("loaded") == 2.0)).as("a changed set is tried again").isTrue();
    manager.syncOnce("quiet");
    assertThat(manager.rulesSha256()).isNotIn(trusted, bad);
  }

  @Test
  void aLoopingSetPushedByHotReloadIsRolledBackWhilePressureEvictionsGoOn() throws Exception {
    rolledBackUnderPressure("looping-modify", "re-fires on the state it modifies");
  }

  @Test
  void aThrowingSetPushedByHotReloadIsRolledBackWhilePressureEvictionsGoOn() throws Exception {
    rolledBackUnderPressure("throwing", "boom under pressure");
  }

  @Test
  void aSetWhoseDecisionsTheGuardRefusesIsNeverSwappedInAndEvictionsGoOn() throws Exception {
    start(RuleCompiler.Options.STRICT);
    String trusted = manager.rulesSha256();
    stats.set(PRESSURE);
    assertThat(manager.syncOnce("pressure").plan().decisions()).hasSize(1);
    // passes the lint; every sync it decides on pods that are not this node's active pods
    Files.copy(
        Path.of("src/test/resources/hostile-runtime/foreign-pod/zz-foreign-pod.drl"),
        rulesDir.resolve("zz-foreign-pod.drl"));
    assertThat(await(() -> count("rejected") == 1.0)).as("the shadow sync refuses it").isTrue();
    assertThat(count("loaded")).isZero();
    assertThat(store.bad(RuleCompiler.compile(rulesDir).sha256()).reason())
        .startsWith("shadow sync failed: decision refused (unknown_pod)")
        .contains("hostile: evict pods of other nodes");
    EvictionManager.SyncResult r = manager.syncOnce("pressure");
    assertThat(manager.rulesSha256()).isEqualTo(trusted);
    assertThat(r.outcome()).isEqualTo("ok");
    assertThat(r.plan().refused()).isEmpty();
    assertThat(r.plan().decisions()).as("the trusted rules still evict").hasSize(1);
  }

  @Test
  void aTrustedSetIsNotRolledBackForDecisionsTheGuardRefused() throws Exception {
    start(RuleCompiler.Options.STRICT);
    String trusted = manager.rulesSha256();
    EvictionPlan refused =
        plan(
            List.of(
                new EvictionPlan.RefusedDecision(
                    new dev.evictd.api.PodRef("kube-system", "x", "u-x"),
                    EvictionPlan.Refusal.CRITICAL,
                    "critical",
                    List.of("r"))));
    for (int i = 0; i < 2 * N; i++) {
      probation.synced(trusted, refused, false);
    }
    assertThat(count("rolled_back")).isZero();
    assertThat(store.bad(trusted)).isNull();
    assertThat(probation.trusted().sha256()).isEqualTo(trusted);
  }

  @Test
  void refusalsOfDuplicatesAndExemptPodsAreNotARunTimeFailure() {
    dev.evictd.api.PodRef p = new dev.evictd.api.PodRef("default", "a", "default/a");
    EvictionPlan benign =
        plan(
            List.of(
                new EvictionPlan.RefusedDecision(
                    p, EvictionPlan.Refusal.DUPLICATE, "", List.of("r1")),
                new EvictionPlan.RefusedDecision(p, EvictionPlan.Refusal.EXEMPT, "", List.of())));
    assertThat(RuleProbation.refusedDecisions(benign)).isNull();
    EvictionPlan bad =
        plan(
            List.of(
                new EvictionPlan.RefusedDecision(
                    p, EvictionPlan.Refusal.GRACE_PERIOD, "-5", List.of("r2"))));
    assertThat(RuleProbation.refusedDecisions(bad))
        .isEqualTo("decision refused (grace_period) for " + p + " by rule r2");
  }

  @Test
  void aSetThatFailsItsShadowSyncIsNeverSwappedInAndTheLiveSessionIsUntouched() throws Exception {
    start(RuleCompiler.Options.STRICT);
    String trusted = manager.rulesSha256();
    stats.set(PRESSURE);
    assertThat(manager.syncOnce("pressure").plan().decisions()).hasSize(1);
    push("looping-modify");
    assertThat(await(() -> count("rejected") == 1.0)).as("the shadow sync refuses it").isTrue();
    assertThat(count("loaded")).isZero();
    assertThat(probation.onProbation()).isFalse();
    EvictionManager.SyncResult r = manager.syncOnce("pressure");
    assertThat(manager.rulesSha256()).isEqualTo(trusted);
    assertThat(r.outcome()).isEqualTo("ok");
    assertThat(r.plan().decisions()).hasSize(1);
    assertThat(store.bad(RuleCompiler.compile(rulesDir).sha256()).reason())
        .startsWith("shadow sync failed: ")
        .contains("re-fires on the state it modifies");
  }

  @Test
  void aSetWhoseRuleThreadSticksIsRolledBackAndItsThreadShowsInHealthUntilItEnds()
      throws Exception {
    RuleCompiler.Options unsafe =
        new RuleCompiler.Options(true, null, RuleCompiler.Ownership.IGNORE);
    start(unsafe);
    String trusted = manager.rulesSha256();
    RuleThreadHealth health =
        new RuleThreadHealth(() -> probation.shadowThreadsAlive(), Planner.MAX_ABANDONED_THREADS);
    // no captured inputs would skip the shadow; with them, the stuck shadow sync is refused
    StuckRule.hold();
    try (Stream<Path> s = Files.list(Path.of("src/test/resources/rulesets/held"))) {
      for (Path f : s.toList()) {
        Files.copy(
            f,
            rulesDir.resolve(f.getFileName()),
            java.nio.file.StandardCopyOption.REPLACE_EXISTING);
      }
    }
    assertThat(await(() -> count("rejected") == 1.0)).isTrue();
    assertThat(health.ready()).as("the shadow's stuck thread is alive").isFalse();
    assertThat(health.healthy()).isTrue();
    assertThat(health.describe()).startsWith("1 abandoned rule threads running");
    assertThat(manager.rulesSha256()).isEqualTo(trusted);
    assertThat(manager.syncOnce("quiet").outcome()).isEqualTo("ok");
    StuckRule.release();
    assertThat(await(health::ready)).as("ready again once the thread ended").isTrue();
  }

  @Test
  void aSetOnProbationWhoseLiveRuleThreadSticksIsRolledBackAndRemembered() throws Exception {
    RuleCompiler.Options unsafe =
        new RuleCompiler.Options(true, null, RuleCompiler.Ownership.IGNORE);
    start(unsafe);
    String trusted = manager.rulesSha256();
    try (Stream<Path> s = Files.list(Path.of("src/test/resources/rulesets/held"))) {
      for (Path f : s.toList()) {
        Files.copy(
            f,
            rulesDir.resolve(f.getFileName()),
            java.nio.file.StandardCopyOption.REPLACE_EXISTING);
      }
    }
    // not held yet: the shadow sync passes and the set goes on probation
    assertThat(await(() -> count("loaded") == 1.0)).isTrue();
    assertThat(manager.syncOnce("quiet").outcome()).isEqualTo("ok");
    String held = manager.rulesSha256();
    assertThat(held).isNotEqualTo(trusted);

    // a new pod makes the engine evaluate the condition, which now sticks
    StuckRule.hold();
    pods.set(List.of(pod("a"), pod("b"), pod("c")));
    EvictionManager.SyncResult stuck = manager.syncOnce("new pod");
    assertThat(stuck.outcome()).isEqualTo("failed");
    assertThat(stuck.plan().failure()).contains("abandoned (1 so far)");
    assertThat(count("rolled_back")).isEqualTo(1.0);
    assertThat(store.bad(held).reason()).contains("its thread did not stop");
    RuleThreadHealth health =
        new RuleThreadHealth(
            () -> planner().aliveAbandonedRuleThreads(), Planner.MAX_ABANDONED_THREADS);
    assertThat(health.ready()).isFalse();

    // the previous rules run the next sync, with the new pod, while the stuck thread lives on
    EvictionManager.SyncResult next = manager.syncOnce("after rollback");
    assertThat(manager.rulesSha256()).isEqualTo(trusted);
    assertThat(next.outcome()).isEqualTo("ok");
    StuckRule.release();
    assertThat(await(health::ready)).isTrue();
  }

  Planner planner() {
    try {
      var f = EvictionManager.class.getDeclaredField("planner");
      f.setAccessible(true);
      return (Planner) f.get(manager);
    } catch (ReflectiveOperationException e) {
      throw new AssertionError(e);
    }
  }

  @Test
  void aTrustedSetThatFailsAsManySyncsInARowAsProbationLastsIsRolledBackToTheOneBefore()
      throws Exception {
    start(RuleCompiler.Options.STRICT);
    String first = manager.rulesSha256();
    push("throwing");
    assertThat(await(() -> count("loaded") == 1.0)).isTrue();
    for (int i = 0; i < N; i++) {
      assertThat(manager.syncOnce("quiet").outcome()).isEqualTo("ok");
    }
    String throwing = manager.rulesSha256();
    assertThat(count("trusted")).as("quiet syncs do not show the fault").isEqualTo(2.0);
    assertThat(probation.trusted().sha256()).isEqualTo(throwing);

    stats.set(PRESSURE);
    for (int i = 1; i <= N; i++) {
      assertThat(manager.syncOnce("pressure").outcome()).isEqualTo("failed");
      assertThat(count("rolled_back")).isEqualTo(i < N ? 0.0 : 1.0);
    }
    EvictionManager.SyncResult r = manager.syncOnce("pressure");
    assertThat(manager.rulesSha256()).isEqualTo(first);
    assertThat(r.outcome()).isEqualTo("ok");
    assertThat(r.plan().decisions()).extracting(d -> d.pod().name()).containsExactly("a");
    assertThat(store.bad(throwing).reason()).startsWith(N + " syncs in a row failed: ");
  }
}
