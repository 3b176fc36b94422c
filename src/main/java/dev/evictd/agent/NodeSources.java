package dev.evictd.agent;

import dev.evictd.executor.ApiDeleteEvictor;
import dev.evictd.executor.ApiEvictionEvictor;
import dev.evictd.executor.CgroupKillEvictor;
import dev.evictd.executor.DispatchingPodEvictor;
import dev.evictd.executor.DryRunEvictor;
import dev.evictd.fixture.CapturedInputs;
import dev.evictd.kube.EventRecorder;
import dev.evictd.kube.KubeApi;
import dev.evictd.kube.KubeSettings;
import dev.evictd.kube.KubeletEndpoint;
import dev.evictd.kube.KubeletSummaryProvider;
import dev.evictd.kube.NodePodInformer;
import dev.evictd.kube.NodePods;
import dev.evictd.kube.NodeTaints;
import dev.evictd.linux.Cgroups;
import dev.evictd.linux.HostPaths;
import dev.evictd.linux.HostStatsProvider;
import dev.evictd.ports.EventSink;
import dev.evictd.ports.PodEvictor;
import dev.evictd.ports.PodSource;
import dev.evictd.ports.StatsProvider;
import io.fabric8.kubernetes.client.KubernetesClient;
import java.time.Clock;
import java.time.Duration;
import java.util.List;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * What the agent reads and acts on: statistics (and, with the kubelet's, the kernel's memory
 * figures for the syncs the kernel triggers; null with host statistics, which are the kernel's),
 * pods, the evictor, events and taints — and the start-up steps of {@link Agent} that make them,
 * standalone (host statistics, pods from a file, a dry run) or in a cluster (the API client, the
 * kubelet's or the host's statistics, the node's pod informer, the evictors, events and taints).
 */
record NodeSources(
    StatsProvider stats,
    java.util.function.Supplier<dev.evictd.stats.Summary> kernelMemory,
    PodSource pods,
    PodEvictor evictor,
    EventSink events,
    NodeTaints taints,
    String kubeletVersion) {
  // the agent's logger: these are the agent's start-up lines, under the name they always had
  private static final Logger LOG = LoggerFactory.getLogger(Agent.class);

  /** The warning for kubeletInsecureSkipTLSVerify, logged at start and shown in /readyz. */
  static final String INSECURE_KUBELET =
      "kubelet TLS verification is OFF (kubeletInsecureSkipTLSVerify): anyone on the path to the"
          + " kubelet can feed this agent statistics and read its token; set kubeletCaFile instead";

  /** Start-up step, standalone: host statistics, pods from a file or none, a dry run. */
  static NodeSources standalone(AgentConfig c, HostPaths paths, Clock clock) {
    StatsProvider stats = new HostStatsProvider(paths, c.nodeName(), clock);
    PodSource pods = PodSource.of(List.of());
    if (c.podsFile() != null) {
      // kept as the informer's store keeps its pods, which the rules then read without a copy, and
      // as few: this node's active pods, not a whole cluster's capture (kubectl get pods -A)
      NodePods on = NodePods.of(CapturedInputs.pods(c.podsFile()), c.nodeName());
      for (String reason : on.reasons("podsFile " + c.podsFile(), "--node-name")) {
        LOG.info("standalone: {}", reason);
      }
      pods = PodSource.of(on.active());
    }
    LOG.info(
        "standalone: host statistics, {} pods{}, dry run",
        pods.activePods().size(),
        c.podsFile() == null ? "" : " from " + c.podsFile());
    return new NodeSources(stats, null, pods, new DryRunEvictor(), EventSink.NONE, null, null);
  }

  /**
   * Start-up step, in a cluster: the API client, the statistics source, the node's pod informer,
   * the evictors, events and taints (each opened one added to {@code opened}).
   */
  static NodeSources cluster(
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
    return new NodeSources(
        stats,
        kernelMemory(c, paths, cgroups, clock),
        pods,
        evictor,
        events,
        taints,
        kubeletVersion(client, c));
  }

  /**
   * The Node's {@code status.nodeInfo.kubeletVersion}: the kubelet evictd follows; null (the newest
   * evictd knows) when the Node cannot be read, with a warning.
   */
  static String kubeletVersion(KubernetesClient client, AgentConfig c) {
    try {
      String v = dev.evictd.kube.NodeCapture.kubeletVersion(client, c.nodeName());
      if (v == null) {
        LOG.warn(
            "Node {} reports no kubelet version: following the newest kubelet evictd knows",
            c.nodeName());
        return null;
      }
      return v;
    } catch (RuntimeException e) {
      LOG.warn(
          "Node {} could not be read for its kubelet version ({}): following the newest kubelet"
              + " evictd knows",
          c.nodeName(),
          e.getMessage());
      return null;
    }
  }

  /**
   * The kernel's memory figures where the statistics are the kubelet's Summary and this host's
   * memory cgroups are mounted (the agent runs on the node); else null.
   */
  private static java.util.function.Supplier<dev.evictd.stats.Summary> kernelMemory(
      AgentConfig c, HostPaths paths, Cgroups cgroups, Clock clock) {
    if (c.stats().equals("host")) {
      return null; // every read is the kernel's already
    }
    if (cgroups.memoryRoot().isEmpty()) {
      LOG.warn(
          "no memory cgroup here ({}): syncs the kernel triggers decide on the kubelet's Summary,"
              + " which may be 10 s old",
          cgroups.describe());
      return null;
    }
    LOG.info(
        "syncs the kernel triggers take memory figures from the cgroups at {}",
        cgroups.memoryRoot().get());
    return new HostStatsProvider(paths, c.nodeName(), clock)::memory;
  }

  /** Whether the kubelet's TLS certificate goes unchecked (the warning of /readyz). */
  static boolean insecureKubelet(AgentConfig c) {
    return !c.standalone() && c.stats().equals("kubelet") && c.kubeletInsecureSkipTlsVerify();
  }
}
