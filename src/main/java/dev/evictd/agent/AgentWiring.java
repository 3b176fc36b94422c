package dev.evictd.agent;

import dev.evictd.api.EvictionConfig;
import dev.evictd.api.FsLayout;
import dev.evictd.config.GoDuration;
import dev.evictd.engine.Planner;
import dev.evictd.engine.RuleSet;
import dev.evictd.kube.NodeTaints;
import dev.evictd.linux.Cgroups;
import dev.evictd.linux.HostPaths;
import dev.evictd.linux.NotifierFactory;
import dev.evictd.linux.PsiReader;
import dev.evictd.linux.PsiTrigger;
import dev.evictd.ports.NodeReclaimer;
import dev.evictd.ports.PodSource;
import dev.evictd.ruleset.RuleCompiler;
import java.time.Clock;
import java.time.Duration;
import java.util.List;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The wiring steps of {@link Agent}'s start-up that run on its start-up thread once the pods and
 * the filesystem layout are known: the planner, the rules' probation, the manager with its
 * readiness, taints, the rule-thread and pod-view watches, the kernel event sources and the rules'
 * hot reload, then the loop. Everything opened is owned by the agent.
 */
final class AgentWiring {
  // the agent's logger: these are the agent's start-up lines, under the name they always had
  private static final Logger LOG = LoggerFactory.getLogger(Agent.class);

  private AgentWiring() {}

  /**
   * Wiring step, on the start-up thread: the planner, the rules' probation, the manager with its
   * readiness, taints, the event sources and the rules' hot reload, then the loop.
   */
  static EvictionManager startLoop(
      AgentConfig c,
      Clock clock,
      Agent.RuleChoice choice,
      EvictionConfig config,
      NodeSources node,
      NodeReclaimer reclaimer,
      Cgroups cgroups,
      HostPaths paths,
      PsiTrigger trigger,
      NotifierFactory notifiers,
      AgentMetrics metrics,
      Readiness readiness,
      Agent agent) {
    FsLayout layout = config.fsLayout();
    config.warnings().forEach(w -> LOG.warn("{}", w));
    LOG.info(
        "node {}, filesystem layout {}, {} thresholds, executor {}",
        c.nodeName(),
        layout,
        config.thresholds().size(),
        c.dryRun() ? "dry-run" : c.executor().name().toLowerCase(java.util.Locale.ROOT));

    RuleSet rules = choice.rules();
    dev.evictd.engine.DecisionGuard.Limits limits =
        new dev.evictd.engine.DecisionGuard.Limits(
            c.allowedMethods(), dev.evictd.engine.DecisionGuard.MAX_MESSAGE_LENGTH);
    Planner planner =
        agent.own(new Planner(rules, config, dev.evictd.engine.SyncBudget.DEFAULT, limits));
    if (rules != choice.configured()) {
      metrics.rulesReload(RuleProbation.REJECTED);
    }
    metrics.rulesReload(RuleProbation.LOADED);
    RuleProbation probation = probation(c, choice, config, limits, rules, metrics, clock);
    // closed after the manager (last in, first closed): a clean stop leaves no set named running
    agent.own((AutoCloseable) probation::stoppedCleanly);
    EvictionManager manager =
        new EvictionManager(
            planner,
            node.stats(),
            node.pods(),
            node.evictor(),
            reclaimer,
            node.events(),
            metrics,
            clock,
            new EvictionManager.Settings(
                c.interval(), c.podCleanupTimeout(), c.executor(), c.dryRun(), c.standalone()));
    agent.own(manager);
    if (node.kernelMemory() != null) {
      manager.kernelFigures(
          node.kernelMemory(), cgroups.memoryRoot().map(Object::toString).orElse(null));
    }
    if (!c.dryRun()
        && c.executor() == dev.evictd.api.EvictionMethod.DELETE
        && limits.methods().contains(dev.evictd.api.EvictionMethod.KILL_AND_DELETE)) {
      // the default rules stop a pod's containers at a hard threshold where it has a cgroup here
      manager.addObservationSource(() -> List.of(killAndDelete(cgroups)));
    }
    manager.addReadinessConditions(readiness);
    probation.onSwap(manager::swapRules);
    manager.setProbation(probation);
    DecisionWarmUp warmUp =
        agent.own(new DecisionWarmUp(manager, DecisionWarmUp.When.of(c.rulesWarmUp())));
    // the decision path's warm-up, on a scratch planner: after a sync near a memory threshold (or
    // at start), and for a reloaded set on the reloader's thread before it is handed over
    manager.addSyncListener(warmUp::synced);
    probation.beforeSwap(warmUp::warmBeforeSwap);
    watchRuleThreads(planner, probation, warmUp, metrics, readiness, agent);
    NodeTaints taints = node.taints();
    if (taints != null) {
      // the Node carries a taint for each condition the sync reports (held for the transition
      // period); a failed sync changes nothing
      manager.addSyncListener(
          (summary, plan) -> {
            if (!plan.failed()) {
              taints.want(java.util.Set.copyOf(plan.conditions()));
            }
          });
    }
    watchPodView(c, node.pods(), metrics, readiness);
    startEventSources(c, config, cgroups, paths, trigger, notifiers, manager, clock, agent);
    watchRules(c, choice, probation, manager, metrics, agent);
    synchronized (agent) {
      if (agent.closed) {
        throw new Agent.StartupCancelled();
      }
      manager.start();
    }
    warmUp.started();
    return manager;
  }

  /** The pods this agent can stop on the node: those with a pod cgroup (none when unreadable). */
  private static dev.evictd.api.KillAndDeleteAvailable killAndDelete(Cgroups cgroups) {
    java.util.Set<String> uids;
    try {
      uids = cgroups.podCgroups().keySet();
    } catch (java.io.UncheckedIOException | IllegalStateException e) {
      uids = java.util.Set.of();
    }
    return new dev.evictd.api.KillAndDeleteAvailable(uids);
  }

