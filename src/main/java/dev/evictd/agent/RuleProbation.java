package dev.evictd.agent;

import dev.evictd.api.EvictdException;
import dev.evictd.api.EvictionConfig;
import dev.evictd.api.EvictionPlan;
import dev.evictd.engine.RuleSet;
import dev.evictd.engine.RuleSource;
import dev.evictd.ruleset.RuleCompiler;
import java.nio.file.Path;
import java.time.Clock;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.function.Function;
import java.util.function.Supplier;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Rule sets on probation: a new set (a hot reload, or the configured set at start when it is not
 * the last one trusted) must first run cleanly on the last captured inputs — a shadow sync on a
 * planner of its own, which never touches the live session — and then for a number of real syncs
 * before it is trusted. One that fails at run time meanwhile (a rule that throws, overruns its
 * budget, leaves a stuck thread, or what another check reports, e.g. refused decisions) is replaced
 * by the last trusted set, or the packaged default rules when there is none; the failure is logged,
 * counted ({@code evictd_rule_reloads_total{result="rolled_back"}}) and the set's SHA-256 is
 * remembered as bad in the state directory, so it is not loaded again until its content changes. A
 * trusted set that leaves a stuck rule thread behind, or fails as many syncs in a row as probation
 * lasts, is remembered as bad and replaced too (by the set trusted before it, or the packaged
 * rules).
 */
public final class RuleProbation {
  private static final Logger LOG = LoggerFactory.getLogger(RuleProbation.class);

  /** Reload results, as counted in {@code evictd_rule_reloads_total{result}}. */
  public static final String LOADED = "loaded";

  /** The set passed its probation. */
  public static final String TRUSTED = "trusted";

  /** The set failed at run time on probation (or left a stuck thread) and was replaced. */
  public static final String ROLLED_BACK = "rolled_back";

  /** The set compiled but was not loaded: known bad, or its shadow sync failed. */
  public static final String REJECTED = "rejected";

  /** The set did not compile (lint, pin, ownership or a compile error). */
  public static final String FAILED = "failed";

  /** A change was seen but the rule set is the one already loaded. */
  public static final String UNCHANGED = "unchanged";

  /** The inputs of the last sync that read statistics: what a shadow sync runs on. */
  public record Inputs(
      java.time.Instant at,
      dev.evictd.stats.Summary summary,
      List<io.fabric8.kubernetes.api.model.Pod> pods) {}

  private final int syncs;
  private final RuleStateStore store;
  private final ShadowSync shadow;
  private final Supplier<RuleSet> packagedDefault;
  private final Function<List<RuleSource>, RuleSet> compileSaved;
  private final Clock clock;
  private final List<Function<EvictionPlan, String>> checks = new CopyOnWriteArrayList<>();
  private final java.util.function.Consumer<String> count;
  private java.util.function.Consumer<RuleSet> swap = rs -> {};
  private volatile java.util.function.Consumer<RuleSet> beforeSwap = rs -> {};

  private RuleSet trusted;
  private Path trustedDir;
  private RuleSet candidate;
  private Path candidateDir;
  private int clean;
  private RuleSet defaults;
  private RuleSet previousTrusted;
  private int trustedFailures;
  private String packagedSha;

  /**
   * @param syncs how many clean real syncs a new set needs to be trusted
   * @param store the state directory
   * @param config the node's eviction configuration (for shadow syncs)
   * @param packagedDefault compiles the packaged default rules (called at most once, when needed)
   * @param compileSaved compiles the sources of the last trusted set saved in the state directory
   * @param count counts a reload result (one of the constants here)
   * @param clock when a set is remembered as bad
   */
  public RuleProbation(
      int syncs,
      RuleStateStore store,
      EvictionConfig config,
      Supplier<RuleSet> packagedDefault,
      Function<List<RuleSource>, RuleSet> compileSaved,
      java.util.function.Consumer<String> count,
      Clock clock) {
    this.syncs = syncs;
    this.store = store;
    this.shadow = new ShadowSync(config);
    this.packagedDefault = packagedDefault;
    this.compileSaved = compileSaved;
    this.count = count;
    this.clock = clock;
    checks.add(p -> p.failed() ? p.failure() : null);
    checks.add(RuleProbation::refusedDecisions);
  }

  /** Where rollbacks and trusted sets are handed over (the manager's swap at a sync boundary). */
  public synchronized void onSwap(java.util.function.Consumer<RuleSet> swap) {
    this.swap = swap;
  }

