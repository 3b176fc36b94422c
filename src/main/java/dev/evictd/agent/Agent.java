package dev.evictd.agent;

import dev.evictd.api.ConfigException;
import dev.evictd.api.EvictionConfig;
import dev.evictd.api.FsLayout;
import dev.evictd.config.GoDuration;
import dev.evictd.config.KubeletEvictionConfig;
import dev.evictd.config.YamlNode;
import dev.evictd.engine.Planner;
import dev.evictd.engine.RuleSet;
import dev.evictd.executor.ApiDeleteEvictor;
import dev.evictd.executor.ApiEvictionEvictor;
import dev.evictd.executor.CgroupKillEvictor;
import dev.evictd.executor.CrictlReclaimer;
import dev.evictd.executor.DispatchingPodEvictor;
import dev.evictd.executor.DryRunEvictor;
import dev.evictd.fixture.CapturedInputs;
import dev.evictd.kube.EventRecorder;
import dev.evictd.kube.KubeApi;
import dev.evictd.kube.KubeClients;
import dev.evictd.kube.KubeSettings;
import dev.evictd.kube.KubeletEndpoint;
import dev.evictd.kube.KubeletSummaryProvider;
import dev.evictd.kube.NodePodInformer;
import dev.evictd.kube.NodeTaints;
import dev.evictd.linux.Cgroups;
import dev.evictd.linux.HostPaths;
import dev.evictd.linux.HostStatsProvider;
import dev.evictd.linux.LinuxNotifiers;
import dev.evictd.linux.NotifierFactory;
import dev.evictd.linux.PsiReader;
import dev.evictd.linux.PsiTrigger;
import dev.evictd.ports.EventSink;
import dev.evictd.ports.NodeReclaimer;
import dev.evictd.ports.PodEvictor;
import dev.evictd.ports.PodSource;
import dev.evictd.ports.StatsProvider;
import dev.evictd.ruleset.RuleCompiler;
import dev.evictd.ruleset.RuleSetCache;
import dev.evictd.stats.Summary;
import io.fabric8.kubernetes.client.KubernetesClient;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The running agent: everything {@code evictd run} wires together from an {@link AgentConfig} —
 * rules, planner, statistics, pods, executor, reclaim, events, kernel notifiers, metrics and
 * health, hot reload — and the order in which it is all closed.
 */
public final class Agent implements AutoCloseable {
  private static final Logger LOG = LoggerFactory.getLogger(Agent.class);

  /**
   * The longest the background start-up may take (waiting for the API server and the kubelet)
   * before {@code /healthz} fails and the kubelet restarts the agent.
   */
  static final Duration STARTUP_BOUND = Duration.ofSeconds(90);

  /**
   * The longest {@link #close} takes: the loop's drain of a request in flight ({@link
   * EvictionManager#DRAIN}) and the joins after interrupting it and the start-up.
   */
  public static final Duration SHUTDOWN_BOUND = Duration.ofSeconds(10);

  /** How long the background start-up waits for the first list of the node's pods. */
  static final Duration INFORMER_WAIT = Duration.ofSeconds(10);

  private final List<AutoCloseable> closeables = new ArrayList<>();
  private final HttpEndpoints http;
  private final Startup startup;
  private boolean closed;

  private Agent(HttpEndpoints http, Startup startup) {
    this.http = http;
    this.startup = startup;
  }

  /**
   * The manager, once the background start-up has made it (waits for that, at most {@link
   * #STARTUP_BOUND}); null when start-up failed or the agent was closed first.
   */
  public EvictionManager manager() {
    return startup.await(STARTUP_BOUND);
  }

