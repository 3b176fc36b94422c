package dev.evictd.agent;

import dev.evictd.api.EvictionAttempt;
import dev.evictd.api.EvictionDecision;
import dev.evictd.api.EvictionMethod;
import dev.evictd.api.EvictionPlan;
import dev.evictd.api.Signal;
import dev.evictd.engine.Planner;
import dev.evictd.engine.RuleSet;
import dev.evictd.engine.SyncLock;
import dev.evictd.engine.SyncThread;
import dev.evictd.ports.EventSink;
import dev.evictd.ports.NodeReclaimer;
import dev.evictd.ports.PodEvictor;
import dev.evictd.ports.PodSource;
import dev.evictd.ports.StatsProvider;
import dev.evictd.stats.Summary;
import dev.evictd.stats.SummaryReuse;
import io.fabric8.kubernetes.api.model.Pod;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;
import java.util.function.Supplier;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The agent's loop: a sync every interval and at once on notifier events (bursts coalesced into one
 * sync). Each sync reads statistics and pods, runs the planner, carries out its decisions and
 * records what happened. After an eviction it waits for the pod to go, as the kubelet does — but an
 * urgent trigger (a kernel threshold or pressure event) ends the wait at once, so a slow soft
 * eviction never delays the reaction to a hard threshold.
 */
public final class EvictionManager implements AutoCloseable {
  private static final Logger LOG = LoggerFactory.getLogger(EvictionManager.class);

  /** Why a sync runs; urgent triggers end a wait for evicted pods. */
  public record Trigger(String reason, boolean urgent) {}

  /** What one sync did. */
  public record SyncResult(String outcome, EvictionPlan plan, List<EvictionAttempt> attempts) {}

  /** The agent's collaborators and settings. */
  public record Settings(
      Duration interval,
      Duration podCleanupTimeout,
      EvictionMethod defaultMethod,
      boolean dryRun,
      boolean logEverySync) {}

  private final Planner planner;
  private final StatsProvider stats;
  private volatile SyncStats syncStats;
  private final SyncPacing pacing = new SyncPacing(SyncPacing.MIN_GAP);
  private final PodSource pods;
  private final EventSink events;
  private final EvictionExecution execution;
  private final AgentMetrics metrics;
  private final Clock clock;
  private final Settings settings;
  private final List<Supplier<List<?>>> observationSources = new ArrayList<>();
  private final BlockingQueue<Trigger> triggers = new LinkedBlockingQueue<>();
  private final ConcurrentLinkedQueue<Object> pendingFacts = new ConcurrentLinkedQueue<>();
  private final AtomicReference<RuleSet> pendingRules = new AtomicReference<>();
  private volatile boolean running;
  // set by close(): no new evictions, requests or retries are started from then on
  private volatile boolean stopping;
  private volatile Instant lastStatsRead;
  private volatile String lastStatsFailure;
  private volatile Instant lastBeat;
  private volatile Instant lastSync;
  private volatile boolean ready;
  private volatile String rulesSha256;
  // the rules the sync in progress runs, and, after its thread was abandoned, those its report is
  // held against: a swap applied at the report's sync boundary must not take the blame
  private volatile String syncingRules;
  private volatile String lostSyncRules;
  private volatile RuleProbation probation;
  private volatile RuleProbation.Inputs lastInputs;
  private volatile SyncThread.Loop syncLoop;
  private volatile boolean started;
  private volatile boolean syncing; // a sync runs (background work such as the warm-up waits)
  private final SyncLock lock = new SyncLock(); // a sync thread the watchdog abandons loses it
  private int abandonedSeen; // abandoned rule threads as of the last sync
  // young collections between syncs rather than in the next one (the sync thread's alone)
  private final EdenHeadroom headroom = EdenHeadroom.forThisJvm();
  // where the loop waits for a trigger when the kernel's eventfds are polled on it (else the queue)
  private volatile dev.evictd.linux.EventPoll eventPoll;