  /**
   * How old the pod view may be while the agent reports ready: three intervals, at least 30 s (a
   * watch reconnects within seconds; longer means decisions on pods that may be gone or new).
   */
  static Duration podViewMaxAge(AgentConfig c) {
    Duration d = c.interval().multipliedBy(3);
    return d.compareTo(Duration.ofSeconds(30)) < 0 ? Duration.ofSeconds(30) : d;
  }

  /** Wiring step: the rule set's probation (trusted from the start when packaged). */
  private static RuleProbation probation(
      AgentConfig c,
      Agent.RuleChoice choice,
      EvictionConfig config,
      dev.evictd.engine.DecisionGuard.Limits limits,
      RuleSet rules,
      AgentMetrics metrics,
      Clock clock) {
    RuleProbation probation =
        new RuleProbation(
            c.rulesProbationSyncs(),
            choice.store(),
            config,
            choice.packagedDefault(),
            choice.compileSaved(),
            metrics::rulesReload,
            clock);
    // the packaged rules (or a set identical to them) are trusted from the start
    boolean packaged =
        c.rules() == null || rules.sha256().equals(RuleCompiler.sha256(RuleCompiler.readDefault()));
    probation.started(rules, rules == choice.configured() && !packaged ? c.rules() : null);
    probation.shadowPlanner(limits, c.podCleanupTimeout());
    return probation;
  }

  /** Wiring step: readiness and the metric of rule threads that did not come back. */
  private static void watchRuleThreads(
      Planner planner,
      RuleProbation probation,
      DecisionWarmUp warmUp,
      AgentMetrics metrics,
      Readiness readiness,
      Agent agent) {
    java.util.function.IntSupplier stuckThreads =
        () ->
            planner.aliveAbandonedRuleThreads()
                + probation.shadowThreadsAlive()
                + warmUp.threadsAlive();
    metrics.ruleThreadsAbandoned(stuckThreads);
    RuleThreadHealth ruleThreads =
        new RuleThreadHealth(stuckThreads, Planner.MAX_ABANDONED_THREADS);
    readiness.add("rule-threads", () -> ruleThreads.ready() ? null : ruleThreads.describe().trim());
    agent.startup.ruleThreads = ruleThreads;
    agent.startup.probation = probation;
  }

  /** Wiring step: readiness and the metric of the pod view's age. */
  private static void watchPodView(
      AgentConfig c, PodSource pods, AgentMetrics metrics, Readiness readiness) {
    metrics.podViewAge(pods::viewAge);
    Duration podViewMaxAge = podViewMaxAge(c);
    readiness.add(
        "pod-view",
        () ->
            pods.viewAge().compareTo(podViewMaxAge) <= 0
                ? null
                : "pod view "
                    + pods.viewAge().toSeconds()
                    + " s old (the watch is down; bound "
                    + podViewMaxAge.toSeconds()
                    + " s)");
  }

  /**
   * Wiring step: PSI averages observed every sync, and the kernel event sources of {@code
   * notifiers}, each fact asking the manager for an immediate sync.
   */
  private static void startEventSources(
      AgentConfig c,
      EvictionConfig config,
      Cgroups cgroups,
      HostPaths paths,
      PsiTrigger trigger,
      NotifierFactory notifiers,
      EvictionManager manager,
      Clock clock,
      Agent agent) {
    PsiReader psi = new PsiReader(paths.procRoot(), clock);
    if (psi.available()) {
      manager.addObservationSource(psi::read);
    }
    // Kernel event sources (memcg thresholds, PSI triggers, memory.events, the adaptive poll):
    // each wake-up is a fact with its source and asks for an immediate sync. The memcg thresholds'
    // eventfds are polled by the sync loop itself (no notifier thread to wake first).
    dev.evictd.linux.EventPoll poll =
        c.memcgNotifier() && cgroups.version().orElse(null) == Cgroups.Version.V1
            ? dev.evictd.linux.EventPoll.open()
            : null;
    if (poll != null) {
      manager.waitOn(poll);
    }
    NotifierFactory.Spec spec =
        new NotifierFactory.Spec(
            config.thresholds(),
            cgroups,
            paths,
            c.memcgNotifier(),
            trigger,
            c.adaptivePoll(),
            c.interval(),
            poll);
    for (NotifierFactory.Notifier n : notifiers.start(spec, manager::event, clock)) {
      agent.own(n);
      if (n.available()) {
        LOG.info("event source {}: {}", n.source(), n.describe());
        manager.addSyncListener((summary, plan) -> n.update(summary));
      } else {
        LOG.warn(
            "event source {} not available ({}); polling every {}",
            n.describe(),
            n.unavailableReason(),
            GoDuration.format(c.interval()));
      }
    }
  }

  /** Wiring step: the hot reload of a configured rules directory. */
  private static void watchRules(
      AgentConfig c,
      Agent.RuleChoice choice,
      RuleProbation probation,
      EvictionManager manager,
      AgentMetrics metrics,
      Agent agent) {
    if (c.rules() != null) {
      RulesReloader reloader =
          new RulesReloader(
              c.rules(),
              choice.configured().sha256(),
              dir -> RuleCompiler.compile(dir, choice.options()),
              rs -> probation.admit(rs, c.rules(), manager.lastInputs()),
              failure -> metrics.rulesReload(RuleProbation.FAILED),
              sha -> metrics.rulesReload(RuleProbation.UNCHANGED),
              Duration.ofMillis(500));
      agent.own(reloader);
      agent.startup.reloader = reloader;
    }
  }
}