  /**
   * The part of start-up that waits for the API server and the kubelet, on its own thread, so the
   * endpoints answer from the first second: {@code /healthz} is 200 while it progresses within
   * {@link #STARTUP_BOUND}, {@code /readyz} names the step it is at.
   */
  static final class Startup {
    private final java.util.concurrent.CountDownLatch done =
        new java.util.concurrent.CountDownLatch(1);
    private final Instant began;
    private final Clock clock;
    private volatile String step = "loading rules";
    private volatile EvictionManager manager;
    private volatile String failure;
    private volatile Thread thread;
    private volatile RuleThreadHealth ruleThreads;
    private volatile RuleProbation probation;

    Startup(Clock clock) {
      this.clock = clock;
      this.began = clock.instant();
    }

    void step(String s) {
      step = s;
    }

    /** Null when start-up is over, else what it waits for. */
    String unmet() {
      if (manager != null) {
        return null;
      }
      return failure != null ? "start-up failed: " + failure : "starting: " + step;
    }

    boolean healthy() {
      EvictionManager m = manager;
      if (m != null) {
        RuleThreadHealth r = ruleThreads;
        return m.healthy() && (r == null || r.healthy());
      }
      return failure == null
          && Duration.between(began, clock.instant()).compareTo(STARTUP_BOUND) < 0;
    }

    EvictionManager await(Duration timeout) {
      try {
        done.await(timeout.toMillis(), java.util.concurrent.TimeUnit.MILLISECONDS);
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
      }
      return manager;
    }
  }

  /** Where /metrics, /healthz and /readyz are served. */
  public java.net.InetSocketAddress address() {
    return http.address();
  }

  /**
   * How the agent loads rules: the policy lint (unless explicitly allowed off), the pinned SHA-256,
   * and the ownership check — rules writable by anyone but root (or the agent's user) are refused.
   */
  static RuleCompiler.Options rulesOptions(AgentConfig c) {
    boolean unsafe = c.allowUnsafeRules() || "1".equals(System.getenv("EVICTD_ALLOW_UNSAFE_RULES"));
    if (unsafe) {
      LOG.warn(
          "policy lint DISABLED (allowUnsafeRules): rules may call any Java; use only for trusted experiments");
    }
    return new RuleCompiler.Options(
        unsafe,
        c.rulesSha256(),
        RuleCompiler.Ownership.ENFORCE,
        c.rulesCacheDir() == null ? null : RuleSetCache.at(c.rulesCacheDir()));
  }

  /** The eviction configuration: the kubelet's file, inline settings, or the kubelet's defaults. */
  static EvictionConfig evictionConfig(AgentConfig c, FsLayout layout) {
    YamlNode kc = c.eviction();
    if (c.kubeletConfig() != null) {
      kc = YamlNode.parse(c.kubeletConfig().toString(), CapturedInputs.read(c.kubeletConfig()));
    }
    return KubeletEvictionConfig.from(kc, c.nodeName(), layout);
  }

  /**
   * Starts the agent: checks the configuration and compiles the rules (a problem throws, and
   * nothing is left running), serves the endpoints at once, then waits for the pods and statistics
   * and starts the loop in the background.
   */
  public static Agent start(AgentConfig c, Clock clock) {
    return start(c, clock, () -> KubeClients.create(KubeSettings.DEFAULTS));
  }

  /**
   * Starts the agent with the Kubernetes client {@code clients} makes (tests pass a mock API
   * server's client).
   */
  public static Agent start(
      AgentConfig c, Clock clock, java.util.function.Supplier<KubernetesClient> clients) {
    return start(c, clock, clients, new LinuxNotifiers());
  }

  /**
   * Starts the agent with the Kubernetes client {@code clients} makes and the kernel event sources
   * {@code notifiers} makes (tests pass fakes).
   */
  public static Agent start(
      AgentConfig c,
      Clock clock,
      java.util.function.Supplier<KubernetesClient> clients,
      NotifierFactory notifiers) {
    List<AutoCloseable> opened = java.util.Collections.synchronizedList(new ArrayList<>());
    try {
      return start(c, clock, clients, notifiers, opened);
    } catch (RuntimeException e) {
      closeAll(opened);
      throw e;
    }
  }

