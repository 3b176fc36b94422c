package dev.evictd.agent;

import dev.evictd.api.EvictdException;
import dev.evictd.api.EvictionAttempt;
import dev.evictd.api.EvictionConfig;
import dev.evictd.api.EvictionDecision;
import dev.evictd.api.EvictionMethod;
import dev.evictd.api.EvictionOutcome;
import dev.evictd.api.EvictionPlan;
import dev.evictd.engine.DecisionGuard;
import dev.evictd.engine.Planner;
import dev.evictd.engine.PlannerHooks;
import dev.evictd.engine.RuleSet;
import dev.evictd.engine.SyncBudget;
import dev.evictd.engine.SyncThread;
import dev.evictd.stats.Summary;
import java.lang.management.ManagementFactory;
import java.lang.management.ThreadMXBean;
import java.time.Clock;
import java.time.Duration;
import java.util.List;
import java.util.Locale;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.function.BooleanSupplier;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The agent's warm-up of the decision path: a few hundred syncs of a compiled rule set on a scratch
 * planner of its own, on synthetic inputs derived from the node's eviction configuration ({@link
 * WarmUpInputs}: quiet and memory-pressure syncs in turn, so the same threshold, rank, selection
 * and decide rules fire as in a real pressure sync), so that the JIT has compiled that path before
 * the first real memory pressure instead of during it. Every plan is discarded: nothing is evicted,
 * no API call, kernel action, metric or event is made, and the live planner's session is not
 * touched (the scratch planner shares only the compiled rule set); the scratch session is closed at
 * the end and nothing of it is kept.
 *
 * <p>The scratch syncs run as the real ones do, inline on a {@link SyncThread} of their own (the
 * {@code evictd-warmup} thread) under the watchdog and the planner's {@link SyncBudget}, its time
 * limit lowered to the warm-up's bound: a rule set that throws, loops or overruns a limit ends the
 * warm-up with a warning; one stuck in a consequence has its thread abandoned, as a real sync's
 * would be (counted in the agent's abandoned rule threads while it runs).
 *
 * <p>It never holds up a real sync: before each scratch sync it waits until the manager's loop is
 * idle (no sync running, none asked for), and a trigger arriving during one is served at once on
 * the sync thread, beside at most the rest of that one scratch sync. It ends after {@link #SYNCS}
 * syncs, or when its thread has used its CPU bound, or {@link #WALL_BOUND} after it started.
 */
public final class DecisionWarmUp implements AutoCloseable {
  private static final Logger LOG = LoggerFactory.getLogger(DecisionWarmUp.class);

  /** When warm-ups run (the agent's {@code rulesWarmUp}). */
  public enum When {
    /**
     * After the first sync whose memory signal is near a threshold ({@link #near}), for each rule
     * set once; a set reloaded while the last sync was near is warmed up before it goes live.
     */
    NEAR,
    /** After start-up, and before every reloaded set goes live. */
    START,
    /** Never. */
    OFF;

    /** The setting's value: near, start or off. */
    public static When of(String setting) {
      return valueOf(setting.toUpperCase(Locale.ROOT));
    }
  }

  /** The CPU time one warm-up may use. */
  public static final Duration CPU_BOUND = Duration.ofSeconds(1);

  /**
   * Scratch syncs per warm-up: the pressure path's methods reach the compile thresholds after about
   * 250 pressure syncs (the bench's e2d part: still compiling around its 100th-250th crossing).
   */
  static final int SYNCS = 600;

  /** A warm-up ends this long after it started, however far it got (a busy loop defers it). */
  static final Duration WALL_BOUND = Duration.ofSeconds(30);

  /** How often a warm-up that waits for the loop to be idle looks again. */
  private static final long IDLE_POLL_MILLIS = 5;

  private static final ThreadMXBean THREADS = ManagementFactory.getThreadMXBean();

  /** No node-level reclaim is ever run for a scratch sync, and nothing is read after it. */
  private static final PlannerHooks NO_RECLAIM =
      new PlannerHooks() {
        @Override
        public boolean reclaim(dev.evictd.api.ReclaimAction action) {
          return false;
        }

        @Override
        public Summary summaryAfterReclaim() {
          return null;
        }
      };

  /**
   * How a warm-up ended.
   *
   * @param syncs scratch syncs run
   * @param pressureSyncs of them, those with a memory threshold met
   * @param decided of them, those whose plan decided an eviction (discarded)
   * @param cpu the warm-up thread's CPU time
   * @param wall from its start to its end
   * @param stopped why it stopped early (a rule failure, the agent stopping, its bounds); null when
   *     it ran all its syncs
   * @param warning whether that is a problem of the rules (logged as a warning)
   */
  public record Result(
      int syncs,
      int pressureSyncs,
      int decided,
      Duration cpu,
      Duration wall,
      String stopped,
      boolean warning) {}

  private final When when;
  private final EvictionConfig config;
  private final SyncBudget budget;
  private final DecisionGuard.Limits limits;
  private final Duration podCleanupTimeout;
  private final Duration cpuBound;
  private final BooleanSupplier idle;
  private final java.util.function.Supplier<RuleSet> activeRules;
  private final Clock clock;
  private final List<Planner> stuck = new CopyOnWriteArrayList<>();
  private volatile Run current;
  private volatile String warmedSha; // the set warmed up last (started)
  private volatile boolean lastNear; // whether the last sync's memory was near a threshold
  private volatile boolean closed;

  /**
   * The warm-ups of {@code manager}'s rule sets, on its planner's configuration, budget and guard
   * limits, each using at most {@link #CPU_BOUND} of CPU time, run {@code when}. The manager's sync
   * listener {@link #synced} starts the near ones; {@link #started} the one at start.
   */
  public DecisionWarmUp(EvictionManager manager, When when) {
    this(manager, when, CPU_BOUND);
  }

  /** The same with another CPU bound (tests of a whole warm-up, which a slow host must not end). */
  DecisionWarmUp(EvictionManager manager, When when, Duration cpuBound) {
    this(
        when,
        manager.planner().config(),
        manager.planner().budget(),
        manager.planner().limits(),
        manager.settings().podCleanupTimeout(),
        cpuBound,
        manager::idle,
        manager.planner()::rules,
        Clock.systemUTC());
  }

  DecisionWarmUp(
      When when,
      EvictionConfig config,
      SyncBudget budget,
      DecisionGuard.Limits limits,
      Duration podCleanupTimeout,
      Duration cpuBound,
      BooleanSupplier idle,
      java.util.function.Supplier<RuleSet> activeRules,
      Clock clock) {
    this.when = when;
    this.config = config;
    this.budget = budget;
    this.limits = limits;
    this.podCleanupTimeout = podCleanupTimeout;
    this.cpuBound = cpuBound;
    this.idle = idle;
    this.activeRules = activeRules;
    this.clock = clock;
  }

  /** The loop has started: warms up its rules now when run at start. */
  public void started() {
    if (when == When.START) {
      start(activeRules.get());
    }
  }

  /**
   * After each sync (the manager's sync listener, on the sync thread; cheap): when run near a
   * threshold, a sync whose memory signal is near one starts the warm-up of the rules in use, once
   * per rule set.
   */
  public void synced(Summary summary, EvictionPlan plan) {
    boolean near = near(config, plan);
    lastNear = near;
    if (when != When.NEAR || !near || current != null) {
      return;
    }
    RuleSet rs = activeRules.get();
    if (!rs.sha256().equals(warmedSha)) {
      start(rs);
    }
  }

  /**
   * Whether a sync's memory is near a threshold of {@code config}: for some memory signal, what is
   * available is above the threshold by less than the threshold itself or a tenth of the capacity,
   * whichever is more (e.g. below 1.7 GiB on a 16 GiB node with the kubelet's 100Mi; 20 % with a
   * threshold of 10 %), or at or below it.
   */
  static boolean near(EvictionConfig config, EvictionPlan plan) {
    if (plan == null) {
      return false;
    }
    for (dev.evictd.api.Observation o : plan.observations()) {
      if (o.signal() != dev.evictd.api.Signal.MEMORY_AVAILABLE
          && o.signal() != dev.evictd.api.Signal.ALLOCATABLE_MEMORY_AVAILABLE) {
        continue;
      }
      for (dev.evictd.api.Threshold t : config.thresholds()) {
        if (t.signal() == o.signal()) {
          long line = t.quantity(o.capacity()).value();
          if (o.available() - line < Math.max(line, o.capacity() / 10)) {
            return true;
          }
        }
      }
    }
    return false;
  }

  /**
   * Starts warming up {@code rules} on its own thread (a warm-up still running stops); returns the
   * run, or null when warm-ups are off or this is closed.
   */
  public Run start(RuleSet rules) {
    if (when == When.OFF || closed) {
      return null;
    }
    Run before = current;
    if (before != null) {
      before.stop = true;
    }
    Run r = new Run(rules);
    current = r;
    warmedSha = rules.sha256();
    r.loop = SyncThread.startLoop("evictd-warmup", r::body);
    return r;
  }

  /** The warm-up running now, or null. */
  public Run current() {
    return current;
  }

  /**
   * A reloaded set, before it is handed over (on the rules reloader's thread, which waits for it at
   * most its bounds): warmed up when run at start, or near a threshold as of the last sync (else
   * the next near sync warms it up once it is in use).
   */
  void warmBeforeSwap(RuleSet rules) {
    if (when == When.START || (when == When.NEAR && lastNear)) {
      Run r = start(rules);
      if (r != null) {
        r.await(WALL_BOUND.plus(budget.time()));
      }
    }
  }

  /** Abandoned threads of scratch syncs that are still running (the agent's health counts them). */
  public int threadsAlive() {
    stuck.removeIf(p -> p.aliveAbandonedRuleThreads() == 0);
    int n = 0;
    for (Planner p : stuck) {
      n += p.aliveAbandonedRuleThreads();
    }
    return n;
  }

  /** Stops the warm-up running (at its next scratch sync); starts none from now on. */
  @Override
  public void close() {
    closed = true;
    Run r = current;
    if (r != null) {
      r.stop = true;
    }
  }

  /** One warm-up of one rule set. */
  public final class Run {
    private final RuleSet rules;
    private final CountDownLatch done = new CountDownLatch(1);
    private volatile Result result;
    private volatile boolean stop;
    private volatile boolean began;
    private volatile Planner scratch;
    private volatile java.lang.ref.WeakReference<Planner> made =
        new java.lang.ref.WeakReference<>(null);
    private volatile long startNanos;
    private volatile int syncs;
    private volatile int pressureSyncs;
    private volatile int decided;
    private volatile long cpuNanos;
    private SyncThread.Loop loop;

    private Run(RuleSet rules) {
      this.rules = rules;
    }

    /** How it ended; waits for that at most {@code timeout} (null when still running). */
    public Result await(Duration timeout) {
      try {
        done.await(timeout.toNanos(), TimeUnit.NANOSECONDS);
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
      }
      return result;
    }

    /** The scratch planner, weakly: it is garbage once the warm-up ended (tests). */
    java.lang.ref.WeakReference<Planner> scratchMade() {
      return made;
    }

    /** Scratch syncs run so far. */
    int syncsSoFar() {
      return syncs;
    }

    /** The threads that ran it: more than one when the watchdog abandoned one (tests). */
    int threads() {
      return loop == null ? 0 : loop.replacements() + 1;
    }

    /**
     * On the warm-up's sync thread; run again on a new one when the watchdog abandoned the one
     * before in a scratch sync (a rule stuck in Java): that one never comes back here.
     */
    private void body() {
      if (began) {
        Planner p = scratch;
        scratch = null;
        if (p != null) {
          if (p.aliveAbandonedRuleThreads() > 0) {
            stuck.add(p);
          }
          p.close();
        }
        end("a rule did not stop: its thread is abandoned", true);
        return;
      }
      began = true;
      startNanos = System.nanoTime();
      try {
        run();
      } catch (RuntimeException e) {
        Planner p = scratch;
        scratch = null;
        if (p != null) {
          p.close();
        }
        end("failed: " + e, true);
      }
    }

    private void run() {
      WarmUpInputs inputs = WarmUpInputs.of(config, clock.instant());
      if (inputs == null) {
        end("the configuration has no memory threshold", false);
        return;
      }
      long cpuStart = THREADS.getCurrentThreadCpuTime();
      Duration limit = budget.time().compareTo(cpuBound) < 0 ? budget.time() : cpuBound;
      Planner p;
      try {
        p = new Planner(rules, config, budget.withTime(limit), limits);
      } catch (EvictdException e) {
        end("the scratch session did not open: " + e.getMessage(), true);
        return;
      }
      scratch = p;
      made = new java.lang.ref.WeakReference<>(p);
      p.podCleanupTimeout(podCleanupTimeout);
      long wallEnd = startNanos + WALL_BOUND.toNanos();
      String stopped = null;
      boolean warning = false;
      while (syncs < SYNCS) {
        cpuNanos = THREADS.getCurrentThreadCpuTime() - cpuStart;
        if (stop || closed) {
          stopped = "stopped";
          break;
        }
        if (cpuNanos >= cpuBound.toNanos()) {
          stopped = "its CPU bound of " + millis(cpuBound.toNanos()) + " was reached";
          break;
        }
        if (System.nanoTime() - wallEnd >= 0) {
          stopped = "it was still deferring to real syncs after " + WALL_BOUND.toSeconds() + " s";
          break;
        }
        if (!idle.getAsBoolean()) {
          try {
            Thread.sleep(IDLE_POLL_MILLIS);
          } catch (InterruptedException e) {
            stopped = "interrupted";
            break;
          }
          continue;
        }
        WarmUpInputs.Step s = inputs.step(syncs);
        EvictionPlan plan = p.sync(s.at(), s.summary(), s.pods(), NO_RECLAIM, s.extra());
        syncs++;
        if (s.pressure()) {
          pressureSyncs++;
        }
        if (plan.failed()) {
          stopped = "scratch sync " + syncs + " failed: " + plan.failure();
          warning = true;
          break;
        }
        if (!plan.decisions().isEmpty()) {
          decided++;
        }
        // as the agent's dry run records what it would have done (in the scratch session only)
        for (EvictionDecision d : plan.decisions()) {
          p.recordAttempt(
              new EvictionAttempt(
                  d.pod(),
                  d.signal(),
                  EvictionMethod.DRY_RUN,
                  EvictionOutcome.DRY_RUN,
                  s.at(),
                  ""));
        }
      }
      cpuNanos = THREADS.getCurrentThreadCpuTime() - cpuStart;
      scratch = null;
      p.close();
      end(stopped, warning);
    }

    private void end(String stopped, boolean warning) {
      Result r =
          new Result(
              syncs,
              pressureSyncs,
              decided,
              Duration.ofNanos(cpuNanos),
              Duration.ofNanos(System.nanoTime() - startNanos),
              stopped,
              warning);
      result = r;
      if (current == this) {
        current = null;
      }
      done.countDown();
      String what =
          String.format(
              Locale.ROOT,
              "rules warm-up of sha256 %s: %d scratch syncs (%d under memory pressure, %d"
                  + " deciding) in %s, CPU %s, nothing kept",
              rules.sha256(),
              r.syncs(),
              r.pressureSyncs(),
              r.decided(),
              millis(r.wall().toNanos()),
              millis(r.cpu().toNanos()));
      if (warning) {
        LOG.warn("{}; stopped early: {}", what, stopped);
      } else if (stopped != null) {
        LOG.info("{}; ended early: {}", what, stopped);
      } else {
        LOG.info("{}", what);
      }
    }
  }

  private static String millis(long nanos) {
    return String.format(Locale.ROOT, "%d ms", TimeUnit.NANOSECONDS.toMillis(nanos));
  }
}