  public EvictionManager(
      Planner planner,
      StatsProvider stats,
      PodSource pods,
      PodEvictor evictor,
      NodeReclaimer reclaimer,
      EventSink events,
      AgentMetrics metrics,
      Clock clock,
      Settings settings) {
    this.planner = planner;
    this.stats = stats;
    this.syncStats = new SyncStats(stats, null, clock, metrics::summaryRead);
    this.pods = pods;
    this.events = events;
    this.metrics = metrics;
    this.clock = clock;
    this.settings = settings;
    // the statistics after node-level reclaim: a read counted like the syncs' own
    StatsProvider counted =
        () -> {
          metrics.summaryRead();
          return stats.summary();
        };
    this.execution =
        new EvictionExecution(
            planner, counted, evictor, reclaimer, events, metrics, clock, settings);
    this.rulesSha256 = planner.rules().sha256();
    this.abandonedSeen = planner.abandonedRuleThreads();
    this.lastBeat = clock.instant();
    planner.podCleanupTimeout(settings.podCleanupTimeout());
    metrics.activeRules(rulesSha256);
  }

  private final List<java.util.function.BiConsumer<Summary, EvictionPlan>> syncListeners =
      new java.util.concurrent.CopyOnWriteArrayList<>();

  /**
   * Calls {@code listener} after each sync that read statistics (e.g. to move memcg thresholds).
   */
  public void addSyncListener(java.util.function.BiConsumer<Summary, EvictionPlan> listener) {
    syncListeners.add(listener);
  }

  /**
   * Takes the memory figures of the syncs the kernel triggers from {@code kernel} (before {@link
   * #start}), and reads the Summary at most once per its refresh ({@link SyncStats}).
   */
  public void kernelFigures(Supplier<Summary> kernel, String where) {
    syncStats = new SyncStats(stats, kernel, where, clock, metrics::summaryRead);
  }

  /** Adds a source of facts observed every sync (e.g. PSI averages). */
  public void addObservationSource(Supplier<List<?>> source) {
    observationSources.add(source);
  }

  /**
   * Starts the loop on a sync thread, where the planner runs the rules inline; should a stuck rule
   * make the watchdog abandon it, a new sync thread reports that sync and carries on.
   */
  public synchronized void start() {
    if (syncLoop == null) {
      running = true;
      syncLoop = SyncThread.startLoop("evictd-sync", this::loop);
    }
  }

  /**
   * Makes the loop wait for its triggers in {@code poll} (before {@link #start}): the memcg
   * notifiers made with it are polled by the sync thread, which reads a kernel event and syncs with
   * no hand-over from another thread; other threads' triggers wake it. The manager closes it.
   */
  public void waitOn(dev.evictd.linux.EventPoll poll) {
    eventPoll = poll;
  }

  /** Asks for a sync now; urgent triggers also end a wait for evicted pods. */
  public void trigger(String reason, boolean urgent) {
    offer(new Trigger(reason, urgent));
  }

  private void offer(Trigger t) {
    triggers.offer(t);
    dev.evictd.linux.EventPoll poll = eventPoll;
    if (poll != null) {
      SyncThread.Loop l = syncLoop;
      if (l == null || l.current() != Thread.currentThread()) {
        poll.wake(); // the loop's own triggers (a kernel event it read) need no wake-up
      }
    }
  }

  /**
   * The next trigger within {@code millis}, or null: from the queue, or, with an {@link #waitOn
   * event poll}, from the kernel events read while waiting in it (their handlers, on this thread,
   * queue them). Should the poll fail, the loop waits on the queue from then on (the notifiers it
   * polled report themselves unavailable: the agent polls).
   */
  private Trigger nextTrigger(long millis) throws InterruptedException {
    dev.evictd.linux.EventPoll poll = eventPoll;
    if (poll == null) {
      return triggers.poll(millis, TimeUnit.MILLISECONDS);
    }
    long end = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(millis);
    while (true) {
      Trigger t = triggers.poll();
      if (t != null) {
        return t;
      }
      if (Thread.interrupted()) {
        throw new InterruptedException();
      }
      long left = end - System.nanoTime();
      if (left <= 0) {
        return null;
      }
      try {
        poll.await(TimeUnit.NANOSECONDS.toMillis(left + 999_999));
      } catch (java.io.IOException e) {
        LOG.error("waiting for kernel events failed ({}); waiting for triggers only", e.toString());
        eventPoll = null;
        return triggers.poll(Math.max(0, end - System.nanoTime()), TimeUnit.NANOSECONDS);
      }
    }
  }

