package dev.evictd.cli;

import dev.evictd.agent.Agent;
import dev.evictd.agent.AgentConfig;
import dev.evictd.config.YamlNode;
import dev.evictd.fixture.CapturedInputs;
import java.nio.file.Path;
import java.time.Clock;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.concurrent.Callable;
import java.util.concurrent.CountDownLatch;
import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;

/**
 * {@code evictd run}: the node agent. Runs until SIGTERM or SIGINT, then shuts down cleanly (within
 * {@link dev.evictd.agent.EvictionManager}'s drain of a request in flight). SIGHUP is logged and
 * ignored: the rules directory is watched, so a reload needs no signal, and the JVM's default (exit
 * 129) would stop the agent.
 */
@Command(
    name = "run",
    mixinStandardHelpOptions = true,
    description = {
      "Run the node agent: a sync every interval and at once on kernel memory events; evictions through the API",
      "(or dry run); /metrics, /healthz and /readyz. Every option can also be set in the --config file under the",
      "camelCase key (e.g. --metrics-address is metricsAddress); options win over the file.",
      "With --standalone it needs no cluster and no configuration: host statistics, dry run."
    })
final class RunCommand implements Callable<Integer> {
  @Option(names = "--config", paramLabel = "FILE", description = "Agent configuration YAML.")
  Path config;

  @Option(
      names = "--standalone",
      description = "No cluster: host statistics, pods from --pods-file (or none), dry run.")
  Boolean standalone;

  @Option(
      names = "--node-name",
      paramLabel = "NAME",
      description = "This node (default: $NODE_NAME; the host name in standalone mode).")
  String nodeName;

  @Option(
      names = "--kubelet-config",
      paramLabel = "FILE",
      description = "Read eviction settings from the kubelet's configuration file.")
  String kubeletConfig;

  @Option(
      names = "--rules",
      paramLabel = "DIR",
      description = "Rules directory, watched and hot-reloaded (default: the packaged rules).")
  String rules;

  @Option(
      names = "--rules-sha256",
      paramLabel = "HEX",
      description = "Accept only the rule set with this SHA-256.")
  String rulesSha256;

  @Option(
      names = "--stats",
      paramLabel = "SOURCE",
      description =
          "kubelet (the node's own kubelet, default), kubelet-proxy (through the API server: needs"
              + " nodes/proxy) or host.")
  String stats;

  @Option(
      names = "--kubelet-url",
      paramLabel = "URL",
      description =
          "The kubelet to read the Summary from (default https://$HOST_IP:10250, HOST_IP from the downward API).")
  String kubeletUrl;

  @Option(
      names = "--kubelet-ca-file",
      paramLabel = "FILE",
      description = "CA of the kubelet's serving certificate (default: the service account's CA).")
  String kubeletCaFile;

  @Option(
      names = "--kubelet-token-file",
      paramLabel = "FILE",
      description = "Token for the kubelet (default: the service account's token).")
  String kubeletTokenFile;

  @Option(
      names = "--kubelet-insecure-skip-tls-verify",
      description =
          "Trust any kubelet certificate (insecure: warned about at start and in /readyz).")
  Boolean kubeletInsecureSkipTlsVerify;

  @Option(
      names = "--kubelet-tls-server-name",
      paramLabel = "NAME",
      description = "The name the kubelet's certificate must carry, when not the URL's host.")
  String kubeletTlsServerName;

  @Option(
      names = "--kubelet-allow-http",
      description = "Accept an http:// kubelet URL (no token is then sent).")
  Boolean kubeletAllowHttp;

  @Option(
      names = "--executor",
      paramLabel = "METHOD",
      description =
          "dry-run (default), delete, evict or kill, for decisions that choose no method.")
  String executor;

  @Option(
      names = "--metrics-address",
      paramLabel = "HOST:PORT",
      description = "Where /metrics, /healthz and /readyz listen (default 127.0.0.1:9091).")
  String metricsAddress;

  @Option(
      names = "--interval",
      paramLabel = "DURATION",
      description = "Monitoring interval (default 10s).")
  String interval;

  @Option(
      names = "--pod-cleanup-timeout",
      paramLabel = "DURATION",
      description = "How long to wait for an evicted pod to go (default 30s).")
  String podCleanupTimeout;

  @Option(
      names = "--pods-file",
      paramLabel = "FILE",
      description = "Pods for standalone mode (PodList, List or YAML list).")
  String podsFile;

  @Option(
      names = "--fs-layout",
      paramLabel = "LAYOUT",
      description = "auto (default), shared, dedicated or split.")
  String fsLayout;

  @Option(names = "--cgroup-root", paramLabel = "DIR")
  String cgroupRoot;

  @Option(names = "--proc-root", paramLabel = "DIR")
  String procRoot;

  @Option(names = "--kubelet-root-dir", paramLabel = "DIR")
  String kubeletRootDir;

  @Option(names = "--runtime-root-dir", paramLabel = "DIR")
  String runtimeRootDir;

  @Option(
      names = "--taints",
      paramLabel = "BOOL",
      description =
          "Taint the own Node NoSchedule (evictd.dev/memory-pressure, disk-pressure, pid-pressure)"
              + " while the condition holds (default false; never in dry run).")
  String taints;

  @Option(
      names = "--allow-unsafe-rules",
      paramLabel = "BOOL",
      description = "Turn the policy lint off (trusted experiments only; logged loudly).")
  String allowUnsafeRules;