  /**
   * What is done with an admitted set before it is handed over, on the admitting thread (the
   * decision path's warm-up).
   */
  public void beforeSwap(java.util.function.Consumer<RuleSet> work) {
    this.beforeSwap = work;
  }

  /**
   * Adds a run-time check: a reason to roll a set on probation back when a plan of it shows one
   * (null when the plan is fine). A plan that failed is always one.
   */
  public void addCheck(Function<EvictionPlan, String> check) {
    checks.add(check);
  }

  /**
   * The run-time check for decisions the decision guard refused: a set on probation that aims at a
   * pod outside this node's active list, a critical pod, or uses a method, signal or grace period
   * outside its bounds is rolled back. Duplicates and exempt pods are not counted: they are the
   * bookkeeping the guard always did, not a sign of a bad set.
   *
   * @return the reason naming the first such refusal and its rule, or null
   */
  public static String refusedDecisions(EvictionPlan plan) {
    for (EvictionPlan.RefusedDecision r : plan.refused()) {
      if (r.reason() != EvictionPlan.Refusal.DUPLICATE
          && r.reason() != EvictionPlan.Refusal.EXEMPT) {
        return "decision refused ("
            + r.reason().label()
            + ") for "
            + r.pod()
            + " by rule "
            + r.rule();
      }
    }
    return null;
  }

  /** The rule set loaded at start: trusted at once when it is the default or the last trusted. */
  public synchronized void started(RuleSet rules, Path dir) {
    RuleStateStore.LastGood last = store.lastGood();
    if (dir == null || (last != null && last.sha256().equals(rules.sha256()))) {
      trusted = rules;
      trustedDir = dir;
      candidate = null;
      return;
    }
    candidate = rules;
    candidateDir = dir;
    clean = 0;
    LOG.info(
        "rules {} sha256 {} on probation for {} syncs (fallback: {})",
        rules.source(),
        rules.sha256(),
        syncs,
        last != null ? "the last trusted set " + last.sha256() : "the packaged default rules");
  }

  /** Whether a set is on probation now. */
  /**
   * Records on disk, before the rules with this SHA-256 run a sync, that they run and whether they
   * are on probation ({@link RuleStateStore#running}): a set that takes the process down is then
   * not trusted again after the restart.
   */
  public void running(String sha256) {
    boolean onProbation;
    synchronized (this) {
      onProbation = candidate != null && candidate.sha256().equals(sha256);
    }
    store.running(sha256 == null || sha256.equals(packagedSha()) ? null : sha256, onProbation);
  }

  /** The agent stops cleanly ({@link RuleStateStore#stoppedCleanly}). */
  public void stoppedCleanly() {
    store.stoppedCleanly();
  }

  public synchronized boolean onProbation() {
    return candidate != null;
  }

  /** Why the set is known bad, or null: such a set is not loaded again. */
  public String knownBad(String sha256) {
    RuleStateStore.BadRuleSet b = store.bad(sha256);
    return b == null ? null : b.reason() + " (at " + b.at() + ")";
  }

  /**
   * Decides about a newly compiled set (on the reloader's thread): refuses a known bad one, runs
   * the shadow sync on {@code inputs} (skipped when there are none yet), and on success puts the
   * set on probation and hands it over. Returns the result counted.
   */
  public String admit(RuleSet rs, Path dir, Inputs inputs) {
    String bad = knownBad(rs.sha256());
    if (bad != null) {
      LOG.error(
          "rules reload from {} refused: sha256 {} failed on this node before ({}); it is not"
              + " loaded again until its content changes",
          dir,
          rs.sha256(),
          bad);
      count.accept(REJECTED);
      return REJECTED;
    }
    if (inputs == null) {
      LOG.info("no captured inputs yet: {} skips the shadow sync", rs.sha256());
    } else {
      String failure = shadowSync(rs, inputs);
      if (failure != null) {
        LOG.error(
            "rules reload from {} refused: sha256 {} failed its shadow sync on the last captured"
                + " inputs ({}): {}; the running rules stay",
            dir,
            rs.sha256(),
            inputs.at(),
            failure);
        store.markBad(rs.sha256(), "shadow sync failed: " + failure, clock.instant());
        count.accept(REJECTED);
        return REJECTED;
      }
    }
    try {
      beforeSwap.accept(rs);
    } catch (RuntimeException e) {
      LOG.warn("before handing over {}: {}", rs.sha256(), e.toString());
    }
    java.util.function.Consumer<RuleSet> to;
    synchronized (this) {
      if (trusted == null && candidate != null) {
        // the set on probation is replaced before it was trusted: fall back to the defaults
        fallback();
      }
      candidate = rs;
      candidateDir = dir;
      clean = 0;
      to = swap;
    }
    LOG.info(
        "rules reloaded from {}: sha256 {}, on probation for {} syncs", dir, rs.sha256(), syncs);
    count.accept(LOADED);
    to.accept(rs);
    return LOADED;
  }

