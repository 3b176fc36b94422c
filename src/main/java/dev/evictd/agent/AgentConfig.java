package dev.evictd.agent;

import dev.evictd.api.ConfigException;
import dev.evictd.api.EvictionMethod;
import dev.evictd.api.FsLayout;
import dev.evictd.config.GoDuration;
import dev.evictd.config.YamlNode;
import dev.evictd.kube.KubeletEndpoint;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.Locale;
import java.util.Map;
import java.util.Set;

/**
 * The agent's configuration. Every field can be set in a YAML file ({@code --config}) and by a flag
 * of the same name (flags win); the node name also comes from the environment variable {@code
 * NODE_NAME}. Unknown keys, bad values and contradictions are refused with the key and the value.
 *
 * @param nodeName the node this agent runs on
 * @param kubeletConfig the kubelet's configuration file to read eviction settings from, or null
 * @param eviction inline eviction settings (KubeletConfiguration eviction fields), used when no
 *     kubelet config file is given; null: the kubelet's defaults
 * @param rules the rules directory, or null for the packaged rules
 * @param rulesSha256 when set, the only rule set (SHA-256) the agent accepts
 * @param allowUnsafeRules turn the policy lint off (trusted experiments only; logged)
 * @param stats where statistics come from: kubelet (the node's own kubelet's Summary API, the
 *     default), kubelet-proxy (the same through the API server's node proxy: needs nodes/proxy, an
 *     opt-in) or host (cgroups, statvfs, /proc)
 * @param kubeletUrl the kubelet's base URL for direct Summary reads (default
 *     https://$HOST_IP:10250, HOST_IP from the downward API's status.hostIP), or null when there is
 *     none
 * @param kubeletCaFile the CA of the kubelet's serving certificate (default: the service account's
 *     CA)
 * @param kubeletTokenFile the token sent to the kubelet (default: the service account's token)
 * @param kubeletInsecureSkipTlsVerify trust any kubelet certificate (warned about at start and in
 *     /readyz)
 * @param kubeletTlsServerName the name the kubelet's certificate must carry when it is not the
 *     URL's host, or null
 * @param kubeletAllowHttp accept an http:// kubeletUrl (no token is then sent)
 * @param executor the eviction method for decisions that do not choose one: dry-run (default),
 *     delete, evict, kill
 * @param metricsAddress HOST:PORT of /metrics, /healthz and /readyz (default 127.0.0.1:9091)
 * @param interval the monitoring interval (default 10s)
 * @param podCleanupTimeout how long to wait for an evicted pod to go (default 30s)
 * @param standalone no cluster: host statistics, pods from a file (or none), dry-run
 * @param podsFile pods for standalone mode (a PodList or list), or null
 * @param fsLayout the filesystem layout, or null to infer it from the first summary
 * @param cgroupRoot the cgroup filesystem root (host statistics, notifiers, kill)
 * @param procRoot the proc filesystem root
 * @param kubeletRootDir the kubelet's root directory (nodefs)
 * @param runtimeRootDir the container runtime's root directory (imagefs)
 * @param memcgNotifier whether to register memcg thresholds for immediate syncs
 * @param psiTrigger a PSI trigger on /proc/pressure/memory ("some 150000 2000000"), or null for
 *     none
 * @param crictl the crictl command for node-level reclaim
 * @param logFormat text or json
 * @param allowedMethods the eviction methods a rule's decision may name (default: delete, evict,
 *     kill, dry-run); a decision naming another is refused. The executor must be one of them.
 * @param stateDir where the agent remembers rule sets across restarts (bad ones, the last trusted
 *     one); default /var/lib/evictd, a hostPath on a node
 * @param rulesProbationSyncs how many clean syncs a new rule set needs before it is trusted
 *     (default 6: a minute at the default interval)
 * @param taints whether to put a NoSchedule taint {@code evictd.dev/memory-pressure}, {@code
 *     evictd.dev/disk-pressure} or {@code evictd.dev/pid-pressure} on the agent's own Node while
 *     the condition holds (default false; never in dry run or standalone mode)
 * @param podsCgroup the cgroup holding the pods ({@code kubepods}, {@code kubepods.slice}, a cgroup
 *     path); both kubelet drivers' forms find either's directory
 * @param adaptivePoll whether to poll the memory usage files at an interval that shrinks near a
 *     memory threshold (the v2 fast path, the v1 safety net)
 * @param rulesCacheDir where rule sets already checked are remembered (verified entries, see {@code
 *     RuleSetCache}); default {@code STATEDIR/rules-cache}, {@code off} (null) for none
 */
