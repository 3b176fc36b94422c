package dev.evictd.agent;

import dev.evictd.api.ConfigException;
import dev.evictd.api.EvictionConfig;
import dev.evictd.api.FsLayout;
import dev.evictd.api.MemcgThresholdCrossed;
import dev.evictd.api.PressureResource;
import dev.evictd.api.Signal;
import dev.evictd.api.Threshold;
import dev.evictd.config.GoDuration;
import dev.evictd.config.KubeletEvictionConfig;
import dev.evictd.config.YamlNode;
import dev.evictd.engine.Planner;
import dev.evictd.engine.RuleCompiler;
import dev.evictd.engine.RuleSet;
import dev.evictd.executor.ApiDeleteEvictor;
import dev.evictd.executor.ApiEvictionEvictor;
import dev.evictd.executor.CgroupKillEvictor;
import dev.evictd.executor.CrictlReclaimer;
import dev.evictd.executor.DispatchingPodEvictor;
import dev.evictd.executor.DryRunEvictor;
import dev.evictd.executor.NodeReclaimer;
import dev.evictd.executor.PodEvictor;
import dev.evictd.fixture.CapturedInputs;
import dev.evictd.kube.EventRecorder;
import dev.evictd.kube.KubeApi;
import dev.evictd.kube.KubeClients;
import dev.evictd.kube.KubeSettings;
import dev.evictd.kube.KubeletEndpoint;
import dev.evictd.kube.KubeletSummaryProvider;
import dev.evictd.kube.NodePodInformer;
import dev.evictd.linux.Cgroups;
import dev.evictd.linux.HostPaths;
import dev.evictd.linux.HostStatsProvider;
import dev.evictd.linux.MemcgThresholdNotifier;
import dev.evictd.linux.PsiReader;
import dev.evictd.linux.PsiTrigger;
import dev.evictd.linux.PsiTriggerNotifier;
import dev.evictd.stats.StatsProvider;
import dev.evictd.stats.Summary;
import io.fabric8.kubernetes.client.KubernetesClient;
import java.time.Clock;
import java.time.Duration;
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

  private final List<AutoCloseable> closeables = new ArrayList<>();
  private final EvictionManager manager;
  private final HttpEndpoints http;

  private Agent(EvictionManager manager, HttpEndpoints http) {
    this.manager = manager;
    this.http = http;
  }

  /** The manager (for tests and the CLI). */
  public EvictionManager manager() {
    return manager;
  }

  /** Where /metrics, /healthz and /readyz are served. */
  public java.net.InetSocketAddress address() {
    return http.address();
  }

  /**
   * Compiles the configured rule set, checks the pin, and refuses it with one clear line when
   * anything is wrong.
   */
  static RuleSet loadRules(AgentConfig c) {
    RuleCompiler.Options options = rulesOptions(c);
    return c.rules() == null
        ? RuleCompiler.compileDefault(options)
        : RuleCompiler.compile(c.rules(), options);
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
    return new RuleCompiler.Options(unsafe, c.rulesSha256(), RuleCompiler.Ownership.ENFORCE);
  }

  /** The eviction configuration: the kubelet's file, inline settings, or the kubelet's defaults. */
  static EvictionConfig evictionConfig(AgentConfig c, FsLayout layout) {
    YamlNode kc = c.eviction();
    if (c.kubeletConfig() != null) {
      kc = YamlNode.parse(c.kubeletConfig().toString(), CapturedInputs.read(c.kubeletConfig()));
    }
    return KubeletEvictionConfig.from(kc, c.nodeName(), layout);
  }

  /** Starts the agent; nothing is left running when this throws. */
  public static Agent start(AgentConfig c, Clock clock) {
    return start(c, clock, () -> KubeClients.create(KubeSettings.DEFAULTS));
  }

  /**
   * Starts the agent with the Kubernetes client {@code clients} makes (tests pass a mock API
   * server's client).
   */
  public static Agent start(
      AgentConfig c, Clock clock, java.util.function.Supplier<KubernetesClient> clients) {
    List<AutoCloseable> opened = new ArrayList<>();
    try {
      return start(c, clock, clients, opened);
    } catch (RuntimeException e) {
      closeAll(opened);
      throw e;
    }
  }

  private static Agent start(
      AgentConfig c,
      Clock clock,
      java.util.function.Supplier<KubernetesClient> clients,
      List<AutoCloseable> opened) {
    c.checkPaths();
    RuleSet rules = loadRules(c);
    LOG.info("rules {} ({} files) sha256 {}", rules.source(), rules.files().size(), rules.sha256());
    HostPaths paths =
        new HostPaths(c.cgroupRoot(), c.procRoot(), c.kubeletRootDir(), c.runtimeRootDir(), null)
            .withFallbacks();
    paths.fallbackWarnings().forEach(w -> LOG.warn("{}", w));
    Cgroups cgroups = Cgroups.detect(paths.cgroupRoot(), paths.podsCgroup());

    KubernetesClient client = null;
    StatsProvider stats;
    PodSource pods;
    PodEvictor evictor;
    EventSink events = EventSink.NONE;
    if (c.standalone()) {
      stats = new HostStatsProvider(paths, c.nodeName(), clock);
      pods =
          c.podsFile() == null
              ? PodSource.of(List.of())
              : PodSource.of(CapturedInputs.pods(c.podsFile()));
      evictor = new DryRunEvictor();
      LOG.info(
          "standalone: host statistics, {} pods{}, dry run",
          pods.activePods().size(),
          c.podsFile() == null ? "" : " from " + c.podsFile());
    } else {
      client = clients.get();
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
      NodePodInformer informer = new NodePodInformer(client, c.nodeName());
      opened.add(informer);
      if (!informer.start(Duration.ofSeconds(30))) {
        LOG.warn("the pod informer has not synced yet; syncs see no pods until it does");
      }
      pods = informer;
      CgroupKillEvictor kill = new CgroupKillEvictor(cgroups);
      opened.add(kill);
      evictor =
          new DispatchingPodEvictor(
              c.executor(),
              new ApiDeleteEvictor(api, KubeSettings.DEFAULTS.retry(), clock),
              new ApiEvictionEvictor(api, KubeSettings.DEFAULTS.retry()),
              kill,
              new DryRunEvictor());
      if (!c.dryRun()) {
        events = new EventRecorder(api, c.nodeName(), clock);
      }
    }
    NodeReclaimer reclaimer = new CrictlReclaimer(c.crictl(), List.of(), Duration.ofMinutes(2));

    FsLayout layout = c.fsLayout();
    if (layout == null) {
      layout = inferLayout(stats);
    }
    EvictionConfig config = evictionConfig(c, layout);
    config.warnings().forEach(w -> LOG.warn("{}", w));
    LOG.info(
        "node {}, filesystem layout {}, {} thresholds, executor {}",
        c.nodeName(),
        layout,
        config.thresholds().size(),
        c.dryRun() ? "dry-run" : c.executor().name().toLowerCase(java.util.Locale.ROOT));

    Planner planner = new Planner(rules, config);
    opened.add(planner);
    AgentMetrics metrics = new AgentMetrics(clock);
    metrics.rulesLoad(true);
    EvictionManager manager =
        new EvictionManager(
            planner,
            stats,
            pods,
            evictor,
            reclaimer,
            events,
            metrics,
            clock,
            new EvictionManager.Settings(
                c.interval(), c.podCleanupTimeout(), c.executor(), c.dryRun(), c.standalone()));
    opened.add(manager);

    // Kernel notifiers: a memcg threshold per memory threshold, a PSI trigger; both ask for an
    // immediate sync.
    if (c.memcgNotifier()) {
      for (Threshold t : config.thresholds()) {
        if (t.signal() == Signal.MEMORY_AVAILABLE
            || t.signal() == Signal.ALLOCATABLE_MEMORY_AVAILABLE) {
          MemcgThresholdNotifier n =
              new MemcgThresholdNotifier(
                  t,
                  cgroups,
                  (MemcgThresholdCrossed e) ->
                      manager.event(
                          e,
                          EvictionManager.MEMCG_SOURCE,
                          e.direction() == MemcgThresholdCrossed.Direction.UP),
                  clock);
          opened.add(n);
          manager.addSyncListener((summary, plan) -> n.update(summary));
        }
      }
    }
    PsiReader psi = new PsiReader(paths.procRoot(), clock);
    if (psi.available()) {
      manager.addObservationSource(psi::read);
    }
    if (c.psiTrigger() != null) {
      PsiTrigger trigger;
      try {
        trigger = PsiTrigger.parse(c.psiTrigger());
      } catch (IllegalArgumentException e) {
        throw new ConfigException("--psi-trigger " + c.psiTrigger() + ": " + e.getMessage());
      }
      PsiTriggerNotifier n =
          new PsiTriggerNotifier(
              PsiReader.file(paths.procRoot(), PressureResource.MEMORY),
              PressureResource.MEMORY,
              trigger,
              s -> manager.event(s, "psi", true),
              clock);
      opened.add(n);
      if (!n.available()) {
        LOG.warn(
            "PSI trigger not available ({}); polling every {}",
            n.unavailableReason(),
            GoDuration.format(c.interval()));
      }
    }

    HttpEndpoints http =
        new HttpEndpoints(
            c.metricsAddress(),
            metrics::scrape,
            manager::healthy,
            manager::ready,
            () ->
                "rules sha256 "
                    + manager.rulesSha256()
                    + "\n"
                    + (insecureKubelet(c) ? "WARNING: " + INSECURE_KUBELET + "\n" : ""));
    opened.add(http);
    if (c.rules() != null) {
      RulesReloader reloader =
          new RulesReloader(
              c.rules(),
              rules.sha256(),
              dir -> RuleCompiler.compile(dir, rulesOptions(c)),
              rs -> {
                metrics.rulesLoad(true);
                manager.swapRules(rs);
              },
              failure -> metrics.rulesLoad(false),
              Duration.ofMillis(500));
      opened.add(reloader);
    }
    manager.start();
    LOG.info(
        "evictd running on {}: metrics, /healthz and /readyz on {}", c.nodeName(), http.address());
    Agent agent = new Agent(manager, http);
    agent.closeables.addAll(opened);
    return agent;
  }

  /** The warning for kubeletInsecureSkipTLSVerify, logged at start and shown in /readyz. */
  static final String INSECURE_KUBELET =
      "kubelet TLS verification is OFF (kubeletInsecureSkipTLSVerify): anyone on the path to the"
          + " kubelet can feed this agent statistics and read its token; set kubeletCaFile instead";

  private static boolean insecureKubelet(AgentConfig c) {
    return !c.standalone() && c.stats().equals("kubelet") && c.kubeletInsecureSkipTlsVerify();
  }

  private static FsLayout inferLayout(StatsProvider stats) {
    for (int attempt = 1; attempt <= 3; attempt++) {
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
        Thread.currentThread().interrupt();
        break;
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
    if (closeables.isEmpty()) {
      return;
    }
    LOG.info("evictd stopping");
    closeAll(closeables);
    closeables.clear();
    LOG.info("evictd stopped");
  }
}
