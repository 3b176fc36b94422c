package dev.evictd.agent;

import dev.evictd.agent.Setting.Check;
import dev.evictd.api.ConfigException;
import dev.evictd.api.EvictionMethod;
import dev.evictd.api.FsLayout;
import dev.evictd.config.IoErrors;
import dev.evictd.config.YamlNode;
import dev.evictd.kube.KubeletEndpoint;
import java.lang.reflect.InvocationTargetException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Collections;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.Locale;
import java.util.Map;
import java.util.Set;

/**
 * The agent's configuration. Every component is a key of the YAML file ({@code --config}) and a
 * flag of {@code evictd run} of the same name (flags win), declared once by its {@link Setting}:
 * the key, the type, the default and the help ({@code evictd run --help}, {@link ConfigKey}). The
 * node name also comes from the environment variable {@code NODE_NAME}. Unknown keys, bad values
 * and contradictions are refused with the key and the value.
 */
public record AgentConfig(
    @Setting(
            label = "NAME",
            help = "This node (default: $NODE_NAME; the host name in standalone mode).")
        String nodeName,
    @Setting(label = "FILE", help = "Read eviction settings from the kubelet's configuration file.")
        Path kubeletConfig,
    @Setting(
            fileOnly = true,
            help =
                "Inline eviction settings (the KubeletConfiguration eviction fields), when no"
                    + " kubeletConfig is given (default: the kubelet's defaults).")
        YamlNode eviction,
    @Setting(
            label = "DIR",
            help = "Rules directory, watched and hot-reloaded (default: the packaged rules).")
        Path rules,
    @Setting(
            label = "HEX",
            check = Check.SHA256,
            help = "Accept only the rule set with this SHA-256.")
        String rulesSha256,
    @Setting(
            label = "BOOL",
            dflt = "false",
            help = "Turn the policy lint off (trusted experiments only; logged loudly).")
        boolean allowUnsafeRules,
    @Setting(
            label = "SOURCE",
            choices = {"kubelet", "kubelet-proxy", "host"},
            help =
                "Where statistics come from: kubelet (the node's own kubelet's Summary API, the"
                    + " default), kubelet-proxy (the same through the API server's node proxy:"
                    + " needs nodes/proxy, an opt-in) or host (cgroups, statvfs, /proc; the"
                    + " default and the only choice in standalone mode).")
        String stats,
    @Setting(
            group = "kubelet",
            label = "URL",
            check = Check.HTTP_URL,
            help =
                "The kubelet to read directly, https://NODE_IP:10250 (run: the Summary, default"
                    + " https://$HOST_IP:10250 with HOST_IP from the downward API; capture:"
                    + " /configz and the summary, default through the API server's node proxy).")
        String kubeletUrl,
    @Setting(
            group = "kubelet",
            label = "FILE",
            help = "CA of the kubelet's serving certificate (default: the service account's CA).")
        Path kubeletCaFile,
    @Setting(
            group = "kubelet",
            label = "FILE",
            help = "Token for the kubelet (default: the service account's token).")
        Path kubeletTokenFile,
    @Setting(
            key = "kubeletInsecureSkipTLSVerify",
            group = "kubelet",
            help =
                "Trust any kubelet certificate (insecure: warned about at start and in /readyz).")
        boolean kubeletInsecureSkipTlsVerify,
    @Setting(
            group = "kubelet",
            label = "NAME",
            help = "The name the kubelet's certificate must carry, when not the URL's host.")
        String kubeletTlsServerName,
    @Setting(group = "kubelet", help = "Accept an http:// kubelet URL (no token is then sent).")
        boolean kubeletAllowHttp,
    @Setting(
            label = "METHOD",
            dflt = "dry-run",
            help =
                "The eviction method for decisions that choose none: dry-run, delete, evict or"
                    + " kill (always dry-run in standalone mode).")
        EvictionMethod executor,
    @Setting(
            label = "HOST:PORT",
            dflt = "127.0.0.1:9091",
            check = Check.HOST_PORT,
            help = "Where /metrics, /healthz and /readyz listen.")
        String metricsAddress,
    @Setting(
            label = "DURATION",
            dflt = "10s",
            check = Check.AT_LEAST_100MS,
            help = "Monitoring interval, at least 100ms.")
        Duration interval,
    @Setting(
            label = "DURATION",
            dflt = "30s",
            check = Check.NOT_NEGATIVE,
            help = "How long to wait for an evicted pod to go.")
        Duration podCleanupTimeout,
    @Setting(
            dflt = "false",
            help = "No cluster: host statistics, pods from --pods-file (or none), dry run.")
        boolean standalone,
    @Setting(
            label = "FILE",
            help =
                "Pods for standalone mode (PodList, List or YAML list); pods bound to other nodes"
                    + " than nodeName and finished pods are left out, as the kubelet leaves them"
                    + " out.")
        Path podsFile,
    @Setting(
            label = "LAYOUT",
            dflt = "auto",
            help =
                "The filesystem layout: auto (inferred from the first summary), shared, dedicated"
                    + " or split.")
        FsLayout fsLayout,
    @Setting(
            group = "host",
            label = "DIR",
            dflt = "/sys/fs/cgroup",
            help = "The cgroup filesystem root (host statistics, notifiers, kill).")
        Path cgroupRoot,
    @Setting(group = "host", label = "DIR", dflt = "/proc", help = "The proc filesystem root.")
        Path procRoot,
    @Setting(
            group = "host",
            label = "DIR",
            dflt = "/var/lib/kubelet",
            help = "The kubelet's root directory, measured as nodefs (/ when missing).")
        Path kubeletRootDir,
    @Setting(
            group = "host",
            label = "DIR",
            dflt = "/var/lib/containerd",
            aliases = "--runtime-root",
            help = "The container runtime's root directory, measured as imagefs (/ when missing).")
        Path runtimeRootDir,
    @Setting(label = "BOOL", dflt = "true", help = "Register memcg thresholds for immediate syncs.")
        boolean memcgNotifier,
    @Setting(
            label = "TRIGGER",
            help =
                "A PSI trigger on /proc/pressure/memory, e.g. \"some 150000 2000000\" (default:"
                    + " none).")
        String psiTrigger,
    @Setting(
            label = "CMD",
            dflt = "crictl",
            help = "The crictl command for node-level reclaim, looked up on PATH.")
        String crictl,
    @Setting(
            label = "FORMAT",
            dflt = "text",
            choices = {"text", "json"},
            help = "Log format: text or json.")
        String logFormat,
    @Setting(
            label = "METHODS",
            dflt = "dry-run,delete,evict,kill",
            help =
                "Eviction methods a rule's decision may name (a list in the file, comma-separated"
                    + " as a flag); a decision naming another is refused. The executor must be one"
                    + " of them.")
        Set<EvictionMethod> allowedMethods,
    @Setting(
            label = "DIR",
            dflt = "/var/lib/evictd",
            help =
                "Where rule sets that failed and the last trusted one are remembered across"
                    + " restarts (a hostPath on a node).")
        Path stateDir,
    @Setting(
            label = "N",
            dflt = "6",
            help =
                "Clean syncs a new rule set needs before it is trusted; the default is a minute at"
                    + " the default interval.")
        int rulesProbationSyncs,
    @Setting(
            label = "BOOL",
            dflt = "false",
            help =
                "Taint the own Node NoSchedule (evictd.dev/memory-pressure, disk-pressure,"
                    + " pid-pressure) while the condition holds (never in dry run or standalone"
                    + " mode).")
        boolean taints,
    @Setting(
            group = "host",
            label = "NAME",
            dflt = "kubepods",
            help =
                "The cgroup holding the pods: kubepods or kubepods.slice (both kubelet drivers'"
                    + " forms find either's directory), or a cgroup path.")
        String podsCgroup,
    @Setting(
            label = "BOOL",
            dflt = "true",
            help =
                "Poll the memory usage files faster near a memory threshold: cgroup v2's fast"
                    + " path, cgroup v1's safety net.")
        boolean adaptivePoll,
    @Setting(
            label = "DIR",
            help =
                "Where rule sets already checked are remembered, so a restart does not check an"
                    + " unchanged set again (default STATEDIR/rules-cache; off: none).")
        Path rulesCacheDir,
    @Setting(
            label = "WHEN",
            dflt = "near",
            choices = {"near", "start", "off"},
            help =
                "When the decision path of a rule set is warmed up (a few hundred scratch syncs of"
                    + " it under memory pressure on made-up inputs, at most 1 s of CPU, nothing"
                    + " acted on), so that a real pressure sync runs compiled code: near (after the"
                    + " first sync whose memory signal is near a threshold, and before a set"
                    + " reloaded then goes live), start (after start-up and before every reloaded"
                    + " set goes live) or off.")
        String rulesWarmUp) {

  /** Every key of the configuration file (and the flag of the same name). */
  public static final Set<String> KEYS = keys();

  private static Set<String> keys() {
    Set<String> s = new LinkedHashSet<>();
    ConfigKey.ALL.forEach(k -> s.add(k.key()));
    return Collections.unmodifiableSet(s);
  }

  /**
   * Checks that the files and directories the configuration names exist (on the node, at start-up).
   */
  public void checkPaths() {
    String notAFile = kubeletConfig == null ? null : IoErrors.notAFile(kubeletConfig);
    if (notAFile != null) {
      throw new ConfigException("kubeletConfig " + kubeletConfig + ": " + notAFile);
    }
    if (rules != null && !Files.isDirectory(rules)) {
      throw new ConfigException("rules: no such directory: " + rules);
    }
    notAFile = podsFile == null ? null : IoErrors.notAFile(podsFile);
    if (notAFile != null) {
      throw new ConfigException("podsFile " + podsFile + ": " + notAFile);
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
   * Each value is parsed as its {@link ConfigKey} says; what follows checks keys against each other
   * and works out the defaults that depend on other settings or the environment.
   *
   * @param file the configuration file's root mapping, or null
   * @param flags values given as flags, by key: text, or values a flag parser already typed
   * @param env the environment (NODE_NAME, HOST_IP)
   */
  public static AgentConfig resolve(
      YamlNode file, Map<String, Object> flags, Map<String, String> env) {
    Map<String, Object> given = new LinkedHashMap<>();
    Map<String, String> where = new LinkedHashMap<>();
    if (file != null && !file.isNull()) {
      YamlNode kind = file.isMap() ? file.get("kind") : null;
      if (kind != null && !KEYS.contains("kind")) {
        // most often the kubelet's file, or another capture, passed as the agent's
        throw kind.error(
            kind.describe()
                + ": an agent configuration has no kind"
                + ("\"KubeletConfiguration\"".equals(kind.describe())
                    ? " (the kubelet's file goes in kubeletConfig: FILE)"
                    : ""));
      }
      file.requireKnownKeys(KEYS);
      for (var e : file.asMap().entrySet()) {
        if (!e.getValue().isNull()) {
          given.put(e.getKey(), e.getValue());
          where.put(e.getKey(), e.getValue().where());
        }
      }
    }
    for (var e : flags.entrySet()) {
      if (e.getValue() != null) {
        if (!KEYS.contains(e.getKey())) {
          throw new ConfigException("unknown setting " + e.getKey());
        }
        given.put(e.getKey(), e.getValue());
        where.put(e.getKey(), ConfigKey.of(e.getKey()).flag());
      }
    }
    Map<String, Object> v = new HashMap<>();
    for (ConfigKey k : ConfigKey.ALL) {
      Object g = given.get(k.key());
      v.put(k.key(), g == null ? k.defaultValue() : k.read(g, where.get(k.key())));
    }
    Values r = new Values(v, where);
    boolean standalone = r.get("standalone");
    String nodeName = r.get("nodeName");
    if (nodeName == null) {
      nodeName = env.get("NODE_NAME");
    }
    if (nodeName == null || nodeName.isBlank()) {
      if (!standalone) {
        throw new ConfigException(
            "the node name is required: --node-name, nodeName in the config file, or NODE_NAME");
      }
      nodeName = hostname();
    }
    v.put("nodeName", nodeName);
    String stats = r.get("stats");
    if (stats == null) {
      v.put("stats", standalone ? "host" : "kubelet");
    } else if (standalone && !stats.equals("host")) {
      throw new ConfigException(
          r.at("stats") + ": stats kubelet needs a cluster; standalone mode reads host statistics");
    }
    EvictionMethod executor = r.get("executor");
    Set<EvictionMethod> allowedMethods = r.get("allowedMethods");
    if (!standalone && !allowedMethods.contains(executor)) {
      throw new ConfigException(
          r.at("executor")
              + ": "
              + methodName(executor)
              + " is not one of allowedMethods "
              + allowedMethods.stream().map(AgentConfig::methodName).toList());
    }
    if (standalone) {
      v.put("executor", EvictionMethod.DRY_RUN);
    }
    if (r.get("kubeletConfig") != null && r.get("eviction") != null) {
      throw new ConfigException(
          r.at("kubeletConfig") + ": give either kubeletConfig or eviction, not both");
    }
    if (r.get("podsFile") != null && !standalone) {
      throw new ConfigException(
          r.at("podsFile") + ": pods come from a file only in standalone mode");
    }
    String hostIp = env.get("HOST_IP");
    if (r.get("kubeletUrl") == null && hostIp != null && !hostIp.isBlank()) {
      v.put("kubeletUrl", KubeletEndpoint.defaultUrl(hostIp.strip()));
    }
    boolean insecure = r.get("kubeletInsecureSkipTLSVerify");
    Path caFile = r.get("kubeletCaFile");
    if (insecure && caFile != null) {
      throw new ConfigException(
          r.at("kubeletInsecureSkipTLSVerify")
              + ": give either kubeletCaFile or kubeletInsecureSkipTLSVerify, not both");
    }
    v.put(
        "kubeletCaFile",
        insecure ? null : caFile == null ? KubeletEndpoint.SERVICE_ACCOUNT_CA : caFile);
    if (r.get("kubeletTokenFile") == null) {
      v.put("kubeletTokenFile", KubeletEndpoint.SERVICE_ACCOUNT_TOKEN);
    }
    Path cache = r.get("rulesCacheDir");
    v.put(
        "rulesCacheDir", rulesCacheDir(cache == null ? null : cache.toString(), r.get("stateDir")));
    return construct(v);
  }

  /** The rule-set cache: {@code off} for none, default {@code STATEDIR/rules-cache}. */
  static Path rulesCacheDir(String value, Path stateDir) {
    if (value == null || value.isBlank()) {
      return stateDir.resolve("rules-cache");
    }
    return value.trim().equalsIgnoreCase("off") ? null : Path.of(value.trim());
  }

  /** The record from values by key, in component order. */
  private static AgentConfig construct(Map<String, Object> v) {
    Object[] args = ConfigKey.ALL.stream().map(k -> v.get(k.key())).toArray();
    Class<?>[] types = ConfigKey.ALL.stream().map(ConfigKey::type).toArray(Class<?>[]::new);
    try {
      return AgentConfig.class.getDeclaredConstructor(types).newInstance(args);
    } catch (InvocationTargetException e) {
      if (e.getCause() instanceof RuntimeException re) {
        throw re;
      }
      throw new IllegalStateException(e.getCause());
    } catch (ReflectiveOperationException e) {
      throw new IllegalStateException("AgentConfig's components and keys disagree", e);
    }
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

  /** The parsed values by key, with the place each was given for messages. */
  private record Values(Map<String, Object> v, Map<String, String> where) {
    String at(String key) {
      return where.getOrDefault(key, key);
    }

    @SuppressWarnings("unchecked")
    <T> T get(String key) {
      return (T) v.get(key);
    }
  }
}