public record AgentConfig(
    String nodeName,
    Path kubeletConfig,
    YamlNode eviction,
    Path rules,
    String rulesSha256,
    boolean allowUnsafeRules,
    String stats,
    String kubeletUrl,
    Path kubeletCaFile,
    Path kubeletTokenFile,
    boolean kubeletInsecureSkipTlsVerify,
    String kubeletTlsServerName,
    boolean kubeletAllowHttp,
    EvictionMethod executor,
    String metricsAddress,
    Duration interval,
    Duration podCleanupTimeout,
    boolean standalone,
    Path podsFile,
    FsLayout fsLayout,
    Path cgroupRoot,
    Path procRoot,
    Path kubeletRootDir,
    Path runtimeRootDir,
    boolean memcgNotifier,
    String psiTrigger,
    String crictl,
    String logFormat,
    Set<EvictionMethod> allowedMethods,
    Path stateDir,
    int rulesProbationSyncs,
    boolean taints,
    String podsCgroup,
    boolean adaptivePoll,
    Path rulesCacheDir) {

  /** Every key of the configuration file (and the flag of the same name). */
  public static final Set<String> KEYS =
      Set.of(
          "nodeName",
          "kubeletConfig",
          "eviction",
          "rules",
          "rulesSha256",
          "allowUnsafeRules",
          "stats",
          "kubeletUrl",
          "kubeletCaFile",
          "kubeletTokenFile",
          "kubeletInsecureSkipTLSVerify",
          "kubeletTlsServerName",
          "kubeletAllowHttp",
          "executor",
          "metricsAddress",
          "interval",
          "podCleanupTimeout",
          "standalone",
          "podsFile",
          "fsLayout",
          "cgroupRoot",
          "procRoot",
          "kubeletRootDir",
          "runtimeRootDir",
          "memcgNotifier",
          "psiTrigger",
          "crictl",
          "logFormat",
          "allowedMethods",
          "stateDir",
          "rulesProbationSyncs",
          "taints",
          "podsCgroup",
          "adaptivePoll",
          "rulesCacheDir");

  /**
   * Checks that the files and directories the configuration names exist (on the node, at start-up).
   */
  public void checkPaths() {
    if (kubeletConfig != null && !Files.isRegularFile(kubeletConfig)) {
      throw new ConfigException("kubeletConfig: no such file: " + kubeletConfig);
    }
    if (rules != null && !Files.isDirectory(rules)) {
      throw new ConfigException("rules: no such directory: " + rules);
    }
    if (podsFile != null && !Files.isRegularFile(podsFile)) {
      throw new ConfigException("podsFile: no such file: " + podsFile);
    }
    if (!standalone && stats.equals("kubelet")) {
      kubeletEndpoint();
    }
  }

  /** Whether nothing is ever carried out (standalone mode or the dry-run executor). */
  public boolean dryRun() {
    return standalone || executor == EvictionMethod.DRY_RUN;
  }

  /**
   * Builds the configuration from a file's values, then flags (which win), then the environment.
   *
   * @param file the configuration file's root mapping, or null
   * @param flags values given as flags, by key (strings, or booleans for switches)
   * @param env the environment (NODE_NAME)
   */
  public static AgentConfig resolve(
      YamlNode file, Map<String, Object> flags, Map<String, String> env) {
    Map<String, Object> v = new LinkedHashMap<>();
    Map<String, String> where = new LinkedHashMap<>();
    YamlNode eviction = null;
    if (file != null && !file.isNull()) {
      file.asMap();
      file.requireKnownKeys(KEYS);
      for (var e : file.asMap().entrySet()) {
        YamlNode n = e.getValue();
        if (n.isNull()) {
          continue;
        }
        if (e.getKey().equals("eviction")) {
          n.asMap();
          eviction = n;
          continue;
        }
        v.put(e.getKey(), n.kind() == YamlNode.Kind.SCALAR ? n.asText() : n);
        where.put(e.getKey(), n.where());
      }
    }
    for (var e : flags.entrySet()) {
      if (e.getValue() != null) {
        if (!KEYS.contains(e.getKey())) {
          throw new ConfigException("unknown setting " + e.getKey());
        }
        v.put(e.getKey(), e.getValue());
        where.put(e.getKey(), "--" + flagName(e.getKey()));
      }
    }
    Reader r = new Reader(v, where);
    boolean standalone = r.bool("standalone", false);
    String nodeName = r.string("nodeName", env.get("NODE_NAME"));
    if (nodeName == null || nodeName.isBlank()) {
      if (!standalone) {
        throw new ConfigException(
            "the node name is required: --node-name, nodeName in the config file, or NODE_NAME");
      }
      nodeName = hostname();
    }
    String stats =
        r.choice(
            "stats", standalone ? "host" : "kubelet", Set.of("kubelet", "kubelet-proxy", "host"));
    if (standalone && !stats.equals("host")) {
      throw new ConfigException(
          r.at("stats") + ": stats kubelet needs a cluster; standalone mode reads host statistics");
    }
    String executorText =
        r.choice("executor", "dry-run", Set.of("dry-run", "delete", "evict", "kill"));
    EvictionMethod executor =
        EvictionMethod.valueOf(executorText.toUpperCase(Locale.ROOT).replace('-', '_'));
    Set<EvictionMethod> allowedMethods = r.methods("allowedMethods");
    if (!standalone && !allowedMethods.contains(executor)) {
      throw new ConfigException(
          r.at("executor")
              + ": "
              + executorText
              + " is not one of allowedMethods "
              + allowedMethods.stream().map(AgentConfig::methodName).toList());
    }
    String layoutText =
        r.choice("fsLayout", "auto", Set.of("auto", "shared", "dedicated", "split"));
    FsLayout layout = layoutText.equals("auto") ? null : FsLayout.fromKey(layoutText).orElseThrow();
    Path kubeletConfig = r.path("kubeletConfig", null);
    if (kubeletConfig != null && eviction != null) {
      throw new ConfigException(
          r.at("kubeletConfig") + ": give either kubeletConfig or eviction, not both");
    }
    Path rules = r.path("rules", null);
    String sha = r.string("rulesSha256", null);
    if (sha != null && !sha.matches("[0-9a-f]{64}")) {
      throw new ConfigException(
          r.at("rulesSha256") + ": expected 64 lowercase hex digits, found \"" + sha + "\"");
    }
    Path podsFile = r.path("podsFile", null);
    if (podsFile != null && !standalone) {
      throw new ConfigException(
          r.at("podsFile") + ": pods come from a file only in standalone mode");
    }
    Duration interval = r.duration("interval", Duration.ofSeconds(10));
    if (interval.compareTo(Duration.ofMillis(100)) < 0) {
      throw new ConfigException(
          r.at("interval") + ": must be at least 100ms: " + GoDuration.format(interval));
    }
    Duration cleanup = r.duration("podCleanupTimeout", Duration.ofSeconds(30));
    if (cleanup.isNegative()) {
      throw new ConfigException(r.at("podCleanupTimeout") + ": must not be negative");
    }
    String psi = r.string("psiTrigger", null);
    String address = r.string("metricsAddress", "127.0.0.1:9091");
    HttpEndpoints.parse(address);
    String hostIp = env.get("HOST_IP");
    String kubeletUrl =
        r.string(
            "kubeletUrl",
            hostIp == null || hostIp.isBlank() ? null : KubeletEndpoint.defaultUrl(hostIp.strip()));
    if (kubeletUrl != null && !kubeletUrl.matches("https?://[^\\s]+")) {
      throw new ConfigException(
          r.at("kubeletUrl") + ": expected an http(s) URL, found \"" + kubeletUrl + "\"");
    }
    boolean insecure = r.bool("kubeletInsecureSkipTLSVerify", false);
    Path caFile = r.path("kubeletCaFile", null);
    if (insecure && caFile != null) {
      throw new ConfigException(
          r.at("kubeletInsecureSkipTLSVerify")
              + ": give either kubeletCaFile or kubeletInsecureSkipTLSVerify, not both");
    }
    return new AgentConfig(
        nodeName,
        kubeletConfig,
        eviction,
        rules,
        sha,
        r.bool("allowUnsafeRules", false),
        stats,
        kubeletUrl,
        insecure ? null : caFile == null ? KubeletEndpoint.SERVICE_ACCOUNT_CA : caFile,
        r.path("kubeletTokenFile", KubeletEndpoint.SERVICE_ACCOUNT_TOKEN),
        insecure,
        r.string("kubeletTlsServerName", null),
        r.bool("kubeletAllowHttp", false),
        standalone ? EvictionMethod.DRY_RUN : executor,
        address,
        interval,
        cleanup,
        standalone,
        podsFile,
        layout,
        r.path("cgroupRoot", Path.of("/sys/fs/cgroup")),
        r.path("procRoot", Path.of("/proc")),
        r.path("kubeletRootDir", Path.of("/var/lib/kubelet")),
        r.path("runtimeRootDir", Path.of("/var/lib/containerd")),
        r.bool("memcgNotifier", true),
        psi,
        r.string("crictl", "crictl"),
        r.choice("logFormat", "text", Set.of("text", "json")),
        allowedMethods,
        r.path("stateDir", Path.of("/var/lib/evictd")),
        r.positiveInt("rulesProbationSyncs", 6),
        r.bool("taints", false),
        r.string("podsCgroup", "kubepods"),
        r.bool("adaptivePoll", true),
        rulesCacheDir(
            r.string("rulesCacheDir", null), r.path("stateDir", Path.of("/var/lib/evictd"))));
  }

  /** The rule-set cache: {@code off} for none, default {@code STATEDIR/rules-cache}. */
  static Path rulesCacheDir(String value, Path stateDir) {
    if (value == null || value.isBlank()) {
      return stateDir.resolve("rules-cache");
    }
    return value.trim().equalsIgnoreCase("off") ? null : Path.of(value.trim());
  }

  /** The configuration's name of a method: {@code dry-run}, {@code delete}... */
  static String methodName(EvictionMethod m) {
    return m.name().toLowerCase(Locale.ROOT).replace('_', '-');
  }

  /** The flag for a key: {@code metricsAddress} → {@code metrics-address}. */
  public static String flagName(String key) {
    // an acronym is one word: kubeletInsecureSkipTLSVerify -> kubelet-insecure-skip-tls-verify
    return key.replaceAll("(?<=[a-z0-9])(?=[A-Z])|(?<=[A-Z])(?=[A-Z][a-z])", "-")
        .toLowerCase(Locale.ROOT);
  }

  /**
   * The kubelet this agent reads with {@code stats: kubelet}, checked: the URL (https, or http when
   * explicitly allowed), the token and CA files. Every problem is one line naming the setting.
   */
  public KubeletEndpoint kubeletEndpoint() {
    if (kubeletUrl == null) {
      throw new ConfigException(
          "kubeletUrl: stats kubelet reads the node's own kubelet at https://$HOST_IP:10250: set"
              + " HOST_IP (the downward API's status.hostIP) or kubeletUrl, or choose stats"
              + " kubelet-proxy or host");
    }
    KubeletEndpoint e =
        new KubeletEndpoint(
            java.net.URI.create(kubeletUrl),
            kubeletTokenFile,
            kubeletCaFile,
            kubeletInsecureSkipTlsVerify,
            kubeletTlsServerName,
            kubeletAllowHttp);
    e.check();
    return e;
  }

  private static String hostname() {
    try {
      return java.net.InetAddress.getLocalHost().getHostName();
    } catch (java.net.UnknownHostException e) {
      return "localhost";
    }
  }

  /** Typed access to the merged values, with the source of each in messages. */
  private record Reader(Map<String, Object> v, Map<String, String> where) {
    String at(String key) {
      return where.getOrDefault(key, key);
    }

    String string(String key, String dflt) {
      Object o = v.get(key);
      if (o == null) {
        return dflt;
      }
      if (o instanceof YamlNode n) {
        throw new ConfigException(at(key) + ": expected a value, found " + n.describe());
      }
      return o.toString();
    }

    boolean bool(String key, boolean dflt) {
      Object o = v.get(key);
      if (o == null) {
        return dflt;
      }
      if (o instanceof Boolean b) {
        return b;
      }
      String s = string(key, null).toLowerCase(Locale.ROOT);
      if (s.equals("true")) {
        return true;
      }
      if (s.equals("false")) {
        return false;
      }
      throw new ConfigException(at(key) + ": expected true or false, found \"" + s + "\"");
    }

    String choice(String key, String dflt, Set<String> allowed) {
      String s = string(key, dflt);
      if (!allowed.contains(s)) {
        throw new ConfigException(
            at(key)
                + ": unknown value \""
                + s
                + "\" (expected one of "
                + new java.util.TreeSet<>(allowed)
                + ")");
      }
      return s;
    }

    /**
     * A list of method names (a YAML sequence, or comma-separated as a flag); all but default when
     * unset.
     */
    Set<EvictionMethod> methods(String key) {
      Object o = v.get(key);
      Set<String> names = Set.of("dry-run", "delete", "evict", "kill");
      java.util.List<String> given = new java.util.ArrayList<>();
      if (o == null) {
        given.addAll(names);
      } else if (o instanceof YamlNode n && n.isSeq()) {
        for (YamlNode e : n.asList()) {
          given.add(e.asString(false));
        }
      } else {
        for (String part : string(key, "").split(",", -1)) {
          given.add(part.trim());
        }
      }
      java.util.EnumSet<EvictionMethod> out = java.util.EnumSet.noneOf(EvictionMethod.class);
      for (String g : given) {
        if (!names.contains(g)) {
          throw new ConfigException(
              at(key)
                  + ": unknown method \""
                  + g
                  + "\" (expected some of "
                  + new java.util.TreeSet<>(names)
                  + ")");
        }
        out.add(EvictionMethod.valueOf(g.toUpperCase(Locale.ROOT).replace('-', '_')));
      }
      if (out.isEmpty()) {
        throw new ConfigException(at(key) + ": at least one method is needed");
      }
      return java.util.Collections.unmodifiableSet(out);
    }

    int positiveInt(String key, int dflt) {
      String s = string(key, null);
      if (s == null) {
        return dflt;
      }
      try {
        int n = Integer.parseInt(s.trim());
        if (n >= 1) {
          return n;
        }
      } catch (NumberFormatException e) {
        // refused below
      }
      throw new ConfigException(
          at(key) + ": expected a whole number of at least 1, found \"" + s + "\"");
    }

    Path path(String key, Path dflt) {
      String s = string(key, null);
      return s == null ? dflt : Path.of(s);
    }

    Duration duration(String key, Duration dflt) {
      String s = string(key, null);
      if (s == null) {
        return dflt;
      }
      try {
        return GoDuration.parse(s);
      } catch (IllegalArgumentException e) {
        throw new ConfigException(at(key) + ": " + e.getMessage());
      }
    }
  }
}