  private static Agent start(
      AgentConfig c,
      Clock clock,
      java.util.function.Supplier<KubernetesClient> clients,
      NotifierFactory notifiers,
      List<AutoCloseable> opened) {
    c.checkPaths();
    Startup startup = new Startup(clock);
    Readiness readiness = new Readiness().add("startup", startup::unmet);
    AgentMetrics metrics = new AgentMetrics(clock);
    // The endpoints come first: the kubelet's probes get answers while the rest starts.
    HttpEndpoints http = endpoints(c, metrics, startup, readiness);
    opened.add(http);
    RuleChoice choice = RuleChoice.of(c);
    RuleSet rules = choice.rules();
    LOG.info("rules {} ({} files) sha256 {}", rules.source(), rules.files().size(), rules.sha256());
    HostPaths paths = hostPaths(c);
    Cgroups cgroups = Cgroups.detect(paths.cgroupRoot(), paths.podsCgroup());

    NodeSources node =
        c.standalone()
            ? standaloneSources(c, paths, clock)
            : clusterSources(c, paths, cgroups, clock, clients, opened);
    NodeReclaimer reclaimer = new CrictlReclaimer(c.crictl(), List.of(), Duration.ofMinutes(2));

    // Checked now, so a bad configuration fails the command; built again below once the layout
    // is known.
    EvictionConfig checked =
        evictionConfig(c, c.fsLayout() == null ? FsLayout.SHARED : c.fsLayout());
    PsiTrigger trigger = psiTrigger(c);
    Agent agent = new Agent(http, startup);
    agent.closeables.addAll(opened);
    startInBackground(
        c, clock, choice, checked, node, reclaimer, cgroups, paths, trigger, notifiers, metrics,
        readiness, agent);
    return agent;
  }

  /** What the agent reads and acts on: statistics, pods, the evictor, events and taints. */
  private record NodeSources(
      StatsProvider stats,
      PodSource pods,
      PodEvictor evictor,
      EventSink events,
      NodeTaints taints) {}

  /** Start-up step: the metrics, health and readiness endpoints. */
  private static HttpEndpoints endpoints(
      AgentConfig c, AgentMetrics metrics, Startup startup, Readiness readiness) {
    return new HttpEndpoints(
        c.metricsAddress(),
        metrics::scrape,
        startup::healthy,
        readiness::ready,
        () -> {
          EvictionManager m = startup.manager;
          RuleProbation p = startup.probation;
          return readiness.describe()
              + (insecureKubelet(c) ? "WARNING: " + INSECURE_KUBELET + "\n" : "")
              + (m == null
                  ? ""
                  : "rules sha256 "
                      + m.rulesSha256()
                      + (p != null && p.onProbation() ? " (on probation)" : "")
                      + "\n");
        });
  }

  /** Start-up step: where the host's cgroups, /proc and runtime directories are. */
  private static HostPaths hostPaths(AgentConfig c) {
    HostPaths paths =
        new HostPaths(
                c.cgroupRoot(),
                c.procRoot(),
                c.kubeletRootDir(),
                c.runtimeRootDir(),
                c.podsCgroup())
            .withFallbacks();
    paths.fallbackWarnings().forEach(w -> LOG.warn("{}", w));
    return paths;
  }

  /** Start-up step, standalone: host statistics, pods from a file or none, a dry run. */
  private static NodeSources standaloneSources(AgentConfig c, HostPaths paths, Clock clock) {
    StatsProvider stats = new HostStatsProvider(paths, c.nodeName(), clock);
    PodSource pods =
        c.podsFile() == null
            ? PodSource.of(List.of())
            : PodSource.of(CapturedInputs.pods(c.podsFile()));
    LOG.info(
        "standalone: host statistics, {} pods{}, dry run",
        pods.activePods().size(),
        c.podsFile() == null ? "" : " from " + c.podsFile());
    return new NodeSources(stats, pods, new DryRunEvictor(), EventSink.NONE, null);
  }