  /** Reads the kernel events that are ready now (with an event poll), without waiting. */
  private void kernelEventsNow() {
    dev.evictd.linux.EventPoll poll = eventPoll;
    if (poll != null) {
      try {
        poll.await(0);
      } catch (java.io.IOException e) {
        LOG.error("waiting for kernel events failed ({}); waiting for triggers only", e.toString());
        eventPoll = null;
      }
    }
  }

  /**
   * An event (e.g. a memcg threshold crossing) for the rules to see in the next sync, which it
   * triggers at once.
   */
  public void event(Object fact, String source, boolean urgent) {
    pendingFacts.add(fact);
    metrics.notifierEvent(source);
    trigger(source, urgent);
  }

  /** Swaps the rule set at the next sync boundary, keeping the planner's state. */
  public void swapRules(RuleSet rules) {
    pendingRules.set(rules);
    trigger("rules reloaded", false);
  }

  /**
   * Puts rule sets on probation: told about every sync that ran rules and every swap that failed.
   */
  public void setProbation(RuleProbation probation) {
    this.probation = probation;
  }

  /**
   * The statistics and pods of the last sync that read both (what a shadow sync runs on), or null.
   */
  public RuleProbation.Inputs lastInputs() {
    return lastInputs;
  }

  /** The SHA-256 of the active rule set. */
  public String rulesSha256() {
    return rulesSha256;
  }

  /** Whether the loop is alive and turning. */
  public boolean healthy() {
    Duration allowed =
        settings.interval().multipliedBy(3).plus(settings.podCleanupTimeout()).plusSeconds(30);
    return running && Duration.between(lastBeat, clock.instant()).compareTo(allowed) < 0;
  }

  /** Whether a sync has completed with statistics. */
  public boolean ready() {
    return ready;
  }

  /**
   * How old the last good statistics may be for the agent to be ready: three intervals, plus the
   * wait for evicted pods during which no sync runs.
   */
  Duration statsMaxAge() {
    return settings.interval().multipliedBy(3).plus(settings.podCleanupTimeout());
  }

  /**
   * Adds this loop's readiness conditions: {@code statistics} (read recently), {@code pods} (the
   * pod view has been listed) and {@code sync} (a sync has completed with both).
   */
  public void addReadinessConditions(Readiness readiness) {
    readiness.add(
        "statistics",
        () -> {
          Instant last = lastStatsRead;
          String failure = lastStatsFailure;
          if (last == null) {
            return "no statistics read yet" + (failure == null ? "" : ": " + failure);
          }
          Duration age = Duration.between(last, clock.instant());
          if (age.compareTo(statsMaxAge()) <= 0) {
            return null;
          }
          return "last statistics read "
              + age.toSeconds()
              + " s ago (limit "
              + statsMaxAge().toSeconds()
              + " s)"
              + (failure == null ? "" : ": " + failure);
        });
    readiness.add("pods", () -> pods.synced() ? null : "the node's pods have not been listed yet");
    readiness.add("sync", () -> ready ? null : "no sync has completed yet");
  }

  /** The time of the last completed sync, or null. */
  public Instant lastSync() {
    return lastSync;
  }

  /**
   * When a sync is repeated after the kernel (or the adaptive poll) signalled an upward memory
   * crossing but the sync found no memory threshold met, each delay counted from the sync before:
   * the statistics may have been read a moment before the charge that crossed the line showed in
   * them. The kernel keeps per-CPU deltas of its page counters and folds them into the totals when
   * a CPU's delta grows past a small threshold (which an allocation still under way soon does: the
   * first two re-checks), every second ({@code vm.stat_interval}) and, for memory cgroups'
   * statistics, at least every two seconds (the last two). So a crossing the first sync read a few
   * pages short of is decided within milliseconds while memory keeps growing, and within about 2 s
   * at worst, not at the next interval. The schedule ends at the first sync that finds a memory
   * threshold met; a new upward signal starts it again. At most four extra syncs per signal.
   */
  static final List<Duration> CROSSING_RECHECKS =
      List.of(
          Duration.ofMillis(20),
          Duration.ofMillis(80),
          Duration.ofMillis(1000),
          Duration.ofMillis(1000));

