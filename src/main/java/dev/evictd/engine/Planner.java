package dev.evictd.engine;

import dev.evictd.api.ActionableThreshold;
import dev.evictd.api.EvictionConfig;
import dev.evictd.api.EvictionDecision;
import dev.evictd.api.EvictionExempt;
import dev.evictd.api.EvictionPlan;
import dev.evictd.api.GracePeriodMet;
import dev.evictd.api.NodeCondition;
import dev.evictd.api.NodeConditionType;
import dev.evictd.api.Observation;
import dev.evictd.api.PerSyncFact;
import dev.evictd.api.PodFact;
import dev.evictd.api.PodStats;
import dev.evictd.api.RankKey;
import dev.evictd.api.Ranking;
import dev.evictd.api.ReclaimAction;
import dev.evictd.api.ReclaimObservation;
import dev.evictd.api.ReclaimRequest;
import dev.evictd.api.ReclaimResolved;
import dev.evictd.api.ReclaimTarget;
import dev.evictd.api.Signal;
import dev.evictd.api.SyncClock;
import dev.evictd.api.Threshold;
import dev.evictd.api.ThresholdActive;
import dev.evictd.api.ThresholdMet;
import dev.evictd.api.ThresholdState;
import dev.evictd.api.ThresholdUnresolved;
import dev.evictd.k8s.Observations;
import dev.evictd.stats.Summary;
import io.fabric8.kubernetes.api.model.Pod;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.EnumMap;
import java.util.HashMap;
import java.util.IdentityHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.function.Supplier;
import org.kie.api.event.rule.AfterMatchFiredEvent;
import org.kie.api.event.rule.BeforeMatchFiredEvent;
import org.kie.api.event.rule.DefaultAgendaEventListener;
import org.kie.api.event.rule.ObjectDeletedEvent;
import org.kie.api.event.rule.ObjectInsertedEvent;
import org.kie.api.event.rule.ObjectUpdatedEvent;
import org.kie.api.event.rule.RuleRuntimeEventListener;
import org.kie.api.runtime.KieSession;
import org.kie.api.runtime.rule.FactHandle;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The eviction planner: one long-lived Drools session per node. Each {@link #sync} updates the
 * input facts in place (clock, observations, pods and their statistics), fires the rule phases in
 * order, runs node-level reclaim when the rules ask for it, sorts the pods by the rank keys the
 * rules computed, and returns the plan. State the kubelet keeps between syncs lives in the session
 * as facts.
 *
 * <p>Rules run on a dedicated thread ({@link RuleRunner}) within a {@link SyncBudget}: a sync that
 * fires too many rules or runs too long fails, naming the rule, and the planner carries on with a
 * fresh session holding the state from before that sync. A consequence stuck in a Java loop cannot
 * be stopped; its thread is abandoned with the session and everything it can reach, and the planner
 * never touches them again.
 */
public final class Planner implements AutoCloseable {
  /** The rule phases (agenda groups), in firing order. */
  public static final List<String> PHASES =
      List.of(
          "observe",
          "track",
          "grace",
          "local-storage",
          "select",
          "reclaim-check",
          "rank",
          "decide",
          "commit");

  private static final Logger LOG = LoggerFactory.getLogger(Planner.class);
  private static final int TRACE_LIMIT_PER_RULE = 20;

  /**
   * How many abandoned rule threads may be alive before the planner refuses to sync (they hold
   * CPUs; evictd must restart unless they end). Once they have ended, syncs run again.
   */
  public static final int MAX_ABANDONED_THREADS = 3;

  private final EvictionConfig config;
  private final SyncBudget budget;

  /** Checks the rules' decisions against this sync's active pods before they reach the plan. */
  private final DecisionGuard guard;

  private final RuleRunner runner = new RuleRunner();
  private RuleSet rules;
  private volatile RuleSession session;
  private FactHandle clockHandle;
  private SyncClock clock = new SyncClock(0, Instant.EPOCH);
  private final Map<Signal, FactHandle> observationHandles = new EnumMap<>(Signal.class);
  private final Map<Signal, Observation> observations = new EnumMap<>(Signal.class);
  private final Map<String, PodEntry> pods = new HashMap<>();

  /** The active pods of the last sync, in order. */
  private List<PodEntry> activeEntries = List.of();

  private volatile SessionState st = new SessionState();
  private volatile List<Object> stateBeforeSync = List.of();

  /** Bytes the rule thread may still allocate in this sync (0: unlimited). */
  private long allocationLeft;

  private long seq;
  private boolean closed;

  /**
   * One firing of a rule in the current sync. Equal only to itself: firings are collected in sets,
   * and hashing what they matched (a Ranking holds every pod's key) would cost more than the sync.
   */
  private static final class Firing {
    private final String phase;
    private final String rule;
    private final List<Object> matched;
    private final List<Object> produced = new ArrayList<>(1);

    /**
     * The firing as the plan shows it, rendered once (the trace and the decisions' provenance share
     * it).
     */
    private EvictionPlan.RuleFiring rendered;

    Firing(String phase, String rule, List<Object> matched) {
      this.phase = phase;
      this.rule = rule;
      this.matched = matched;
    }

    String phase() {
      return phase;
    }

    String rule() {
      return rule;
    }

    List<Object> matched() {
      return matched;
    }

    List<Object> produced() {
      return produced;
    }
  }

  /**
   * What the listeners of one session record. Each session has its own: when a session is abandoned
   * to a stuck thread, that thread's listeners keep writing here and nowhere the planner still
   * reads.
   */
  /**
   * The session as the planner's code uses it. Every call checks, once the engine returns, that the
   * session was not abandoned meanwhile: a thread that comes back from a stuck rule after its time
   * budget ended stops there, before it touches anything the planner still uses.
   */
  private static final class RuleSession {
    final KieSession kie;
    volatile boolean abandoned;

    RuleSession(KieSession kie) {
      this.kie = kie;
    }

    private <T> T alive(T result) {
      if (abandoned) {
        throw new IllegalStateException("session abandoned after its time budget");
      }
      return result;
    }

    FactHandle insert(Object o) {
      return alive(kie.insert(o));
    }

    void update(FactHandle h, Object o) {
      kie.update(h, o);
      alive(h);
    }

    void delete(FactHandle h) {
      kie.delete(h);
      alive(h);
    }

    Object getObject(FactHandle h) {
      return alive(kie.getObject(h));
    }

    java.util.Collection<?> getObjects(org.kie.api.runtime.ObjectFilter filter) {
      return alive(new ArrayList<>(kie.getObjects(filter)));
    }

    int fireAllRules(String agendaGroup, int max) {
      kie.getAgenda().getAgendaGroup(agendaGroup).setFocus();
      return alive(kie.fireAllRules(max));
    }
  }

  /**
   * The facts that hold for this sync only, by class: the plan reads them type by type, and a
   * pressure sync holds a rank key per pod. Lists keep insertion order; the types read are records
   * (final), so a type's facts come from one list.
   */
  private static final class SyncFacts {
    private final Map<Class<?>, List<Object>> byType = new HashMap<>();

    void add(Object o) {
      byType.computeIfAbsent(o.getClass(), k -> new ArrayList<>()).add(o);
    }

    void remove(Object o) {
      List<Object> l = byType.get(o.getClass());
      if (l != null) {
        l.remove(o);
      }
    }

    void clear() {
      for (List<Object> l : byType.values()) {
        l.clear();
      }
    }

    @SuppressWarnings("unchecked")
    <T> List<T> of(Class<T> type) {
      List<T> out = null;
      for (Map.Entry<Class<?>, List<Object>> e : byType.entrySet()) {
        if (type.isAssignableFrom(e.getKey()) && !e.getValue().isEmpty()) {
          if (out == null) {
            out = new ArrayList<>((List<T>) e.getValue());
          } else {
            out.addAll((List<T>) e.getValue());
          }
        }
      }
      return out == null ? new ArrayList<>() : out;
    }
  }

  private static final class SessionState {
    final List<FactHandle> perSyncHandles = new ArrayList<>();

    /**
     * The facts rules inserted that are still in the session (per-sync ones until the next sync
     * retracts them): what the kept-facts budget counts and measures.
     */
    final Map<FactHandle, Object> ruleInserted = new IdentityHashMap<>();

    final SyncFacts perSyncFacts = new SyncFacts();

    /** The ranking the planner inserted in this sync and its pods, in rank order. */
    Ranking lastRanking;

    List<PodEntry> lastRankingEntries;
    final Map<String, List<String>> exemptions = new HashMap<>();
    final Set<ThresholdState> thresholdStates =
        java.util.Collections.newSetFromMap(new IdentityHashMap<>());
    final Map<Object, Firing> producedBy = new IdentityHashMap<>();
    final List<Firing> firings = new ArrayList<>();

    /**
     * Facts described for this sync's trace, by identity: many firings match the same observation,
     * clock or threshold, and rendering each again was a quarter of what a sync allocated.
     */
    final Map<Object, String> descriptions = new IdentityHashMap<>();

    volatile String phase = "";
    volatile Firing currentFiring;
    volatile String lastRule;
    volatile boolean stopRequested;
    volatile Firing firingAtTimeout;
    volatile String phaseAtTimeout = "";
  }

  /** What the planner holds for one active pod. */
  private static final class PodEntry {
    String uid;

    /** The sync that last listed the pod as active (duplicates and pods gone are found by it). */
    long seenAt = -1;

    /** The sync that last ranked the pod (a second rank key for it is ignored). */
    long rankedAt = -1;

    /**
     * During {@link #updatePods}: the pod object, its new fact (null when unchanged) and its
     * statistics.
     */
    Pod next;

    PodFact nextFact;
    Summary.PodStats nextRaw;
    Pod pod;
    PodFact fact;
    FactHandle factHandle;
    Summary.PodStats rawStats;
    PodStats stats;
    FactHandle statsHandle;
  }

  /**
   * Creates the planner's session for a node's configuration, with the default {@link SyncBudget}.
   */
  public Planner(RuleSet rules, EvictionConfig config) {
    this(rules, config, SyncBudget.DEFAULT);
  }

  /**
   * Creates the planner's session.
   *
   * @param maxFiringsBase rule firings allowed per sync on top of a per-pod allowance; a sync past
   *     it fails
   */
  public Planner(RuleSet rules, EvictionConfig config, long maxFiringsBase) {
    this(rules, config, SyncBudget.DEFAULT.withFirings(maxFiringsBase));
  }

  /**
   * Creates the planner's session.
   *
   * @param budget what one sync may spend on rules
   * @throws dev.evictd.api.RulesException when loading the facts into the session overruns the time
   *     budget
   */
  public Planner(RuleSet rules, EvictionConfig config, SyncBudget budget) {
    this(rules, config, budget, DecisionGuard.Limits.DEFAULT);
  }

  /**
   * Creates the planner's session.
   *
   * @param budget what one sync may spend on rules
   * @param limits what the decision guard lets the rules' decisions do (methods, message length)
   * @throws dev.evictd.api.RulesException when loading the facts into the session overruns the time
   *     budget
   */
  public Planner(
      RuleSet rules, EvictionConfig config, SyncBudget budget, DecisionGuard.Limits limits) {
    this.config = config;
    this.budget = budget;
    this.guard = new DecisionGuard(config, limits);
    String failure = guarded("loading the facts", () -> openSession(rules, List.of()));
    if (failure != null) {
      runner.close();
      throw new dev.evictd.api.RulesException(failure);
    }
  }

  /**
   * Runs session work on the rule thread within the time budget. Returns null when it finished,
   * else why not; the session is then dropped (and abandoned with its thread when stuck), so the
   * next sync opens a new one from the state kept before the sync.
   */
  private String guarded(String what, Runnable work) {
    allocationLeft = budget.allocatedBytesFor(pods.size());
    String failure = guardedUntil(what, System.nanoTime() + budget.time().toNanos(), work);
    if (failure != null) {
      dropSession();
    }
    return failure;
  }

  /**
   * Asks the rules to stop: halts the engine (ends a loop of firings; a consequence stuck in Java
   * runs on).
   */
  private void halt() {
    SessionState state = st;
    state.firingAtTimeout = state.currentFiring;
    state.phaseAtTimeout = state.phase;
    state.stopRequested = true;
    RuleSession s = session;
    if (s != null) {
      s.kie.halt();
    }
  }

  private String overrunMessage(String what, RuleRunner.Overrun o) {
    SessionState state = st;
    Firing f = state.firingAtTimeout;
    String limit = "the time budget of " + dev.evictd.config.GoDuration.format(budget.time());
    String phase = state.phaseAtTimeout.isEmpty() ? "" : " in phase " + state.phaseAtTimeout;
    String last =
        state.lastRule == null ? "" : "; the last rule fired was \"" + state.lastRule + "\"";
    String m;
    if (f != null) {
      m = "rule \"" + f.rule() + "\" did not finish within " + limit + phase;
    } else if (o.stuck()) {
      m =
          "rules did not finish within "
              + limit
              + " while "
              + what
              + phase
              + " (in a condition"
              + last
              + ")";
    } else {
      m =
          "rules were still firing at the end of "
              + limit
              + " while "
              + what
              + phase
              + last
              + ": a rule may be looping";
    }
    if (o.stuck()) {
      m += "; its thread did not stop and is abandoned (" + runner.abandoned() + " so far)";
    }
    return m;
  }

  private void dropSession() {
    dropSession(false);
  }

  /**
   * Forgets the session; a stuck thread keeps it, and its listeners keep writing to a state no one
   * reads.
   */
  private void dropSession(boolean stuck) {
    RuleSession s = session;
    session = null;
    st = new SessionState();
    if (s == null) {
      return;
    }
    s.abandoned = true;
    if (!stuck) {
      try {
        s.kie.dispose();
      } catch (RuntimeException e) {
        LOG.debug("disposing a failed session: {}", e.toString());
      }
    }
  }

  /** A copy of the state facts, which a stuck thread cannot reach. */
  private static List<Object> copies(List<Object> state) {
    List<Object> out = new ArrayList<>();
    for (Object o : state) {
      if (o instanceof ThresholdState t) {
        ThresholdState c = new ThresholdState(t.getThreshold(), t.getFirstObservedAt());
        c.setActedOn(t.isActedOn());
        out.add(c);
      } else if (o instanceof dev.evictd.api.ConditionState c) {
        out.add(new dev.evictd.api.ConditionState(c.getType(), c.getLastObservedAt()));
      } else if (o instanceof dev.evictd.api.SignalLastObserved l) {
        out.add(new dev.evictd.api.SignalLastObserved(l.getSignal(), l.getTime()));
      }
    }
    return out;
  }

  /**
   * Opens a session on {@code rules} holding the planner's input facts and the given state facts.
   * Used at construction, to swap rule sets (state carried over), and to recover from a failed
   * sync. Runs on the rule thread: inserting facts evaluates the rules' conditions.
   */
  private void openSession(RuleSet newRules, List<Object> state) {
    KieSession s = newRules.kieBase().newKieSession();
    if (session != null) {
      session.kie.dispose();
    }
    session = new RuleSession(s);
    rules = newRules;
    SessionState fresh = new SessionState();
    st = fresh;
    s.addEventListener(new Listener(fresh));
    s.addEventListener(new Tracer(fresh));
    session.insert(config);
    for (Threshold t : config.thresholds()) {
      session.insert(t);
    }
    clockHandle = session.insert(clock);
    for (Map.Entry<Signal, Observation> e : observations.entrySet()) {
      observationHandles.put(e.getKey(), session.insert(e.getValue()));
    }
    for (PodEntry e : pods.values()) {
      e.factHandle = session.insert(e.fact);
      e.statsHandle = e.stats == null ? null : session.insert(e.stats);
    }
    for (Object o : state) {
      session.insert(o);
    }
    for (Attempt a : attempts) {
      a.handle = session.insert(a.attempt);
    }
  }

  /**
   * The state facts the planner carries between syncs (first-observed times, conditions, last
   * observations).
   */
  private List<Object> stateFacts() {
    if (session == null) {
      return stateBeforeSync;
    }
    // by class: the session's object store then visits those facts only, not every pod and key
    List<Object> out = new ArrayList<>();
    for (Class<?> c :
        List.of(
            ThresholdState.class,
            dev.evictd.api.ConditionState.class,
            dev.evictd.api.SignalLastObserved.class)) {
      out.addAll(session.getObjects(new org.kie.api.runtime.ClassObjectFilter(c)));
    }
    return out;
  }

  /**
   * Replaces the rule set at a sync boundary, keeping the session's state (first-observed times,
   * conditions, thresholds acted on, last observation times, eviction attempts).
   *
   * @throws dev.evictd.api.RulesException when loading the facts into a session of the new rules
   *     fails or overruns the time budget; the planner then keeps the rules it had (and their
   *     state), and the next sync opens a session on them
   */
  public synchronized void swapRules(RuleSet newRules) {
    if (closed) {
      throw new IllegalStateException("planner is closed");
    }
    RuleSet old = rules;
    java.util.concurrent.atomic.AtomicReference<List<Object>> kept =
        new java.util.concurrent.atomic.AtomicReference<>();
    String failure =
        guarded(
            "loading the facts",
            () -> {
              kept.set(copies(stateFacts()));
              openSession(newRules, copies(kept.get()));
            });
    if (failure != null) {
      rules = old;
      if (kept.get() != null) {
        stateBeforeSync = kept.get();
      }
      throw new dev.evictd.api.RulesException(
          newRules.source() + ": " + failure + " (the rules in use stay: " + old.source() + ")");
    }
  }

  /**
   * How many rule threads were abandoned because a rule did not stop (they run until evictd
   * restarts).
   */
  public synchronized int abandonedRuleThreads() {
    return runner.abandoned();
  }

  /**
   * How many abandoned rule threads are still running. Never blocks (health endpoints ask it while
   * a sync runs): a thread whose stuck rule finally ended no longer counts.
   */
  public int aliveAbandonedRuleThreads() {
    return runner.aliveAbandoned();
  }

  /** The configuration the planner was built for. */
  public EvictionConfig config() {
    return config;
  }

  /** The rule set in use. */
  public RuleSet rules() {
    return rules;
  }

  /**
   * Runs one sync: observes, decides and returns the plan. Never throws for a rule failure: the
   * plan carries it.
   */
  public EvictionPlan sync(Instant now, Summary summary, List<Pod> activePods, PlannerHooks hooks) {
    return sync(now, summary, activePods, hooks, List.of());
  }

  /**
   * Runs one sync with extra facts that hold for this sync only: events since the last sync (memcg
   * threshold crossings, pressure stalls) and observations beyond the summary (PSI averages).
   */
  public synchronized EvictionPlan sync(
      Instant now,
      Summary summary,
      List<Pod> activePods,
      PlannerHooks hooks,
      java.util.Collection<?> facts) {
    if (closed) {
      throw new IllegalStateException("planner is closed");
    }
    seq++;
    clock = new SyncClock(seq, now);
    List<String> warnings = new ArrayList<>();
    int stuck = runner.aliveAbandoned();
    if (stuck >= MAX_ABANDONED_THREADS) {
      return failedPlan(
          now,
          warnings,
          stuck
              + " rule threads are stuck in rules that never finished; evictd must be restarted"
              + " (or they must end)");
    }
    long[] timeLeft = {budget.time().toNanos()};
    allocationLeft = budget.allocatedBytesFor(activePods.size());
    List<ReclaimAction> reclaimed = new ArrayList<>();
    List<ReclaimRequest> requests = new ArrayList<>();
    long[] firingsLeft = {0};
    EvictionPlan[] plan = {null};
    Runnable rankAndDecide =
        () -> {
          firingsLeft[0] = fire(List.of("rank"), firingsLeft[0]);
          rank(warnings);
          firingsLeft[0] = fire(List.of("decide", "commit"), firingsLeft[0]);
          checkKept(pods.size());
          plan[0] = buildPlan(now, reclaimed, warnings, null);
        };
    String[] doing = {"observing and selecting"};
    boolean[] decided = {false};
    String failure =
        step(
            () -> doing[0],
            timeLeft,
            () -> {
              if (session == null) {
                // after a failed sync: its pods and observations come back with this sync's, so a
                // pod that made a condition fail is not loaded again if it is gone
                pods.clear();
                observations.clear();
                observationHandles.clear();
                openSession(rules, copies(stateBeforeSync));
              }
              stateBeforeSync = copies(stateFacts());
              st.phase = "";
              clearPerSync();
              expireAttempts(now);
              session.update(clockHandle, clock);
              for (Object f : facts) {
                FactHandle h = session.insert(f);
                if (!(f instanceof PerSyncFact)) {
                  st.perSyncHandles.add(h);
                  st.perSyncFacts.add(f);
                }
              }
              updateObservations(Observations.of(summary));
              updatePods(activePods, summary, warnings);
              insertInFlight();
              firingsLeft[0] = budget.firingsFor(pods.size());
              firingsLeft[0] =
                  fire(
                      List.of("observe", "track", "grace", "local-storage", "select"),
                      firingsLeft[0]);
              requests.addAll(factsOf(ReclaimRequest.class));
              if (requests.isEmpty()) {
                // nothing to reclaim: rank and decide without handing over to the rule thread
                // again (each hand-over can cost a thread wake-up)
                doing[0] = "ranking and deciding";
                rankAndDecide.run();
                decided[0] = true;
              }
            });
    if (failure == null && !requests.isEmpty()) {
      // node-level reclaim runs outside the rules' time budget: it is evictd's own work
      requests.sort(Comparator.comparingInt(ReclaimRequest::position));
      for (ReclaimRequest r : requests) {
        if (!hooks.reclaim(r.action())) {
          warnings.add("node-level reclaim of " + r.action() + " failed");
        }
        reclaimed.add(r.action());
      }
      Summary after = null;
      try {
        after = hooks.summaryAfterReclaim();
      } catch (RuntimeException e) {
        warnings.add("cannot read statistics after reclaim: " + e.getMessage());
      }
      if (after == null) {
        warnings.add("no statistics after reclaim: pods are evicted as if reclaim freed nothing");
      } else {
        Summary observed = after;
        failure =
            step(
                () -> "checking reclaim",
                timeLeft,
                () -> {
                  for (Observation o : Observations.of(observed).values()) {
                    insertPerSync(new ReclaimObservation(o.signal(), o.available(), o.capacity()));
                  }
                  firingsLeft[0] = fire(List.of("reclaim-check"), firingsLeft[0]);
                });
      }
    }
    if (failure == null && !decided[0]) {
      failure = step(() -> "ranking and deciding", timeLeft, rankAndDecide);
    }
    if (failure == null) {
      return plan[0];
    }
    LOG.warn("sync {} failed: {}", seq, failure);
    String failed = failure;
    plan[0] = null;
    if (session != null) {
      // the rule thread came back: the plan shows what the rules did before the failure
      guardedUntil(
          "reporting the failure",
          System.nanoTime() + budget.time().toNanos(),
          () -> plan[0] = buildPlan(now, reclaimed, warnings, failed));
      // A failed sync leaves the agenda mid-phase: the next sync starts a clean session with the
      // state from
      // before this one.
      dropSession();
    }
    return plan[0] != null ? plan[0] : failedPlan(now, warnings, failed);
  }

  /**
   * Runs one part of a sync on the rule thread, within what is left of the sync's time budget
   * ({@code timeLeft[0]}, nanoseconds, charged with the time the part took); returns null when it
   * finished, else the failure. Time spent outside the rules (node-level reclaim) is not charged.
   */
  private String step(Supplier<String> what, long[] timeLeft, Runnable work) {
    long started = System.nanoTime();
    String failure = guardedUntil(what, started + Math.max(0, timeLeft[0]), work);
    timeLeft[0] -= System.nanoTime() - started;
    return failure;
  }

  private String guardedUntil(String what, long deadline, Runnable work) {
    return guardedUntil(() -> what, deadline, work);
  }

  /** The same, {@code what} read when a failure is reported (the work may say what it is doing). */
  private String guardedUntil(Supplier<String> what, long deadline, Runnable work) {
    long limit = allocationLeft;
    try {
      runner.run(
          () -> {
            work.run();
            return null;
          },
          deadline,
          limit,
          this::halt);
      return null;
    } catch (RuleFailure e) {
      return e.getMessage();
    } catch (OutOfMemoryError e) {
      // Rule code filled the heap (or asked for an impossible array): what it built goes with the
      // session, which the next sync rebuilds from the state kept before this one.
      String rule = st.lastRule;
      dropSession();
      return (rule == null ? "rules failed" : "rule \"" + rule + "\" failed")
          + " while "
          + what.get()
          + ": "
          + describe(e)
          + "; the session is rebuilt from the state kept before this sync";
    } catch (RuntimeException | StackOverflowError e) {
      String rule = st.lastRule;
      return (rule == null ? "rules failed" : "rule \"" + rule + "\" failed")
          + " while "
          + what.get()
          + ": "
          + describe(e);
    } catch (RuleRunner.Overrun o) {
      String m =
          o.allocated() >= 0
              ? allocationMessage(what.get(), o, limit)
              : overrunMessage(what.get(), o);
      if (o.stuck()) {
        dropSession(true);
      }
      return m;
    } finally {
      long used = runner.lastAllocated();
      if (allocationLeft > 0 && used > 0) {
        allocationLeft = Math.max(1, allocationLeft - used);
      }
    }
  }

  private String allocationMessage(String what, RuleRunner.Overrun o, long limit) {
    SessionState state = st;
    String rule = state.lastRule;
    String m =
        (rule == null ? "rules" : "rule \"" + rule + "\"")
            + " allocated more than the budget of "
            + mebibytes(budget.allocatedBytesFor(pods.size()))
            + " in one sync ("
            + mebibytes(o.allocated())
            + " while "
            + what
            + (state.phase.isEmpty() ? "" : " in phase " + state.phase)
            + ")";
    if (o.stuck()) {
      m += "; its thread did not stop and is abandoned (" + runner.abandoned() + " so far)";
    }
    return m;
  }

  private static String mebibytes(long bytes) {
    return String.format(java.util.Locale.ROOT, "%.1f MiB", bytes / (1024.0 * 1024.0));
  }

  /**
   * Fails the sync when the facts the rules inserted and left in the session are more, or hold
   * more, than the budget allows: the failure drops the session, and with it what they kept.
   */
  private void checkKept(int podCount) {
    Map<FactHandle, Object> inserted = st.ruleInserted;
    long maxFacts = budget.keptFactsFor(podCount);
    if (inserted.size() > maxFacts) {
      throw new RuleFailure(
          "rules keep "
              + inserted.size()
              + " facts they inserted in the session (at most "
              + maxFacts
              + " with "
              + podCount
              + " pods): the session is rebuilt from the state kept before this sync");
    }
    if (budget.keptBytes() == 0) {
      return; // no size limit
    }
    long bytes = KeptFacts.estimate(inserted.values(), budget.keptBytes());
    if (bytes > budget.keptBytes()) {
      throw new RuleFailure(
          "the facts rules inserted hold more than "
              + mebibytes(budget.keptBytes())
              + " (at least "
              + mebibytes(bytes)
              + ", "
              + KeptFacts.largest(inserted.values())
              + "): the session is rebuilt from the state kept before this sync");
    }
  }

  /** The plan of a sync that failed: what was observed, the failure, and no decisions. */
  private EvictionPlan failedPlan(Instant now, List<String> warnings, String failure) {
    return new EvictionPlan(
        seq,
        now,
        new ArrayList<>(observations.values()),
        List.of(),
        List.of(),
        null,
        List.of(),
        false,
        List.of(),
        List.of(),
        List.of(),
        Map.of(),
        warnings,
        failure,
        List.of());
  }

  /** Thrown when a rule fails during a sync. */
  private static final class RuleFailure extends RuntimeException {
    RuleFailure(String message) {
      super(message, null, false, false);
    }
  }

  private long fire(List<String> phases, long firingsLeft) {
    for (String p : phases) {
      st.phase = p;
      int fired;
      try {
        fired = session.fireAllRules(p, (int) Math.min(Integer.MAX_VALUE, firingsLeft + 1));
      } catch (org.kie.api.runtime.rule.ConsequenceException e) {
        String rule = e.getMatch() == null ? "?" : e.getMatch().getRule().getName();
        Throwable cause = e.getCause() == null ? e : e.getCause();
        throw new RuleFailure(
            "rule \"" + rule + "\" failed in phase " + p + ": " + describe(cause));
      } catch (RuntimeException | StackOverflowError e) {
        String rule = st.lastRule;
        throw new RuleFailure(
            (rule == null ? "rules failed" : "rule \"" + rule + "\" failed")
                + " in phase "
                + p
                + ": "
                + describe(e));
      }
      // an OutOfMemoryError goes up as it is: guardedUntil drops the session before anything else
      firingsLeft -= fired;
      if (st.stopRequested) {
        // halted at the end of the time budget: the caller reports it; stop before the next phase
        throw new RuleFailure("rules stopped at the end of the time budget in phase " + p);
      }
      if (firingsLeft < 0) {
        String rule = st.lastRule == null ? "?" : st.lastRule;
        throw new RuleFailure(
            "too many rule firings in one sync (limit reached in phase "
                + p
                + ", last rule \""
                + rule
                + "\"): a rule may be looping");
      }
    }
    st.phase = "";
    return firingsLeft;
  }

  private static String describe(Throwable t) {
    String m = t.getMessage();
    Throwable root = t;
    for (int i = 0; i < 10 && root.getCause() != null && root.getCause() != root; i++) {
      root = root.getCause();
    }
    // the engine wraps what a condition threw: a stack overflow or exhausted heap is named
    String cause =
        root != t && root instanceof VirtualMachineError ? " (" + describe(root) + ")" : "";
    return t.getClass().getSimpleName()
        + (m == null ? "" : ": " + m.lines().findFirst().orElse(""))
        + cause;
  }

  private void clearPerSync() {
    for (FactHandle h : st.perSyncHandles) {
      if (present(h)) {
        session.delete(h);
      }
    }
    st.perSyncHandles.clear();
    st.perSyncFacts.clear();
    st.lastRanking = null;
    st.lastRankingEntries = null;
    st.producedBy.clear();
    st.firings.clear();
    st.descriptions.clear();
    st.currentFiring = null;
    st.lastRule = null;
  }

  /** Whether a fact is still in the session (a rule may have deleted it). */
  private boolean present(FactHandle h) {
    if (h instanceof org.drools.core.common.InternalFactHandle ih) {
      return ih.isValid(); // what getObject would answer, without the object store's lookups
    }
    return session.getObject(h) != null;
  }

  private void insertPerSync(Object o) {
    session.insert(o);
  }

  private void updateObservations(Map<Signal, Observation> now) {
    for (Signal s : Signal.values()) {
      Observation o = now.get(s);
      FactHandle h = observationHandles.get(s);
      if (o == null) {
        if (h != null) {
          session.delete(h);
          observationHandles.remove(s);
          observations.remove(s);
        }
      } else if (h == null) {
        observationHandles.put(s, session.insert(o));
        observations.put(s, o);
      } else if (!o.equals(observations.get(s))) {
        session.update(h, o);
        observations.put(s, o);
      } else {
        // Same statistics as last sync: still re-evaluated, since rules join the clock.
        session.update(h, o);
      }
    }
  }

  private void updatePods(List<Pod> activePods, Summary summary, List<String> warnings) {
    // The active pods in order, a duplicate uid ignored; facts for new and changed pods are built
    // before the session
    // is touched (a pod that cannot be read fails the sync with the session as it was).
    List<PodEntry> active = new ArrayList<>(activePods.size());
    Map<String, PodEntry> fresh = null;
    int position = 0;
    for (Pod pod : activePods) {
      String uid = PodFacts.uid(pod);
      PodEntry e = pods.get(uid);
      if (e == null && fresh != null) {
        e = fresh.get(uid);
      }
      if (e != null && e.seenAt == seq) {
        warnings.add(
            "pod "
                + PodFacts.namespace(pod)
                + "/"
                + PodFacts.name(pod)
                + ": duplicate uid "
                + uid
                + " ignored");
        continue;
      }
      if (e == null) {
        e = new PodEntry();
        e.uid = uid;
        if (fresh == null) {
          fresh = new HashMap<>();
        }
        fresh.put(uid, e);
        e.nextFact = PodFacts.of(pod, position);
      } else if (e.pod != pod && !e.pod.equals(pod)) {
        e.nextFact = PodFacts.of(pod, position);
      } else {
        e.nextFact = null;
      }
      e.seenAt = seq;
      e.next = pod;
      e.nextRaw = null;
      active.add(e);
      position++;
    }
    // Their statistics: the kubelet's cachedStatsFunc fills a map in summary order, a later entry
    // for a uid wins.
    if (summary != null) {
      for (Summary.PodStats ps : summary.pods()) {
        if (ps != null && ps.podRef() != null && ps.podRef().uid() != null) {
          String uid = ps.podRef().uid();
          PodEntry e = pods.get(uid);
          if (e == null && fresh != null) {
            e = fresh.get(uid);
          }
          if (e != null && e.seenAt == seq) {
            e.nextRaw = ps;
          }
        }
      }
    }
    position = 0;
    for (PodEntry e : active) {
      Pod pod = e.next;
      e.next = null;
      if (e.factHandle == null) {
        e.pod = pod;
        e.fact = e.nextFact;
        e.factHandle = session.insert(e.fact);
        pods.put(e.uid, e);
      } else if (e.nextFact != null) {
        e.pod = pod;
        e.fact = e.nextFact;
        session.update(e.factHandle, e.fact);
        e.rawStats = null; // local volumes may have changed: rebuild the statistics fact
      } else {
        e.pod = pod;
        if (e.fact.position() != position) {
          e.fact = e.fact.withPosition(position);
          session.update(e.factHandle, e.fact);
        }
      }
      e.nextFact = null;
      Summary.PodStats raw = e.nextRaw;
      e.nextRaw = null;
      if (raw == null) {
        if (e.statsHandle != null) {
          session.delete(e.statsHandle);
          e.statsHandle = null;
          e.stats = null;
          e.rawStats = null;
        }
      } else if (e.rawStats == null || !e.rawStats.equals(raw)) {
        e.rawStats = raw;
        e.stats = PodFacts.stats(e.fact, raw);
        if (e.statsHandle == null) {
          e.statsHandle = session.insert(e.stats);
        } else {
          session.update(e.statsHandle, e.stats);
        }
      }
      position++;
    }
    activeEntries = active;
    var it = pods.values().iterator();
    while (it.hasNext()) {
      PodEntry e = it.next();
      if (e.seenAt != seq) {
        session.delete(e.factHandle);
        if (e.statsHandle != null) {
          session.delete(e.statsHandle);
        }
        it.remove();
      }
    }
  }

  private void rank(List<String> warnings) {
    List<ReclaimTarget> targets = factsOf(ReclaimTarget.class);
    if (targets.isEmpty()) {
      return;
    }
    Signal signal = targets.get(0).signal();
    List<Ranked> ranked = new ArrayList<>();
    for (RankKey k : factsOf(RankKey.class)) {
      PodEntry e;
      if (k.signal() != signal || (e = entryOf(k)) == null) {
        continue;
      }
      if (e.rankedAt == seq) {
        warnings.add("pod " + e.fact.key() + " has more than one rank key; the first is used");
        continue;
      }
      e.rankedAt = seq;
      ranked.add(new Ranked(k, e));
    }
    if (ranked.isEmpty()) {
      return;
    }
    sort(ranked);
    List<RankKey> order = new ArrayList<>(ranked.size());
    List<PodEntry> entries = new ArrayList<>(ranked.size());
    for (Ranked r : ranked) {
      order.add(r.key);
      entries.add(r.entry);
    }
    Ranking ranking = new Ranking(signal, order, st.exemptions.keySet());
    st.lastRanking = ranking;
    st.lastRankingEntries = entries;
    insertPerSync(ranking);
  }

  /**
   * The active pod a rank key is for: by its position in the active list, else by uid; null when
   * not active.
   */
  private PodEntry entryOf(RankKey k) {
    int p = k.position();
    if (p >= 0 && p < activeEntries.size()) {
      PodEntry e = activeEntries.get(p);
      if (e.uid.equals(k.uid())) {
        return e;
      }
    }
    return pods.get(k.uid());
  }

  /**
   * The keys in the order {@link #rank} puts them in (for tests: the same as their natural order).
   */
  static List<RankKey> sorted(List<RankKey> keys) {
    List<Ranked> ranked = new ArrayList<>(keys.size());
    for (RankKey k : keys) {
      ranked.add(new Ranked(k, null));
    }
    if (!ranked.isEmpty()) {
      sort(ranked);
    }
    return ranked.stream().map(r -> r.key).toList();
  }

  /** A rank key with its pod, and the key's levels as longs when they fit (see {@link #sort}). */
  private static final class Ranked {
    final RankKey key;
    final PodEntry entry;
    long[] levels;

    Ranked(RankKey key, PodEntry entry) {
      this.key = key;
      this.entry = entry;
    }
  }

  /**
   * Sorts by rank key, as {@link RankKey#compareTo} orders them. When every key has the same levels
   * (count and direction) and every level's exact amount is a long, which is the rule, the keys are
   * compared as arrays of longs (a descending level stored as its bitwise complement, which
   * reverses the order): the same order without walking each key's objects at every comparison.
   */
  private static void sort(List<Ranked> ranked) {
    List<RankKey.Component> shape = ranked.get(0).key.components();
    int n = shape.size();
    for (Ranked r : ranked) {
      List<RankKey.Component> cs = r.key.components();
      if (cs.size() != n) {
        ranked.sort((a, b) -> a.key.compareTo(b.key));
        return;
      }
      long[] levels = new long[n];
      for (int i = 0; i < n; i++) {
        RankKey.Component c = cs.get(i);
        java.math.BigDecimal x = c.exact();
        if (c.descending() != shape.get(i).descending()
            || x.scale() != 0
            || x.precision() > 18
            || x.longValue() != c.value()) {
          ranked.sort((a, b) -> a.key.compareTo(b.key));
          return;
        }
        levels[i] = c.descending() ? ~c.value() : c.value();
      }
      r.levels = levels;
    }
    ranked.sort(
        (a, b) -> {
          long[] x = a.levels;
          long[] y = b.levels;
          for (int i = 0; i < x.length; i++) {
            if (x[i] != y[i]) {
              return x[i] < y[i] ? -1 : 1;
            }
          }
          return Integer.compare(a.key.position(), b.key.position());
        });
  }

  private <T> List<T> factsOf(Class<T> type) {
    return st.perSyncFacts.of(type);
  }

  private EvictionPlan buildPlan(
      Instant now, List<ReclaimAction> reclaimed, List<String> warnings, String failure) {
    Set<Threshold> met = new java.util.HashSet<>();
    Map<Threshold, ThresholdMet> metFacts = new HashMap<>();
    for (ThresholdMet m : factsOf(ThresholdMet.class)) {
      metFacts.put(m.threshold(), m);
    }
    Set<Threshold> unresolved = new java.util.HashSet<>();
    factsOf(ThresholdUnresolved.class).forEach(u -> unresolved.add(u.threshold()));
    Set<Threshold> active = new java.util.HashSet<>();
    factsOf(ThresholdActive.class).forEach(a -> active.add(a.threshold()));
    Set<Threshold> graceMet = new java.util.HashSet<>();
    factsOf(GracePeriodMet.class).forEach(g -> graceMet.add(g.threshold()));
    Set<Threshold> actionable = new java.util.HashSet<>();
    factsOf(ActionableThreshold.class).forEach(a -> actionable.add(a.threshold()));
    Map<Threshold, Instant> first = new HashMap<>();
    for (ThresholdState ts : st.thresholdStates) {
      first.put(ts.getThreshold(), ts.getFirstObservedAt());
    }
    met.addAll(metFacts.keySet());
    List<EvictionPlan.ThresholdStatus> statuses = new ArrayList<>();
    for (Threshold t : config.thresholds()) {
      Observation o = observations.get(t.signal());
      statuses.add(
          new EvictionPlan.ThresholdStatus(
              t,
              o == null ? null : t.quantity(o.capacity()),
              o == null ? null : o.available(),
              met.contains(t),
              unresolved.contains(t),
              active.contains(t),
              first.get(t),
              graceMet.contains(t),
              actionable.contains(t)));
    }
    List<NodeConditionType> conditions =
        factsOf(NodeCondition.class).stream().map(NodeCondition::type).distinct().sorted().toList();
    List<ReclaimTarget> targets = factsOf(ReclaimTarget.class);
    Signal signal = targets.isEmpty() ? null : targets.get(0).signal();
    if (targets.size() > 1) {
      warnings.add(
          "rules selected " + targets.size() + " thresholds to reclaim; the first is reported");
    }
    List<EvictionPlan.RankedPod> ranking = new ArrayList<>();
    List<Ranking> rankings = factsOf(Ranking.class);
    if (!rankings.isEmpty()) {
      List<RankKey> order = rankings.get(0).order();
      // the planner's own ranking (rules may replace it) comes with its pods
      List<PodEntry> entries = rankings.get(0) == st.lastRanking ? st.lastRankingEntries : null;
      for (int i = 0; i < order.size(); i++) {
        RankKey k = order.get(i);
        PodEntry e = entries != null ? entries.get(i) : pods.get(k.uid());
        List<String> reasons = st.exemptions.isEmpty() ? null : st.exemptions.get(k.uid());
        ranking.add(
            new EvictionPlan.RankedPod(
                e.fact.ref(), k.components(), reasons == null ? null : String.join(", ", reasons)));
      }
    }
    List<EvictionDecision> decisions = new ArrayList<>();
    List<EvictionPlan.RefusedDecision> refused = new ArrayList<>();
    Map<String, List<EvictionPlan.RuleFiring>> decisionTrace = new HashMap<>();
    if (failure == null) {
      List<EvictionDecision> raw = factsOf(EvictionDecision.class);
      Map<String, Integer> positions = new HashMap<>();
      for (EvictionDecision d : raw) {
        String uid = d.pod() == null ? null : d.pod().uid();
        PodEntry e = uid == null ? null : pods.get(uid);
        positions.put(uid, e == null ? Integer.MAX_VALUE : e.fact.position());
      }
      List<EvictionDecision> sorted = new ArrayList<>(raw);
      sorted.sort(
          Comparator.comparing(
                  (EvictionDecision d) -> d.kind() != EvictionDecision.Kind.LOCAL_STORAGE)
              .thenComparing(d -> positions.get(d.pod() == null ? null : d.pod().uid())));
      // each decision with the rules behind it; the guard keeps the first acceptable one per pod
      List<EvictionDecision> traced = new ArrayList<>(sorted.size());
      Map<EvictionDecision, List<Firing>> chains = new IdentityHashMap<>();
      for (EvictionDecision d : sorted) {
        List<Firing> chain = provenance(d);
        EvictionDecision t =
            new EvictionDecision(
                d.pod(),
                d.kind(),
                d.signal(),
                d.gracePeriodSeconds(),
                d.message(),
                d.annotations(),
                d.method(),
                chain.stream().map(Firing::rule).distinct().toList());
        chains.put(t, chain);
        traced.add(t);
      }
      DecisionGuard.Review review =
          guard.review(
              traced,
              uid -> {
                PodEntry e = pods.get(uid);
                return e == null || e.seenAt != seq ? null : e.fact;
              },
              st.exemptions);
      decisions.addAll(review.accepted());
      refused.addAll(review.refused());
      warnings.addAll(review.warnings());
      for (int i = 0; i < decisions.size(); i++) {
        decisionTrace.put(
            decisions.get(i).pod().uid(),
            chains.get(review.made().get(i)).stream().map(this::describe).toList());
      }
    }
    return new EvictionPlan(
        seq,
        now,
        new ArrayList<>(observations.values()),
        statuses,
        conditions,
        signal,
        reclaimed,
        !factsOf(ReclaimResolved.class).isEmpty(),
        ranking,
        decisions,
        traceOf(),
        decisionTrace,
        warnings,
        failure,
        refused);
  }

  private EvictionPlan.RuleFiring describe(Firing f) {
    if (f.rendered == null) {
      f.rendered =
          new EvictionPlan.RuleFiring(
              f.phase(),
              f.rule(),
              f.matched().stream().map(this::cachedDescription).toList(),
              f.produced().stream().map(this::cachedDescription).toList());
    }
    return f.rendered;
  }

  private String cachedDescription(Object o) {
    if (o == null) {
      return shortDescription(null);
    }
    return st.descriptions.computeIfAbsent(o, Planner::shortDescription);
  }

  /**
   * The firings that produced a fact: the one that inserted it, then those behind the facts it
   * matched.
   */
  private List<Firing> provenance(Object fact) {
    Set<Firing> out = new LinkedHashSet<>();
    java.util.ArrayDeque<Object> todo = new java.util.ArrayDeque<>();
    Set<Object> visited = java.util.Collections.newSetFromMap(new IdentityHashMap<>());
    todo.add(fact);
    while (!todo.isEmpty()) {
      Object o = todo.poll();
      if (!visited.add(o)) {
        continue;
      }
      Firing f = st.producedBy.get(o);
      if (f == null) {
        continue;
      }
      out.add(f);
      todo.addAll(f.matched());
    }
    return new ArrayList<>(out);
  }

  private List<EvictionPlan.RuleFiring> traceOf() {
    Map<String, Integer> counts = new HashMap<>();
    for (Firing f : st.firings) {
      counts.merge(f.rule(), 1, Integer::sum);
    }
    List<EvictionPlan.RuleFiring> out = new ArrayList<>();
    Set<String> summarized = new java.util.HashSet<>();
    for (Firing f : st.firings) {
      int n = counts.get(f.rule());
      if (n > TRACE_LIMIT_PER_RULE) {
        if (summarized.add(f.rule())) {
          out.add(
              new EvictionPlan.RuleFiring(
                  f.phase(), f.rule(), List.of("fired " + n + " times"), List.of()));
        }
        continue;
      }
      out.add(describe(f));
    }
    return out;
  }

  /** A one-line description of a fact for traces. */
  static String shortDescription(Object o) {
    if (o instanceof java.util.Collection<?> c) {
      return c.stream()
          .map(Planner::shortDescription)
          .collect(java.util.stream.Collectors.joining(", ", "[", "]"));
    }
    if (o != null && o.getClass().getName().startsWith("org.drools.")) {
      return "(initial fact)";
    }
    if (o instanceof PodFact p) {
      return "PodFact[" + p.key() + "]";
    }
    if (o instanceof PodStats s) {
      return "PodStats["
          + s.uid()
          + ", memory "
          + s.memoryWorkingSetBytes()
          + ", processes "
          + s.processCount()
          + "]";
    }
    if (o instanceof Threshold t) {
      return "Threshold[" + t.id() + "<" + t.value() + "]";
    }
    if (o instanceof Ranking r) {
      return "Ranking[" + r.signal() + ", " + r.order().size() + " pods]";
    }
    if (o instanceof EvictionConfig) {
      return "EvictionConfig";
    }
    String s = String.valueOf(o);
    return s.length() > 200 ? s.substring(0, 200) + "..." : s;
  }

  private final InFlightEvictions inFlight = new InFlightEvictions();

  /** Inserts this sync's {@link dev.evictd.api.EvictionInFlight} facts (per-sync). */
  private void insertInFlight() {
    List<PodFact> active = new ArrayList<>(activeEntries.size());
    for (PodEntry e : activeEntries) {
      active.add(e.fact);
    }
    for (dev.evictd.api.EvictionInFlight f : inFlight.sync(active)) {
      session.insert(f);
    }
  }

  /**
   * How long the agent waits for an evicted pod to go (podCleanupTimeout; the kubelet's 30 s unless
   * set): carried by every {@link dev.evictd.api.EvictionInFlight} fact.
   */
  public synchronized void podCleanupTimeout(java.time.Duration timeout) {
    inFlight.cleanupTimeout(timeout);
  }

  /**
   * Records an eviction the agent started whose pod may now be going (outcome EVICTED, or UNKNOWN
   * when no answer came): from the next sync on, rules see it as an {@link
   * dev.evictd.api.EvictionInFlight} until the pod leaves the active list.
   */
  public synchronized void evictionStarted(
      dev.evictd.api.PodRef pod,
      dev.evictd.api.EvictionMethod method,
      long gracePeriodSeconds,
      dev.evictd.api.EvictionOutcome outcome,
      Instant at) {
    inFlight.started(pod, method, gracePeriodSeconds, outcome, at);
  }

  /** Forgets an eviction whose outcome was unknown and turned out not to have happened. */
  public synchronized void evictionNotStarted(String uid) {
    inFlight.forget(uid);
  }

  /** The pod's in-flight eviction as of the last sync, or null. */
  public synchronized dev.evictd.api.EvictionInFlight inFlight(String uid) {
    return inFlight.of(uid);
  }

  /** How long eviction attempts stay in the session for rules to see. */
  public static final java.time.Duration ATTEMPT_RETENTION = java.time.Duration.ofHours(1);

  /** An eviction attempt and its handle in the current session (null while there is none). */
  private static final class Attempt {
    final dev.evictd.api.EvictionAttempt attempt;
    FactHandle handle;

    Attempt(dev.evictd.api.EvictionAttempt attempt) {
      this.attempt = attempt;
    }
  }

  private final java.util.ArrayDeque<Attempt> attempts = new java.util.ArrayDeque<>();

  /**
   * Records what the executor did with a decision; rules see it as an {@code EvictionAttempt} fact
   * for an hour.
   */
  public synchronized void recordAttempt(dev.evictd.api.EvictionAttempt attempt) {
    if (closed) {
      return;
    }
    Attempt a = new Attempt(attempt);
    attempts.add(a);
    if (session != null) {
      String failure =
          guarded("recording an eviction attempt", () -> a.handle = session.insert(attempt));
      if (failure != null) {
        LOG.warn("{}", failure);
      }
    }
  }

  private void expireAttempts(Instant now) {
    while (!attempts.isEmpty()
        && attempts.peekFirst().attempt.time().plus(ATTEMPT_RETENTION).isBefore(now)) {
      Attempt a = attempts.pollFirst();
      if (a.handle != null) {
        session.delete(a.handle);
      }
    }
  }

  @Override
  public synchronized void close() {
    if (!closed) {
      closed = true;
      if (session != null) {
        RuleSession s = session;
        guarded("closing", () -> s.kie.dispose());
        session = null;
      }
      runner.close();
    }
  }

  /**
   * Tracks per-sync facts (to retract them next sync), exemptions, and which firing produced each
   * fact.
   */
  private static final class Listener implements RuleRuntimeEventListener {
    private final SessionState st;

    Listener(SessionState st) {
      this.st = st;
    }

    @Override
    public void objectInserted(ObjectInsertedEvent event) {
      Object o = event.getObject();
      if (o instanceof PerSyncFact) {
        st.perSyncHandles.add(event.getFactHandle());
        st.perSyncFacts.add(o);
      } else if (o instanceof EvictionExempt x) {
        st.exemptions.computeIfAbsent(x.uid(), k -> new ArrayList<>()).add(x.reason());
      } else if (o instanceof ThresholdState ts) {
        st.thresholdStates.add(ts);
      }
      if (st.currentFiring != null) {
        st.currentFiring.produced().add(o);
        st.producedBy.put(o, st.currentFiring);
        st.ruleInserted.put(event.getFactHandle(), o);
      }
    }

    @Override
    public void objectUpdated(ObjectUpdatedEvent event) {
      Object old = event.getOldObject();
      Object o = event.getObject();
      if (old instanceof PerSyncFact && old != o) {
        st.perSyncFacts.remove(old);
        st.perSyncFacts.add(o);
      }
      if (old != o && st.ruleInserted.containsKey(event.getFactHandle())) {
        st.ruleInserted.put(event.getFactHandle(), o);
      }
    }

    @Override
    public void objectDeleted(ObjectDeletedEvent event) {
      Object o = event.getOldObject();
      st.ruleInserted.remove(event.getFactHandle());
      if (o instanceof ThresholdState ts) {
        st.thresholdStates.remove(ts);
      }
      if (o instanceof EvictionExempt x) {
        List<String> l = st.exemptions.get(x.uid());
        if (l != null) {
          l.remove(x.reason());
          if (l.isEmpty()) {
            st.exemptions.remove(x.uid());
          }
        }
      } else if (o instanceof PerSyncFact && !st.phase.isEmpty()) {
        st.perSyncFacts.remove(o);
      }
    }
  }

  /** Records rule firings for the plan's trace and the decisions' provenance. */
  private static final class Tracer extends DefaultAgendaEventListener {
    private final SessionState st;

    Tracer(SessionState st) {
      this.st = st;
    }

    @Override
    public void beforeMatchFired(BeforeMatchFiredEvent event) {
      st.currentFiring =
          new Firing(st.phase, event.getMatch().getRule().getName(), event.getMatch().getObjects());
      st.firings.add(st.currentFiring);
      st.lastRule = st.currentFiring.rule();
    }

    @Override
    public void afterMatchFired(AfterMatchFiredEvent event) {
      st.currentFiring = null;
    }
  }
}
