package dev.evictd.engine;

import dev.evictd.api.EvictionAttempt;
import dev.evictd.api.EvictionConfig;
import dev.evictd.api.EvictionInFlight;
import dev.evictd.api.EvictionMethod;
import dev.evictd.api.EvictionOutcome;
import dev.evictd.api.EvictionPlan;
import dev.evictd.api.Observation;
import dev.evictd.api.PodRef;
import dev.evictd.api.Ranking;
import dev.evictd.api.ReclaimObservation;
import dev.evictd.api.ReclaimRequest;
import dev.evictd.api.RulesException;
import dev.evictd.k8s.Observations;
import dev.evictd.stats.Summary;
import io.fabric8.kubernetes.api.model.Pod;
import java.time.Duration;
import java.time.Instant;
import java.util.Collection;
import java.util.List;
import java.util.concurrent.atomic.AtomicReference;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The eviction planner: one long-lived Drools session per node. Each {@link #sync} updates the
 * input facts in place (clock, observations, pods and their statistics), fires the rule phases in
 * order, runs node-level reclaim when the rules ask for it, sorts the pods by the rank keys the
 * rules computed, and returns the plan. State the kubelet keeps between syncs lives in the session
 * as facts.
 *
 * <p>The work is done by named parts: the {@link GuardedSession} (rules on their own thread within
 * a {@link SyncBudget}, or inline on a {@link SyncThread}; a sync that fires too many rules or runs
 * too long fails, naming the rule, and the planner carries on with a fresh session holding the
 * state from before that sync; a thread stuck in a consequence is abandoned with the session), the
 * {@link SessionFacts} (the input facts), the {@link RankOrder}, the {@link DecisionGuard} (the one
 * place Java enforces policy on the rules' decisions), the {@link PlanAssembly} with its {@link
 * PlanTrace}, and the {@link AttemptRetention}.
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

  /**
   * How many abandoned rule threads may be alive before the planner refuses to sync (they hold
   * CPUs; evictd must restart unless they end). Once they have ended, syncs run again.
   */
  public static final int MAX_ABANDONED_THREADS = 3;

  /** How long eviction attempts stay in the session for rules to see. */
  public static final Duration ATTEMPT_RETENTION = AttemptRetention.RETENTION;

  private static final Logger LOG = LoggerFactory.getLogger(Planner.class);
  private static final List<String> SELECT = PHASES.subList(0, 5);
  private static final List<String> RECLAIM_CHECK = List.of("reclaim-check");
  private static final List<String> RANK = List.of("rank");
  private static final List<String> DECIDE = List.of("decide", "commit");

  private final EvictionConfig config;
  private final SyncBudget budget;
  private final DecisionGuard.Limits limits;
  private final SessionFacts facts;
  private final GuardedSession session;
  private final PlanAssembly plans;
  private final AttemptRetention attempts = new AttemptRetention();
  private final InFlightEvictions inFlight = new InFlightEvictions();
  private final SyncLock lock = new SyncLock(); // taken from a sync thread the watchdog abandons
  private RuleSet rules;
  private boolean closed;

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
   * @throws RulesException when loading the facts into the session overruns the time budget
   */
  public Planner(RuleSet rules, EvictionConfig config, SyncBudget budget) {
    this(rules, config, budget, DecisionGuard.Limits.DEFAULT);
  }

  /**
   * Creates the planner's session.
   *
   * @param budget what one sync may spend on rules
   * @param limits what the decision guard lets the rules' decisions do (methods, message length)
   * @throws RulesException when loading the facts into the session overruns the time budget
   */
  public Planner(
      RuleSet rules, EvictionConfig config, SyncBudget budget, DecisionGuard.Limits limits) {
    this.config = config;
    this.budget = budget;
    this.limits = limits;
    this.facts = new SessionFacts(config);
    this.session = new GuardedSession(budget, facts::podCount);
    this.plans = new PlanAssembly(config, new DecisionGuard(config, limits), facts);
    String failure = session.guarded("loading the facts", () -> openSession(rules, List.of()));
    if (failure != null) {
      session.close();
      throw new RulesException(failure);
    }
  }

  /**
   * Opens a session on {@code newRules} holding the input facts, the given state facts and the
   * eviction attempts. Runs on the rule thread: inserting facts evaluates the rules' conditions.
   */
  private void openSession(RuleSet newRules, List<Object> state) {
    session.open(newRules);
    rules = newRules;
    facts.loadInto(session, state);
    attempts.loadInto(session);
  }

  /**
   * Replaces the rule set at a sync boundary, keeping the session's state (first-observed times,
   * conditions, thresholds acted on, last observation times, eviction attempts).
   *
   * @throws RulesException when loading the facts into a session of the new rules fails or overruns
   *     the time budget; the planner then keeps the rules it had (and their state), and the next
   *     sync opens a session on them
   */
  public void swapRules(RuleSet newRules) {
    lock.run(() -> swapLocked(newRules));
  }

  private void swapLocked(RuleSet newRules) {
    if (closed) {
      throw new IllegalStateException("planner is closed");
    }
    RuleSet old = rules;
    LeftState back = left != null && left.sha256().equals(newRules.sha256()) ? left : null;
    AtomicReference<List<Object>> kept = new AtomicReference<>();
    String failure =
        session.guarded(
            "loading the facts",
            () -> {
              kept.set(SessionFacts.copies(facts.stateFacts(session)));
              // back to the set swapped away from (a rollback): its state as it was then, not
              // what the replaced set wrote since
              openSession(newRules, SessionFacts.copies(back != null ? back.state() : kept.get()));
            });
    if (failure == null) {
      left = back != null ? null : new LeftState(old.sha256(), kept.get());
      return;
    }
    rules = old;
    if (kept.get() != null) {
      facts.keepState(kept.get());
    }
    throw new RulesException(
        newRules.source() + ": " + failure + " (the rules in use stay: " + old.source() + ")");
  }

  /**
   * Forgets the state kept for a swap back to the rules in use before the last swap: the rules in
   * use are trusted, a swap back is no rollback any more.
   */
  public void forgetRollbackState() {
    left = null;
  }

  /** The rules swapped away from last and the copies of the state facts they had then. */
  private record LeftState(String sha256, List<Object> state) {}

  /** Set by a swap, until a swap back (which restores it) or {@link #forgetRollbackState}. */
  private volatile LeftState left;

  /**
   * How many rule threads were abandoned because a rule did not stop (they run until evictd
   * restarts).
   */
  public int abandonedRuleThreads() {
    return session.abandoned();
  }

  /**
   * How many abandoned rule threads are still running. Never blocks (health endpoints ask it while
   * a sync runs): a thread whose stuck rule finally ended no longer counts.
   */
  public int aliveAbandonedRuleThreads() {
    return session.aliveAbandoned();
  }

  /** The configuration the planner was built for. */
  public EvictionConfig config() {
    return config;
  }

  /** The rule set in use. */
  public RuleSet rules() {
    return rules;
  }

  /** What one sync may spend on rules. */
  public SyncBudget budget() {
    return budget;
  }

  /** What the decision guard lets the rules' decisions do. */
  public DecisionGuard.Limits limits() {
    return limits;
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
  public EvictionPlan sync(
      Instant now, Summary summary, List<Pod> activePods, PlannerHooks hooks, Collection<?> extra) {
    return lock.call(() -> syncLocked(now, summary, activePods, hooks, extra));
  }

  private EvictionPlan syncLocked(
      Instant now, Summary summary, List<Pod> activePods, PlannerHooks hooks, Collection<?> extra) {
    if (closed) {
      throw new IllegalStateException("planner is closed");
    }
    facts.clock(facts.seq() + 1, now);
    SyncProgress p = new SyncProgress(budget.time().toNanos());
    int stuck = session.aliveAbandoned();
    if (stuck >= MAX_ABANDONED_THREADS) {
      return plans.failed(
          now,
          p.warnings,
          stuck
              + " rule threads are stuck in rules that never finished; evictd must be restarted"
              + " (or they must end)");
    }
    String abandoned = session.takeAbandonedSync(); // the outcome of the sync abandoned before
    if (abandoned != null) {
      return plans.failed(now, p.warnings, abandoned);
    }
    String skip = facts.seq() == 1 ? facts.kubelet().firstSyncError(config.fsLayout()) : null;
    if (skip != null) {
      return plans.skipped(now, p.warnings, skip);
    }
    session.budgetFor(activePods.size());
    String failure =
        step(p, "observing and selecting", () -> observe(p, now, summary, activePods, extra));
    if (failure == null && !p.requests.isEmpty()) {
      failure = reclaim(p, hooks);
    }
    if (failure == null && !p.decided) {
      failure = step(p, "ranking and deciding", () -> decide(p, now));
    }
    return failure == null ? p.plan : failed(p, now, failure);
  }

  /**
   * Brings the session's facts up to this sync and fires the phases up to selection; without a
   * reclaim request, ranks and decides too (sparing a second hand-over to the rule thread).
   */
  private void observe(
      SyncProgress p, Instant now, Summary summary, List<Pod> activePods, Collection<?> extra) {
    if (!session.isOpen()) {
      facts.forget();
      openSession(rules, SessionFacts.copies(facts.stateBeforeSync()));
    }
    facts.keepState(SessionFacts.copies(facts.stateFacts(session)));
    session.record().phase = "";
    facts.clearPerSync(session);
    attempts.expire(now, session);
    facts.updateClock(session);
    facts.insertForSync(session, extra);
    facts.updateObservations(session, summary);
    facts.updatePods(session, activePods, summary, p.warnings);
    for (EvictionInFlight f : inFlight.sync(facts.activeFacts())) {
      session.insert(f);
    }
    p.firingsLeft = session.fire(SELECT, budget.firingsFor(facts.podCount()));
    p.requests.addAll(session.record().perSyncFacts.of(ReclaimRequest.class));
    if (p.requests.isEmpty()) {
      p.doing = "ranking and deciding";
      decide(p, now);
      p.decided = true;
    }
  }

  /**
   * Runs the node-level reclaim the rules asked for (outside the rules' time budget: it is evictd's
   * own work), then lets the rules check what it freed; returns null or the failure.
   */
  private String reclaim(SyncProgress p, PlannerHooks hooks) {
    Summary observed = p.reclaim(hooks);
    if (observed == null) {
      return null;
    }
    return step(
        p,
        "checking reclaim",
        () -> {
          for (Observation o : Observations.of(observed).values()) {
            session.insert(new ReclaimObservation(o.signal(), o.available(), o.capacity()));
          }
          p.firingsLeft = session.fire(RECLAIM_CHECK, p.firingsLeft);
        });
  }

  /** Ranks the pods, fires the decide phases and assembles the plan. */
  private void decide(SyncProgress p, Instant now) {
    p.firingsLeft = session.fire(RANK, p.firingsLeft);
    Ranking ranking = RankOrder.rank(facts, session.record(), p.warnings);
    if (ranking != null) {
      session.insert(ranking);
    }
    p.firingsLeft = session.fire(DECIDE, p.firingsLeft);
    session.checkKept(facts.podCount());
    p.plan = plans.build(session.record(), now, p.reclaimed, p.warnings, null);
  }

  /**
   * Runs one step of a sync on the rule thread within what is left of the sync's time budget,
   * charged with the time the step took; returns null when it finished, else the failure.
   */
  private String step(SyncProgress p, String doing, Runnable work) {
    p.doing = doing;
    long started = System.nanoTime();
    String failure = session.until(() -> p.doing, started + Math.max(0, p.timeLeftNanos), work);
    p.timeLeftNanos -= System.nanoTime() - started;
    return failure;
  }

  /**
   * The plan of a failed sync: what the rules did before the failure when the rule thread came
   * back; the session is then dropped (the agenda is mid-phase) and the next sync starts a clean
   * one from the state kept before this one.
   */
  private EvictionPlan failed(SyncProgress p, Instant now, String failure) {
    LOG.warn("sync {} failed: {}", facts.seq(), failure);
    p.plan = null;
    if (session.isOpen()) {
      session.until(
          () -> "reporting the failure",
          System.nanoTime() + budget.time().toNanos(),
          () -> p.plan = plans.build(session.record(), now, p.reclaimed, p.warnings, failure));
      session.drop();
    }
    return p.plan != null ? p.plan : plans.failed(now, p.warnings, failure);
  }

  /**
   * How long the agent waits for an evicted pod to go (podCleanupTimeout; the kubelet's 30 s unless
   * set): carried by every {@link EvictionInFlight} fact.
   */
  public void podCleanupTimeout(Duration timeout) {
    lock.run(() -> inFlight.cleanupTimeout(timeout));
  }

  /**
   * Records an eviction the agent started whose pod may now be going (outcome EVICTED, or UNKNOWN
   * when no answer came): from the next sync on, rules see it as an {@link EvictionInFlight} until
   * the pod leaves the active list.
   */
  public void evictionStarted(
      PodRef pod,
      EvictionMethod method,
      long gracePeriodSeconds,
      EvictionOutcome outcome,
      Instant at) {
    lock.run(() -> inFlight.started(pod, method, gracePeriodSeconds, outcome, at));
  }

  /** Forgets an eviction whose outcome was unknown and turned out not to have happened. */
  public void evictionNotStarted(String uid) {
    lock.run(() -> inFlight.forget(uid));
  }

  /** The pod's in-flight eviction as of the last sync, or null. */
  public EvictionInFlight inFlight(String uid) {
    return lock.call(() -> inFlight.of(uid));
  }

  /**
   * Records what the executor did with a decision; rules see it as an {@code EvictionAttempt} fact
   * for an hour.
   */
  public void recordAttempt(EvictionAttempt attempt) {
    String failure = lock.call(() -> closed ? null : attempts.record(attempt, session));
    if (failure != null) {
      LOG.warn("{}", failure);
    }
  }

  @Override
  public void close() {
    lock.run(
        () -> {
          if (!closed) {
            closed = true;
            session.close();
          }
        });
  }
}