  /** How many refused decisions one sync logs one by one. */
  static final int MAX_LOGGED_REFUSALS = 20;

  /** The event source of memcg threshold crossings (upward ones are urgent). */
  public static final String MEMCG_SOURCE = "memcg";

  /** The sources whose urgent events are upward memory crossings (memcg, the adaptive poll). */
  static final java.util.Set<String> CROSSING_SOURCES =
      java.util.Set.of(MEMCG_SOURCE, dev.evictd.linux.MemoryPoll.SOURCE);

  private void loop() {
    if (started) {
      lostSyncRules = syncingRules;
      try {
        syncOnce("reporting the sync whose thread was abandoned"); // its outcome, then a new sync
      } catch (RuntimeException e) {
        LOG.error("sync failed unexpectedly: {}", e.toString(), e);
      }
    }
    trigger(started ? "sync thread replaced" : "start", started);
    started = true;
    Instant recheckAt = null; // the next re-check of an unconfirmed upward crossing, if any
    int rechecks = 0; // re-checks done for the current signal
    while (running) {
      try {
        lastBeat = clock.instant();
        long waitMillis = settings.interval().toMillis();
        // the wait ends at the re-check or at the interval, whichever comes first
        boolean waitEndsAtRecheck = false;
        if (recheckAt != null) {
          long untilRecheck = Math.max(0, Duration.between(clock.instant(), recheckAt).toMillis());
          waitEndsAtRecheck = untilRecheck <= waitMillis;
          waitMillis = Math.min(waitMillis, untilRecheck);
        }
        Trigger t = nextTrigger(waitMillis);
        if (!running) {
          break;
        }
        boolean dueRecheck = t == null && waitEndsAtRecheck;
        String reason =
            t != null ? t.reason() : dueRecheck ? "memory crossing re-checked" : "interval";
        List<Trigger> coalesced = paced();
        if (!coalesced.isEmpty()) {
          reason += " (+" + coalesced.size() + " coalesced)";
        }
        boolean upwardCrossing = t != null && t.urgent() && CROSSING_SOURCES.contains(t.reason());
        boolean byKernel =
            dueRecheck || (t != null && SyncStats.KERNEL_SOURCES.contains(t.reason()));
        for (Trigger c : coalesced) {
          upwardCrossing |= c.urgent() && CROSSING_SOURCES.contains(c.reason());
          byKernel |= SyncStats.KERNEL_SOURCES.contains(c.reason());
        }
        if (!running) {
          break;
        }
        headroom.beforeSync();
        pacing.started(System.nanoTime());
        SyncResult r = syncOnce(reason, byKernel);
        if (r.plan() != null && memoryThresholdMet(r.plan())) {
          recheckAt = null; // confirmed: the thresholds' own handling goes on from here
        } else if (upwardCrossing && r.plan() != null) {
          rechecks = 0;
          recheckAt = clock.instant().plus(CROSSING_RECHECKS.get(0));
        } else if (dueRecheck) {
          rechecks++;
          recheckAt =
              rechecks < CROSSING_RECHECKS.size()
                  ? clock.instant().plus(CROSSING_RECHECKS.get(rechecks))
                  : null;
        } // any other sync in between leaves the schedule as it was
        headroom.afterSync(
            () -> {
              kernelEventsNow(); // an event that came during the sync is queued now
              return !triggers.isEmpty() || !running;
            });
        EvictedPodsWait.waitFor(
            r,
            this::nextTrigger,
            triggers::offer,
            pods,
            clock,
            settings.podCleanupTimeout(),
            () -> running,
            this::beat);
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
        break;
      } catch (RuntimeException e) {
        // The running agent never dies of one bad sync.
        LOG.error("sync failed unexpectedly: {}", e.toString(), e);
      }
    }
  }

