package dev.evictd.engine;

import static dev.evictd.engine.PlannerTest.HARD_1GI;
import static dev.evictd.engine.PlannerTest.MI;
import static dev.evictd.engine.PlannerTest.T0;
import static dev.evictd.engine.PlannerTest.config;
import static dev.evictd.engine.PlannerTest.pod;
import static dev.evictd.engine.PlannerTest.summary;
import static org.assertj.core.api.Assertions.assertThat;

import dev.evictd.api.EvictionConfig;
import dev.evictd.api.Observation;
import dev.evictd.api.PodFact;
import dev.evictd.api.PodStats;
import dev.evictd.api.Signal;
import dev.evictd.api.SignalLastObserved;
import dev.evictd.api.ThresholdState;
import dev.evictd.stats.Summary;
import io.fabric8.kubernetes.api.model.Pod;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Collection;
import java.util.List;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class SessionFactsTest {
  @TempDir Path dir;

  private final EvictionConfig config = config(HARD_1GI);
  private final Pod a = pod("a", 0);
  private final Pod b = pod("b", 0);
  private SessionHarness h;
  private SessionFacts facts;
  private GuardedSession session;

  @BeforeEach
  void open() {
    RuleSet rules =
        TestRules.compile(
            dir,
            """
            rule "sees a pod"
                ruleflow-group "observe"
            when
                PodFact()
            then
            end
            """);
    h = new SessionHarness(rules, config);
    facts = h.facts;
    session = h.session;
  }

  @AfterEach
  void close() {
    h.close();
  }

  private void run(Runnable work) {
    h.run(work);
  }

  private List<Object> inSession(Class<?> type) {
    AtomicReference<Collection<?>> out = new AtomicReference<>();
    run(() -> out.set(session.objectsOf(type)));
    return new ArrayList<>(out.get());
  }

  private List<String> sync(long seq, List<Pod> pods, Summary summary) {
    return h.sync(seq, T0.plusSeconds(10 * seq), pods, summary);
  }

  @Test
  void followsTheActivePodsInOrderIgnoringADuplicateUid() {
    List<String> warnings = sync(1, List.of(b, a, pod("a", 7)), summary(500, List.of(a, b), 100));
    assertThat(warnings).containsExactly("pod default/a: duplicate uid default/a ignored");
    assertThat(facts.activeFacts()).extracting(PodFact::name).containsExactly("b", "a");
    assertThat(facts.activeFacts()).extracting(PodFact::position).containsExactly(0, 1);
    assertThat(inSession(PodFact.class)).hasSize(2);
    assertThat(inSession(PodStats.class)).hasSize(2);
    assertThat(facts.activeFact("default/a").priority()).isZero();
    assertThat(facts.podCount()).isEqualTo(2);

    // b goes: its facts leave the session, a moves up
    assertThat(sync(2, List.of(a), summary(500, List.of(a), 100))).isEmpty();
    assertThat(inSession(PodFact.class))
        .singleElement()
        .satisfies(
            f -> {
              assertThat(((PodFact) f).name()).isEqualTo("a");
              assertThat(((PodFact) f).position()).isZero();
            });
    assertThat(inSession(PodStats.class)).hasSize(1);
    assertThat(facts.activeFact("default/b")).isNull();
    assertThat(facts.entry("default/b")).isNull();
    assertThat(facts.podCount()).isEqualTo(1);
  }

  @Test
  void aPodsStatisticsAreItsLastEntryInTheSummaryAndGoWhenItHasNone() {
    Summary twice = summary(500, List.of(a, a), 100);
    List<Summary.PodStats> ps = new ArrayList<>(twice.pods());
    Summary.PodStats last = ps.get(1);
    ps.set(
        1,
        new Summary.PodStats(
            last.podRef(),
            List.of(),
            new Summary.MemoryStats(null, null, null, 300 * MI, null),
            List.of(),
            null,
            null));
    sync(1, List.of(a), new Summary(twice.node(), ps));
    assertThat(inSession(PodStats.class))
        .singleElement()
        .extracting(s -> ((PodStats) s).memoryWorkingSetBytes())
        .isEqualTo(300 * MI);

    sync(2, List.of(a), summary(500, List.of(), 100));
    assertThat(inSession(PodStats.class)).isEmpty();
    assertThat(inSession(PodFact.class)).hasSize(1);
  }

  @Test
  void observationsFollowTheSummary() {
    sync(1, List.of(a), summary(500, List.of(a), 100));
    Observation memory = facts.observations().get(Signal.MEMORY_AVAILABLE);
    assertThat(memory.available()).isEqualTo(500 * MI);
    sync(2, List.of(a), summary(400, List.of(a), 100));
    assertThat(inSession(Observation.class))
        .filteredOn(o -> ((Observation) o).signal() == Signal.MEMORY_AVAILABLE)
        .singleElement()
        .extracting(o -> ((Observation) o).available())
        .isEqualTo(400 * MI);
  }

  @Test
  void factsForOneSyncAreRetractedAtTheNext() {
    sync(1, List.of(a), summary(500, List.of(a), 100));
    run(() -> facts.insertForSync(session, List.of("an event")));
    assertThat(inSession(String.class)).containsExactly("an event");
    assertThat(session.record().perSyncFacts.of(String.class)).containsExactly("an event");
    sync(2, List.of(a), summary(500, List.of(a), 100));
    assertThat(inSession(String.class)).isEmpty();
    assertThat(session.record().perSyncFacts.of(String.class)).isEmpty();
  }

  @Test
  void stateFactsAreCopiedSoAStuckThreadCannotReachThem() {
    ThresholdState t = new ThresholdState(config.thresholds().get(0), T0);
    t.setActedOn(true);
    SignalLastObserved l = new SignalLastObserved(Signal.MEMORY_AVAILABLE, T0);
    run(
        () -> {
          session.insert(t);
          session.insert(l);
        });
    List<Object> state = facts.stateFacts(session);
    assertThat(state).containsExactlyInAnyOrder(t, l);
    List<Object> copies = SessionFacts.copies(new ArrayList<>(List.of(t, l, "not state")));
    assertThat(copies).hasSize(2).doesNotContain(t, l);
    ThresholdState c = (ThresholdState) copies.get(0);
    assertThat(c.getThreshold()).isEqualTo(t.getThreshold());
    assertThat(c.getFirstObservedAt()).isEqualTo(T0);
    assertThat(c.isActedOn()).isTrue();
    assertThat(((SignalLastObserved) copies.get(1)).getTime()).isEqualTo(T0);

    // with no session, the state kept before the sync stands in
    facts.keepState(copies);
    session.drop();
    assertThat(facts.stateFacts(session)).isSameAs(copies);
  }
}