  /** The budget of shadow syncs (the live planner's by default; tests shorten it). */
  void shadowBudget(dev.evictd.engine.SyncBudget budget) {
    shadow.budget(budget);
  }

  /**
   * Shadow syncs judge decisions as the live planner does: its guard's limits (the allowed methods)
   * and its pod cleanup timeout.
   */
  public void shadowPlanner(
      dev.evictd.engine.DecisionGuard.Limits limits, java.time.Duration podCleanupTimeout) {
    shadow.planner(limits, podCleanupTimeout);
  }

  /** Runs the set once on a planner of its own; returns why it failed, or null. */
  String shadowSync(RuleSet rs, Inputs inputs) {
    return shadow.run(rs, inputs, this::problem);
  }

  private String problem(EvictionPlan plan) {
    for (Function<EvictionPlan, String> c : checks) {
      String r;
      try {
        r = c.apply(plan);
      } catch (RuntimeException e) {
        r = "run-time check failed: " + e;
      }
      if (r != null) {
        return r;
      }
    }
    return null;
  }

  /** Abandoned rule threads of shadow syncs that are still running. */
  public int shadowThreadsAlive() {
    return shadow.threadsAlive();
  }

  /**
   * A sync ran rules {@code sha256} (on the sync thread); {@code newlyStuck} tells whether it left
   * an abandoned thread behind.
   */
  public void synced(String sha256, EvictionPlan plan, boolean newlyStuck) {
    String result = null;
    RuleSet to = null;
    java.util.function.Consumer<RuleSet> handOver;
    Path saveDir = null;
    synchronized (this) {
      handOver = swap;
      boolean isCandidate = candidate != null && candidate.sha256().equals(sha256);
      boolean isTrusted = !isCandidate && trusted != null && trusted.sha256().equals(sha256);
      // a trusted set fails only by failed plans: refused decisions are held against a set on
      // probation (the guard drops them either way)
      String trustedFailure = isTrusted && plan.failed() ? plan.failure() : null;
      if (isTrusted && trustedFailure == null) {
        trustedFailures = 0;
      } else if (isTrusted && (newlyStuck || ++trustedFailures >= syncs)) {
        // a trusted set that leaves a stuck thread, or fails as many syncs in a row as probation
        // lasts, is not trusted any more: eviction must not stay off
        String reason =
            newlyStuck
                ? "a rule thread did not stop: " + trustedFailure
                : trustedFailures + " syncs in a row failed: " + trustedFailure;
        if (sha256.equals(packagedSha())) {
          LOG.error("the packaged default rules failed: {}", reason);
          return;
        }
        store.markBad(sha256, reason, clock.instant());
        RuleSet previous = previousTrusted;
        if (previous != null && store.bad(previous.sha256()) != null) {
          previous = null;
        }
        try {
          to = previous != null ? previous : defaults();
        } catch (EvictdException e) {
          LOG.error("the packaged default rules do not load: {}", e.getMessage());
          return;
        }
        if (candidate != null) {
          // the failure is the report of the trusted set's last sync, after the set on probation
          // was handed over: that set carries on, with this one as its fallback
          LOG.error(
              "trusted rules {} sha256 {} not loaded again until their content changes; rules {}"
                  + " sha256 {} stay on probation, falling back to {} ({}): {}",
              trusted.source(),
              sha256,
              candidate.source(),
              candidate.sha256(),
              to.source(),
              to.sha256(),
              reason);
        } else {
          LOG.error(
              "trusted rules {} sha256 {} rolled back to {} ({}) and not loaded again until their"
                  + " content changes: {}",
              trusted.source(),
              sha256,
              to.source(),
              to.sha256(),
              reason);
        }
        trusted = to;
        trustedDir = null;
        previousTrusted = null;
        trustedFailures = 0;
        result = ROLLED_BACK;
        if (candidate != null) {
          to = null; // nothing to swap in: the set on probation is in use or about to be
        }
      } else if (isCandidate) {
        String failure = problem(plan);
        if (failure == null && newlyStuck) {
          failure = "a rule thread did not stop";
        }
        if (failure != null) {
          store.markBad(sha256, failure, clock.instant());
          try {
            to = fallback();
          } catch (EvictdException e) {
            LOG.error(
                "rules {} sha256 {} failed on probation ({}) but nothing can replace them: {}",
                candidate.source(),
                sha256,
                failure,
                e.getMessage());
            candidate = null;
            return;
          }
          LOG.error(
              "rules {} sha256 {} rolled back after {} clean syncs of {} on probation to the"
                  + " trusted set from {} (sha256 {}): {}",
              candidate.source(),
              sha256,
              clean,
              syncs,
              to.source(),
              to.sha256(),
              failure);
          candidate = null;
          result = ROLLED_BACK;
        } else if (++clean >= syncs) {
          if (trusted != null && !trusted.sha256().equals(candidate.sha256())) {
            previousTrusted = trusted;
          }
          trusted = candidate;
          trustedDir = candidateDir;
          trustedFailures = 0;
          candidate = null;
          LOG.info(
              "rules {} sha256 {} trusted after {} clean syncs", trusted.source(), sha256, clean);
          result = TRUSTED;
          if (trustedDir != null) {
            saveDir = trustedDir;
          }
        }
      }
    }
    if (saveDir != null) {
      try {
        store.saveLastGood(sha256, RuleCompiler.read(saveDir));
      } catch (EvictdException e) {
        LOG.warn("cannot save the trusted rules from {}: {}", saveDir, e.getMessage());
      }
    }
    if (result != null) {
      count.accept(result);
    }
    if (to != null) {
      handOver.accept(to);
    }
  }