  /**
   * Waits until the next sync may start ({@link SyncPacing}), gathering the triggers that come
   * meanwhile; returns them with those already queued: one sync for them all.
   */
  private List<Trigger> paced() throws InterruptedException {
    List<Trigger> coalesced = new ArrayList<>();
    long wait;
    while (running && (wait = pacing.waitNanos(System.nanoTime())) > 0) {
      Trigger more = nextTrigger(TimeUnit.NANOSECONDS.toMillis(wait + 999_999));
      if (more != null) {
        coalesced.add(more);
      }
    }
    triggers.drainTo(coalesced);
    return coalesced;
  }

  private void beat() {
    lastBeat = clock.instant();
  }

  private static boolean memoryThresholdMet(EvictionPlan plan) {
    return plan.thresholds().stream()
        .anyMatch(
            s ->
                s.met()
                    && (s.threshold().signal() == Signal.MEMORY_AVAILABLE
                        || s.threshold().signal() == Signal.ALLOCATABLE_MEMORY_AVAILABLE));
  }

  /** Runs one sync now (the loop calls this; tests may too). */
  public SyncResult syncOnce(String reason) {
    return syncOnce(reason, false);
  }

  /** Runs one sync now; {@code byKernel}: the kernel asked for it (its figures are read). */
  SyncResult syncOnce(String reason, boolean byKernel) {
    syncing = true;
    try {
      return lock.call(() -> syncLocked(reason, byKernel));
    } finally {
      syncing = false;
    }
  }

  /**
   * Whether the loop has started and no sync runs or is asked for: background work ({@link
   * DecisionWarmUp}) goes on only then.
   */
  boolean idle() {
    return started && !syncing && triggers.isEmpty();
  }

  /** The planner (for the warm-up of its rules). */
  Planner planner() {
    return planner;
  }

  /** The loop's settings. */
  Settings settings() {
    return settings;
  }