  /**
   * Start-up step, in a cluster: the API client, the statistics source, the node's pod informer,
   * the evictors, events and taints (each opened one added to {@code opened}).
   */
  private static NodeSources clusterSources(
      AgentConfig c,
      HostPaths paths,
      Cgroups cgroups,
      Clock clock,
      java.util.function.Supplier<KubernetesClient> clients,
      List<AutoCloseable> opened) {
    StatsProvider stats;
    EventSink events = EventSink.NONE;
    NodeTaints taints = null;
    KubernetesClient client = clients.get();
    opened.add(client);
    KubeApi api = new KubeApi(client, KubeSettings.DEFAULTS.requestTimeout());
    if (c.stats().equals("host")) {
      stats = new HostStatsProvider(paths, c.nodeName(), clock);
    } else if (c.stats().equals("kubelet-proxy")) {
      LOG.warn(
          "stats kubelet-proxy: the Summary through the API server's node proxy; this needs get on"
              + " nodes/proxy, which reaches every kubelet endpoint that answers GET on every node"
              + " (see docs/security.md), and puts one proxied request per sync on the API server");
      stats =
          KubeletSummaryProvider.viaApiServer(
              client, c.nodeName(), Duration.ofSeconds(10), c.interval().multipliedBy(3), clock);
    } else {
      KubeletEndpoint kubelet = c.kubeletEndpoint();
      if (kubelet.insecureSkipTlsVerify()) {
        LOG.warn(INSECURE_KUBELET);
      }
      if (!kubelet.sendsToken()) {
        LOG.warn(
            "kubeletUrl {} is plain HTTP (kubeletAllowHttp): no token is sent", c.kubeletUrl());
      }
      LOG.info("statistics from the kubelet at {}", kubelet.baseUri());
      stats =
          KubeletSummaryProvider.direct(
              kubelet, c.nodeName(), Duration.ofSeconds(10), c.interval().multipliedBy(3), clock);
    }
    if (stats instanceof AutoCloseable ac) {
      opened.add(ac);
    }
    NodePodInformer informer = new NodePodInformer(client, c.nodeName(), clock);
    opened.add(informer);
    PodSource pods = informer;
    CgroupKillEvictor kill = new CgroupKillEvictor(cgroups);
    opened.add(kill);
    PodEvictor evictor =
        new DispatchingPodEvictor(
            c.executor(),
            new ApiDeleteEvictor(api, KubeSettings.DEFAULTS.retry(), clock),
            new ApiEvictionEvictor(api, KubeSettings.DEFAULTS.retry()),
            kill,
            new DryRunEvictor());
    if (!c.dryRun()) {
      events = new EventRecorder(api, c.nodeName(), clock);
    }
    if (c.taints() && !c.dryRun()) {
      taints = new NodeTaints(api, c.nodeName(), clock);
      opened.add(taints);
    } else if (c.taints()) {
      LOG.info("taints: dry run, the Node is not tainted");
    }
    return new NodeSources(stats, pods, evictor, events, taints);
  }

  /** Start-up step: the configured PSI trigger, or null. */
  private static PsiTrigger psiTrigger(AgentConfig c) {
    PsiTrigger trigger = null;
    if (c.psiTrigger() != null) {
      try {
        trigger = PsiTrigger.parse(c.psiTrigger());
      } catch (IllegalArgumentException e) {
        throw new ConfigException("--psi-trigger " + c.psiTrigger() + ": " + e.getMessage());
      }
    }
    return trigger;
  }

