package dev.evictd.agent;

import dev.evictd.api.ConfigException;
import dev.evictd.api.EvictionConfig;
import dev.evictd.api.FsLayout;
import dev.evictd.config.KubeletEvictionConfig;
import dev.evictd.config.YamlNode;
import dev.evictd.engine.RuleSet;
import dev.evictd.executor.CrictlReclaimer;
import dev.evictd.fixture.CapturedInputs;
import dev.evictd.kube.KubeClients;
import dev.evictd.kube.KubeSettings;
import dev.evictd.kube.NodePodInformer;
import dev.evictd.linux.Cgroups;
import dev.evictd.linux.HostPaths;
import dev.evictd.linux.LinuxNotifiers;
import dev.evictd.linux.NotifierFactory;
import dev.evictd.linux.PsiTrigger;
import dev.evictd.ports.NodeReclaimer;
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
  final Startup startup;
  boolean closed;

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
    volatile RuleThreadHealth ruleThreads;
    volatile RuleProbation probation;
    // which kubelet the agent follows, for /readyz's detail
    volatile String kubelet;
    volatile RulesReloader reloader;

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
    return evictionConfig(c, layout, null);
  }

  /**
   * The eviction configuration as the kubelet of {@code kubeletVersion} reads it (null: the newest
   * evictd knows); a version evictd cannot follow (older than it knows, not a version) is logged
   * and the newest followed.
   */
  static EvictionConfig evictionConfig(AgentConfig c, FsLayout layout, String kubeletVersion) {
    YamlNode kc = c.eviction();
    if (c.kubeletConfig() != null) {
      kc = CapturedInputs.kubeletConfig(c.kubeletConfig());
    }
    String version = kubeletVersion;
    if (version != null) {
      try {
        dev.evictd.k8s.KubeletFeatureGates.minorOf(version);
      } catch (IllegalArgumentException e) {
        LOG.warn("{}: following the newest kubelet evictd knows", e.getMessage());
        version = null;
      }
    }
    return KubeletEvictionConfig.from(kc, c.nodeName(), layout, version);
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
            ? NodeSources.standalone(c, paths, clock)
            : NodeSources.cluster(c, paths, cgroups, clock, clients, opened);
    NodeReclaimer reclaimer = new CrictlReclaimer(c.crictl(), List.of(), Duration.ofMinutes(2));

    // Checked now, so a bad configuration fails the command; built again below once the layout
    // is known.
    EvictionConfig checked =
        evictionConfig(
            c, c.fsLayout() == null ? FsLayout.SHARED : c.fsLayout(), node.kubeletVersion());
    startup.kubelet = logKubelet(checked, metrics);
    PsiTrigger trigger = psiTrigger(c);
    Agent agent = new Agent(http, startup);
    agent.closeables.addAll(opened);
    startInBackground(
        c, clock, choice, checked, node, reclaimer, cgroups, paths, trigger, notifiers, metrics,
        readiness, agent);
    return agent;
  }

  /**
   * Says once which kubelet the agent follows (a warning when it is newer than evictd knows) and
   * keeps it in /readyz's detail.
   */
  private static String logKubelet(EvictionConfig config, AgentMetrics metrics) {
    dev.evictd.api.Kubelet k = config.kubelet();
    if (k.beyondRange()) {
      LOG.warn("{}: its eviction manager may differ", k.describe());
    } else {
      LOG.info("{}", k.describe());
    }
    metrics.kubelet(k);
    return k.describe();
  }

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
          RulesReloader r = startup.reloader;
          String refused = r == null ? null : r.lastRefusal();
          return readiness.describe()
              + (startup.kubelet == null ? "" : startup.kubelet + "\n")
              + (NodeSources.insecureKubelet(c)
                  ? "WARNING: " + NodeSources.INSECURE_KUBELET + "\n"
                  : "")
              + (m == null
                  ? ""
                  : "rules sha256 "
                      + m.rulesSha256()
                      + (p != null && p.onProbation() ? " (on probation)" : "")
                      + "\n")
              + (refused == null
                  ? ""
                  : "WARNING: rules reload refused, the running rules stay:\n" + refused.indent(2));
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
                  config = evictionConfig(c, inferLayout(statsProvider), node.kubeletVersion());
                }
                if (Thread.currentThread().isInterrupted()) {
                  throw new StartupCancelled();
                }
                EvictionManager m =
                    AgentWiring.startLoop(
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

  /** The rule set the agent starts with, and how it compiles and falls back to others. */
  record RuleChoice(
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
  static final class StartupCancelled extends RuntimeException {
    StartupCancelled() {
      super("start-up cancelled", null, false, false);
    }
  }

  /** Keeps {@code c} to close with the agent, or closes it at once when the agent is closing. */
  synchronized <T extends AutoCloseable> T own(T c) {
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