  private SyncResult syncLocked(String reason, boolean byKernel) {
    Instant start = clock.instant();
    RuleSet swap = pendingRules.getAndSet(null);
    if (swap != null) {
      try {
        planner.swapRules(swap);
        rulesSha256 = swap.sha256();
        metrics.activeRules(rulesSha256);
        LOG.info("rules swapped at sync boundary: {} sha256 {}", swap.source(), swap.sha256());
      } catch (dev.evictd.api.RulesException e) {
        RuleProbation p = probation;
        if (p != null) {
          p.swapFailed(swap, e.getMessage());
        } else {
          LOG.error("rules not swapped in: {}", e.getMessage());
        }
      }
    }
    Summary summary;
    SyncStats.Read read;
    try {
      read = syncStats.read(byKernel);
      summary = read.summary();
      metrics.statsRead();
      lastStatsRead = clock.instant();
      lastStatsFailure = null;
    } catch (RuntimeException e) {
      // Like the kubelet: without statistics nothing is decided and no state changes.
      lastStatsFailure = e.getMessage();
      metrics.statsFailed();
      metrics.sync("skipped", Duration.between(start, clock.instant()), null);
      LOG.warn("sync skipped ({}): cannot read statistics: {}", reason, e.getMessage());
      return new SyncResult("skipped", null, List.of());
    }
    List<Pod> active;
    try {
      if (!pods.synced()) {
        // an empty view before the first list is not "no pods": decide nothing on it
        throw new IllegalStateException("the node's pods have not been listed yet");
      }
      active = pods.activePods();
    } catch (RuntimeException e) {
      metrics.sync("skipped", Duration.between(start, clock.instant()), null);
      LOG.warn("sync skipped ({}): cannot list pods: {}", reason, e.getMessage());
      return new SyncResult("skipped", null, List.of());
    }
    // kept for a shadow sync of the next rule set (pod sources hand out a new list each time)
    RuleProbation.Inputs before = lastInputs;
    summary = SummaryReuse.reusing(before == null ? null : before.summary(), summary);
    lastInputs = new RuleProbation.Inputs(start, summary, active);
    List<Object> facts = new ArrayList<>();
    Object f;
    while ((f = pendingFacts.poll()) != null) {
      facts.add(f);
    }
    for (Supplier<List<?>> src : observationSources) {
      try {
        facts.addAll(src.get());
      } catch (RuntimeException e) {
        LOG.warn("observation source failed: {}", e.getMessage());
      }
    }
    Instant rulesStart = clock.instant();
    int abandonedBefore = abandonedSeen;
    String ranRules = rulesSha256;
    String lost = lostSyncRules;
    if (lost != null) {
      ranRules = lost; // this sync's plan is the abandoned one's outcome
      lostSyncRules = null;
    }
    syncingRules = ranRules;
    RuleProbation running = probation;
    if (running != null) {
      running.running(ranRules);
    }
    EvictionPlan plan =
        read.sourced(planner.sync(start, summary, active, execution.hooks(), facts));
    Duration rulesTime = Duration.between(rulesStart, clock.instant());
    abandonedSeen = planner.abandonedRuleThreads();
    metrics.plan(plan);
    RuleProbation p = probation;
    if (p != null) {
      try {
        p.synced(ranRules, plan, abandonedSeen > abandonedBefore);
        if (!p.onProbation() && pendingRules.get() == null) {
          // the rules in use are trusted (no rollback is pending): no swap back restores state
          planner.forgetRollbackState();
        }
      } catch (RuntimeException e) {
        LOG.warn("rule probation failed: {}", e.toString());
      }
    }
    for (var l : syncListeners) {
      try {
        l.accept(summary, plan);
      } catch (RuntimeException e) {
        LOG.warn("sync listener failed: {}", e.toString());
      }
    }
    if (plan.failed()) {
      metrics.sync("failed", Duration.between(start, clock.instant()), rulesTime);
      LOG.error("sync {} ({}) failed, nothing evicted: {}", plan.seq(), reason, plan.failure());
      return new SyncResult("failed", plan, List.of());
    }
    SyncLog.sync(plan, reason, settings.logEverySync(), read);
    if (plan.signal() != null && !settings.dryRun()) {
      try {
        events.thresholdMet(plan.signal().resource());
      } catch (RuntimeException e) {
        LOG.warn("cannot record the node event: {}", e.getMessage());
      }
    }
    SyncLog.refusals(plan, metrics);
    execution.settleUnknownOutcomes();
    List<EvictionAttempt> attempts = new ArrayList<>();
    for (EvictionDecision d : plan.decisions()) {
      if (stopping) {
        LOG.warn("shutting down: {} not evicted", d.pod());
        continue;
      }
      EvictionAttempt a = execution.execute(d);
      if (a != null) {
        attempts.add(a);
      }
    }
    metrics.sync("ok", Duration.between(start, clock.instant()), rulesTime);
    lastSync = clock.instant();
    ready = true;
    return new SyncResult("ok", plan, attempts);
  }

  /** How long {@link #close} lets a request in flight finish before interrupting it. */
  static final Duration DRAIN = Duration.ofSeconds(5);

  /**
   * Stops the loop at once: no new sync, eviction, request or retry starts. A request in flight may
   * finish within {@link #DRAIN}; then it is interrupted (its outcome is FAILED) and the loop
   * thread ends.
   */
  @Override
  public void close() {
    // no lock here: syncOnce holds the monitor for a whole sync, and shutdown must not wait for it
    stopping = true;
    running = false;
    SyncThread.Loop l = syncLoop;
    Thread t = l == null ? null : l.current();
    offer(new Trigger("shutdown", true));
    if (t == Thread.currentThread()) {
      return;
    }
    if (t == null) {
      closeEventPoll();
      return;
    }
    try {
      t.join(DRAIN.toMillis());
      if (t.isAlive()) {
        LOG.warn("shutting down: interrupting the sync in flight after {} s", DRAIN.toSeconds());
        t.interrupt();
        t.join(TimeUnit.SECONDS.toMillis(2));
      }
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
    closeEventPoll();
  }

  private void closeEventPoll() {
    dev.evictd.linux.EventPoll poll = eventPoll;
    if (poll != null) {
      poll.close(); // waits for an await still in progress (a loop thread that did not end)
    }
  }
}