  /**
   * Start-up step: the part that waits for the API server and the kubelet (the first pod list, the
   * filesystem layout), then the loop, on the {@code evictd-startup} thread.
   */
  private static void startInBackground(
      AgentConfig c,
      Clock clock,
      RuleChoice choice,
      EvictionConfig checked,
      NodeSources node,
      NodeReclaimer reclaimer,
      Cgroups cgroups,
      HostPaths paths,
      PsiTrigger psiTrigger,
      NotifierFactory notifiers,
      AgentMetrics metrics,
      Readiness readiness,
      Agent agent) {
    Startup startup = agent.startup;
    HttpEndpoints http = agent.http;
    StatsProvider statsProvider = node.stats();
    PodSource podSource = node.pods();
    Thread t =
        new Thread(
            () -> {
              try {
                if (podSource instanceof NodePodInformer informer) {
                  startup.step("listing the node's pods");
                  if (!informer.start(INFORMER_WAIT)) {
                    LOG.warn(
                        "the node's pods are not listed yet; syncs are skipped until they are");
                  }
                }
                EvictionConfig config = checked;
                if (c.fsLayout() == null) {
                  startup.step("reading statistics to infer the filesystem layout");
                  config = evictionConfig(c, inferLayout(statsProvider));
                }
                if (Thread.currentThread().isInterrupted()) {
                  throw new StartupCancelled();
                }
                EvictionManager m =
                    startLoop(
                        c,
                        clock,
                        choice,
                        config,
                        node,
                        reclaimer,
                        cgroups,
                        paths,
                        psiTrigger,
                        notifiers,
                        metrics,
                        readiness,
                        agent);
                startup.manager = m;
                LOG.info(
                    "evictd running on {}: metrics, /healthz and /readyz on {}",
                    c.nodeName(),
                    http.address());
              } catch (StartupCancelled e) {
                LOG.info("start-up stopped: evictd is shutting down");
              } catch (RuntimeException e) {
                startup.failure = e.getMessage();
                LOG.error("start-up failed: {}", e.getMessage(), e);
              } finally {
                startup.done.countDown();
              }
            },
            "evictd-startup");
    t.setDaemon(true);
    startup.thread = t;
    t.start();
  }

  private record RuleChoice(
      RuleSet configured,
      RuleSet rules,
      RuleStateStore store,
      java.util.function.Supplier<RuleSet> packagedDefault,
      java.util.function.Function<List<dev.evictd.engine.RuleSource>, RuleSet> compileSaved,
      RuleCompiler.Options options) {
    static RuleChoice of(AgentConfig c) {
      RuleCompiler.Options options = rulesOptions(c);
      RuleSet configured =
          c.rules() == null
              ? RuleCompiler.compileDefault(options)
              : RuleCompiler.compile(c.rules(), options);
      RuleStateStore store = new RuleStateStore(c.stateDir());
      java.util.function.Supplier<RuleSet> packagedDefault =
          c.rules() == null ? () -> configured : () -> RuleCompiler.compileDefault(options);
      java.util.function.Function<List<dev.evictd.engine.RuleSource>, RuleSet> compileSaved =
          sources -> RuleCompiler.compile(store.dir() + " (last trusted rules)", sources, options);
      RuleSet rules = RuleProbation.choose(configured, store, compileSaved, packagedDefault);
      return new RuleChoice(configured, rules, store, packagedDefault, compileSaved, options);
    }
  }

  /** Thrown inside the start-up thread when the agent is closed before it finished. */
  private static final class StartupCancelled extends RuntimeException {
    StartupCancelled() {
      super("start-up cancelled", null, false, false);
    }
  }

  /** Keeps {@code c} to close with the agent, or closes it at once when the agent is closing. */
  private synchronized <T extends AutoCloseable> T own(T c) {
    if (closed) {
      try {
        c.close();
      } catch (Exception e) {
        LOG.warn("closing {}: {}", c.getClass().getSimpleName(), e.toString());
      }
      throw new StartupCancelled();
    }
    closeables.add(c);
    return c;
  }