  /**
   * A set could not be swapped in (loading the live facts into it failed); the planner keeps the
   * rules it had.
   */
  public void swapFailed(RuleSet rs, String failure) {
    synchronized (this) {
      if (candidate != null && candidate.sha256().equals(rs.sha256())) {
        candidate = null;
      }
    }
    store.markBad(rs.sha256(), "loading the facts failed: " + failure, clock.instant());
    LOG.error("rules {} sha256 {} not swapped in: {}", rs.source(), rs.sha256(), failure);
    count.accept(REJECTED);
  }

  /**
   * The set a failing candidate is replaced by: the trusted one, else the last trusted set saved in
   * the state directory, else the packaged defaults.
   */
  private RuleSet fallback() {
    if (trusted != null) {
      return trusted;
    }
    RuleSet saved = lastGood(store, compileSaved);
    trusted = saved != null ? saved : defaults();
    trustedDir = null;
    return trusted;
  }

  /** The last trusted set saved in the state directory, when it is not bad and loads; or null. */
  private static RuleSet lastGood(
      RuleStateStore store, Function<List<RuleSource>, RuleSet> compileSaved) {
    RuleStateStore.LastGood last = store.lastGood();
    if (last == null || store.bad(last.sha256()) != null) {
      return null;
    }
    try {
      RuleSet rs = compileSaved.apply(last.sources());
      if (rs.sha256().equals(last.sha256())) {
        return rs;
      }
    } catch (EvictdException e) {
      LOG.warn("the last trusted set in {} does not load: {}", store.dir(), e.getMessage());
    }
    return null;
  }

  /** The SHA-256 of the packaged default rules (read, not compiled). */
  private String packagedSha() {
    if (packagedSha == null) {
      packagedSha = RuleCompiler.sha256(RuleCompiler.readDefault());
    }
    return packagedSha;
  }

  private RuleSet defaults() {
    if (defaults == null) {
      defaults = packagedDefault.get();
    }
    return defaults;
  }

  /** The trusted set, or null while none is (for tests and health). */
  public synchronized RuleSet trusted() {
    return trusted;
  }

  /**
   * The set to start with: the configured set unless it is known bad, else the last trusted set
   * saved in the state directory (when it compiles to the same SHA-256 and is not bad itself), else
   * the packaged default rules; logs why.
   *
   * @param compileSaved compiles saved sources (with the agent's options)
   */
  public static RuleSet choose(
      RuleSet configured,
      RuleStateStore store,
      Function<List<RuleSource>, RuleSet> compileSaved,
      Supplier<RuleSet> packagedDefault) {
    RuleStateStore.BadRuleSet bad = store.bad(configured.sha256());
    if (bad == null) {
      return configured;
    }
    String why =
        "rules "
            + configured.source()
            + " sha256 "
            + configured.sha256()
            + " failed on this node before ("
            + bad.reason()
            + ", at "
            + bad.at()
            + ") and are not loaded again until their content changes";
    RuleSet saved = lastGood(store, compileSaved);
    if (saved != null) {
      LOG.error("{}; using the last trusted set sha256 {}", why, saved.sha256());
      return saved;
    }
    LOG.error("{}; using the packaged default rules", why);
    return packagedDefault.get();
  }
}