  @Option(
      names = "--memcg-notifier",
      paramLabel = "BOOL",
      description = "Register memcg thresholds for immediate syncs (default true).")
  String memcgNotifier;

  @Option(
      names = "--psi-trigger",
      paramLabel = "TRIGGER",
      description = "A PSI trigger on memory, e.g. \"some 150000 2000000\".")
  String psiTrigger;

  @Option(
      names = "--crictl",
      paramLabel = "CMD",
      description = "crictl for node-level reclaim (default: crictl on PATH).")
  String crictl;

  @Option(names = "--log-format", paramLabel = "FORMAT", description = "text (default) or json.")
  String logFormat;

  @Option(
      names = "--allowed-methods",
      paramLabel = "METHODS",
      description =
          "Eviction methods a rule's decision may name, comma-separated (default:"
              + " dry-run,delete,evict,kill); a decision naming another is refused.")
  String allowedMethods;

  @Option(
      names = "--state-dir",
      paramLabel = "DIR",
      description =
          "Where rule sets that failed and the last trusted one are remembered (default /var/lib/evictd).")
  String stateDir;

  @Option(
      names = "--rules-cache-dir",
      paramLabel = "DIR|off",
      description =
          "Where rule sets already checked are remembered, so a restart does not check an unchanged set"
              + " again (default STATEDIR/rules-cache; off: none).")
  String rulesCacheDir;

  @Option(
      names = "--rules-probation-syncs",
      paramLabel = "N",
      description = "Clean syncs a new rule set needs before it is trusted (default 6).")
  String rulesProbationSyncs;

  @Option(
      names = "--pods-cgroup",
      paramLabel = "NAME",
      description = "The cgroup holding the pods: kubepods (default) or kubepods.slice, or a path.")
  String podsCgroup;

  @Option(
      names = "--adaptive-poll",
      paramLabel = "BOOL",
      description =
          "Poll the memory usage files faster near a memory threshold (default true): cgroup v2's fast path.")
  String adaptivePoll;

  @CommandLine.Spec CommandLine.Model.CommandSpec spec;

  Map<String, Object> flags() {
    Map<String, Object> f = new LinkedHashMap<>();
    f.put("standalone", standalone);
    f.put("nodeName", nodeName);
    f.put("kubeletConfig", kubeletConfig);
    f.put("rules", rules);
    f.put("rulesSha256", rulesSha256);
    f.put("stats", stats);
    f.put("kubeletUrl", kubeletUrl);
    f.put("kubeletCaFile", kubeletCaFile);
    f.put("kubeletTokenFile", kubeletTokenFile);
    f.put("kubeletInsecureSkipTLSVerify", kubeletInsecureSkipTlsVerify);
    f.put("kubeletTlsServerName", kubeletTlsServerName);
    f.put("kubeletAllowHttp", kubeletAllowHttp);
    f.put("executor", executor);
    f.put("metricsAddress", metricsAddress);
    f.put("interval", interval);
    f.put("podCleanupTimeout", podCleanupTimeout);
    f.put("podsFile", podsFile);
    f.put("fsLayout", fsLayout);
    f.put("cgroupRoot", cgroupRoot);
    f.put("procRoot", procRoot);
    f.put("kubeletRootDir", kubeletRootDir);
    f.put("runtimeRootDir", runtimeRootDir);
    f.put("memcgNotifier", memcgNotifier);
    f.put("taints", taints);
    f.put("allowUnsafeRules", allowUnsafeRules);
    f.put("psiTrigger", psiTrigger);
    f.put("crictl", crictl);
    f.put("logFormat", logFormat);
    f.put("allowedMethods", allowedMethods);
    f.put("stateDir", stateDir);
    f.put("rulesProbationSyncs", rulesProbationSyncs);
    f.put("podsCgroup", podsCgroup);
    f.put("adaptivePoll", adaptivePoll);
    f.put("rulesCacheDir", rulesCacheDir);
    return f;
  }

  @Override
  public Integer call() throws InterruptedException {
    YamlNode file =
        config == null ? null : YamlNode.parse(config.toString(), CapturedInputs.read(config));
    AgentConfig c = AgentConfig.resolve(file, flags(), System.getenv());
    if ("json".equals(c.logFormat())) {
      Logging.json();
    }
    ignoreHangup();
    CountDownLatch stopped = new CountDownLatch(1);
    Agent agent = Agent.start(c, Clock.systemUTC());
    Thread hook =
        new Thread(
            () -> {
              agent.close();
              stopped.countDown();
            },
            "evictd-shutdown");
    Runtime.getRuntime().addShutdownHook(hook);
    stopped.await();
    return Main.OK;
  }

  private static void ignoreHangup() {
    try {
      sun.misc.SignalHandler before =
          sun.misc.Signal.handle(
              new sun.misc.Signal("HUP"),
              sig ->
                  org.slf4j.LoggerFactory.getLogger(RunCommand.class)
                      .info("SIGHUP ignored: rules are reloaded when their directory changes"));
      if (before == sun.misc.SignalHandler.SIG_IGN) {
        // started with SIGHUP ignored (nohup): the JVM keeps it that way and installs no handler
        org.slf4j.LoggerFactory.getLogger(RunCommand.class)
            .info("SIGHUP is ignored (it was when evictd started, e.g. under nohup)");
      }
    } catch (IllegalArgumentException e) {
      // no SIGHUP on this platform, or the JVM was started with -Xrs: nothing to ignore
    }
  }
}