  /**
   * Wiring step, on the start-up thread: the planner, the rules' probation, the manager with its
   * readiness, taints, the event sources and the rules' hot reload, then the loop.
   */
  private static EvictionManager startLoop(
      AgentConfig c,
      Clock clock,
      RuleChoice choice,
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
    manager.addReadinessConditions(readiness);
    probation.onSwap(manager::swapRules);
    manager.setProbation(probation);
    watchRuleThreads(planner, probation, metrics, readiness, agent);
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
        throw new StartupCancelled();
      }
      manager.start();
    }
    return manager;
  }

  /**
   * How old the pod view may be while the agent reports ready: three intervals, at least 30 s (a
   * watch reconnects within seconds; longer means decisions on pods that may be gone or new).
   */
  static Duration podViewMaxAge(AgentConfig c) {
    Duration d = c.interval().multipliedBy(3);
    return d.compareTo(Duration.ofSeconds(30)) < 0 ? Duration.ofSeconds(30) : d;
  }

  /** The warning for kubeletInsecureSkipTLSVerify, logged at start and shown in /readyz. */
  static final String INSECURE_KUBELET =
      "kubelet TLS verification is OFF (kubeletInsecureSkipTLSVerify): anyone on the path to the"
          + " kubelet can feed this agent statistics and read its token; set kubeletCaFile instead";

  /** Wiring step: the rule set's probation (trusted from the start when packaged). */
  private static RuleProbation probation(
      AgentConfig c,
      RuleChoice choice,
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
      AgentMetrics metrics,
      Readiness readiness,
      Agent agent) {
    java.util.function.IntSupplier stuckThreads =
        () -> planner.aliveAbandonedRuleThreads() + probation.shadowThreadsAlive();
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
    // each wake-up is a fact with its source and asks for an immediate sync.
    NotifierFactory.Spec spec =
        new NotifierFactory.Spec(
            config.thresholds(),
            cgroups,
            paths,
            c.memcgNotifier(),
            trigger,
            c.adaptivePoll(),
            c.interval());
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
      RuleChoice choice,
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
    }
  }

  private static boolean insecureKubelet(AgentConfig c) {
    return !c.standalone() && c.stats().equals("kubelet") && c.kubeletInsecureSkipTlsVerify();
  }

  private static FsLayout inferLayout(StatsProvider stats) {
    for (int attempt = 1; attempt <= 3; attempt++) {
      if (Thread.currentThread().isInterrupted()) {
        throw new StartupCancelled();
      }
      try {
        Summary s = stats.summary();
        if (s != null) {
          return CapturedInputs.inferLayout(s);
        }
      } catch (RuntimeException e) {
        LOG.warn(
            "cannot read statistics to infer the filesystem layout (attempt {}): {}",
            attempt,
            e.getMessage());
      }
      try {
        Thread.sleep(1000);
      } catch (InterruptedException e) {
        throw new StartupCancelled();
      }
    }
    LOG.warn("filesystem layout unknown: assuming shared (set fsLayout to be sure)");
    return FsLayout.SHARED;
  }

  private static void closeAll(List<AutoCloseable> list) {
    for (int i = list.size() - 1; i >= 0; i--) {
      try {
        list.get(i).close();
      } catch (Exception e) {
        LOG.warn("closing {}: {}", list.get(i).getClass().getSimpleName(), e.toString());
      }
    }
  }

  /**
   * Stops everything, most recently started first: the loop finishes its sync, notifiers stop,
   * sockets close.
   */
  @Override
  public void close() {
    List<AutoCloseable> toClose;
    synchronized (this) {
      if (closed) {
        return;
      }
      closed = true;
      toClose = new ArrayList<>(closeables);
      closeables.clear();
    }
    LOG.info("evictd stopping");
    Thread t = startup.thread;
    if (t != null && t.isAlive()) {
      // a start-up still waiting for the API server or the kubelet stops waiting
      t.interrupt();
      try {
        t.join(2000);
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
      }
    }
    synchronized (this) {
      toClose.addAll(closeables);
      closeables.clear();
    }
    closeAll(toClose);
    LOG.info("evictd stopped");
  }
}
