package dev.evictd.docker;

import static org.assertj.core.api.Assertions.assertThat;

import dev.evictd.agent.AgentConfig;
import dev.evictd.config.YamlNode;
import dev.evictd.engine.RuleSet;
import dev.evictd.ruleset.RuleCompiler;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/**
 * No Docker engine runs here: the manifests are checked statically against the code that will run
 * in them.
 */
class DockerManifestsTest {
  static final Path DOCKER = Path.of("docker");

  static List<YamlNode> docs(String file) throws IOException {
    Path p = DOCKER.resolve(file);
    return YamlNode.parseAll(p.toString(), Files.readAllBytes(p));
  }

  static YamlNode at(YamlNode n, String... path) {
    for (String k : path) {
      n = n.get(k);
      assertThat(n).as(String.join(".", path)).isNotNull();
    }
    return n;
  }

  static YamlNode container() throws IOException {
    YamlNode ds = docs("daemonset.yaml").get(0);
    return at(ds, "spec", "template", "spec", "containers").asList().get(0);
  }

  /** The downward API's values for the DaemonSet's env, as the kubelet would set them. */
  static final Map<String, String> ENV =
      Map.of("NODE_NAME", "node-1", "HOST_IP", "10.0.0.5", "POD_IP", "10.1.2.3");

  /**
   * The agent's configuration as the container gets it: agent.yaml, the container's {@code
   * --key=value} args with {@code $(VAR)} expanded by the kubelet, and the environment.
   */
  static AgentConfig agentConfig() throws IOException {
    Path p = DOCKER.resolve("agent.yaml");
    Map<String, Object> flags = new HashMap<>();
    for (YamlNode a : at(container(), "args").asList()) {
      String arg = a.asText();
      if (!arg.startsWith("--") || !arg.contains("=")) {
        continue;
      }
      String flag = arg.substring(2, arg.indexOf('='));
      String value = arg.substring(arg.indexOf('=') + 1);
      for (var e : ENV.entrySet()) {
        value = value.replace("$(" + e.getKey() + ")", e.getValue());
      }
      String key =
          AgentConfig.KEYS.stream()
              .filter(k -> AgentConfig.flagName(k).equals(flag))
              .findFirst()
              .orElseThrow(() -> new AssertionError("no setting for " + arg));
      flags.put(key, value);
    }
    // every $(VAR) the args use is set in the container's env
    List<String> envNames = new ArrayList<>();
    at(container(), "env").asList().forEach(e -> envNames.add(at(e, "name").asText()));
    for (YamlNode a : at(container(), "args").asList()) {
      var m = java.util.regex.Pattern.compile("\\$\\(([A-Z_]+)\\)").matcher(a.asText());
      while (m.find()) {
        assertThat(envNames).as("env for $(%s)", m.group(1)).contains(m.group(1));
      }
    }
    return AgentConfig.resolve(YamlNode.parse(p.toString(), Files.readAllBytes(p)), flags, ENV);
  }

  /** The fieldPath a container env variable comes from. */
  static String fieldPath(String name) throws IOException {
    for (YamlNode e : at(container(), "env").asList()) {
      if (name.equals(at(e, "name").asText())) {
        return at(e, "valueFrom", "fieldRef", "fieldPath").asText();
      }
    }
    throw new AssertionError("no env " + name);
  }

  @Test
  void daemonSetIsNodeCriticalAndLeastPrivileged() throws IOException {
    YamlNode ds = docs("daemonset.yaml").get(0);
    assertThat(at(ds, "kind").asText()).isEqualTo("DaemonSet");
    YamlNode spec = at(ds, "spec", "template", "spec");
    assertThat(at(spec, "priorityClassName").asText()).isEqualTo("system-node-critical");
    YamlNode sc = at(container(), "securityContext");
    assertThat(at(sc, "readOnlyRootFilesystem").asBoolean()).isTrue();
    assertThat(at(sc, "allowPrivilegeEscalation").asBoolean()).isFalse();
    assertThat(at(sc, "capabilities", "drop").asList())
        .extracting(YamlNode::asText)
        .containsExactly("ALL");
    assertThat(at(sc, "capabilities", "add").asList())
        .extracting(YamlNode::asText)
        .containsExactly("KILL");
    assertThat(spec.get("hostNetwork"))
        .as("no host network: metrics stay in the pod's namespace")
        .isNull();
    YamlNode res = at(container(), "resources");
    assertThat(at(res, "limits", "memory").asText()).isNotBlank();
    assertThat(at(res, "requests", "memory").asText()).isNotBlank();
    // the heap's ceiling follows the limit: a node with more pods raises the limit alone
    String dockerfile = Files.readString(DOCKER.resolve("Dockerfile"));
    assertThat(dockerfile).contains("-XX:MaxRAMPercentage=").doesNotContain("-Xmx");
    long limitMi = Long.parseLong(at(res, "limits", "memory").asText().replaceAll("Mi$", ""));
    assertThat(limitMi)
        .as(
            "limits.memory above the 5,000-pod resident set measured by bench/run.sh (231 MiB peak"
                + " with real pods)")
        .isGreaterThanOrEqualTo(320);
  }

  @Test
  void mountsMatchThePathsTheAgentReads() throws IOException {
    Map<String, YamlNode> mounts = new HashMap<>();
    for (YamlNode m : at(container(), "volumeMounts").asList()) {
      mounts.put(at(m, "mountPath").asText(), m);
    }
    AgentConfig c = agentConfig();
    assertThat(mounts)
        .containsKeys(
            c.cgroupRoot().toString(),
            c.kubeletRootDir().toString(),
            c.runtimeRootDir().toString(),
            c.rules().toString(),
            "/tmp");
    assertThat(mounts.get(c.cgroupRoot().toString()).get("readOnly"))
        .as("memcg event_control is written")
        .isNull();
    assertThat(at(mounts.get(c.kubeletRootDir().toString()), "readOnly").asBoolean()).isTrue();
    assertThat(at(mounts.get(c.runtimeRootDir().toString()), "readOnly").asBoolean()).isTrue();
    assertThat(at(mounts.get(c.rules().toString()), "readOnly").asBoolean()).isTrue();
    // bad rule sets are remembered across restarts: a writable hostPath
    assertThat(mounts.get(c.stateDir().toString())).as("stateDir is mounted").isNotNull();
    assertThat(mounts.get(c.stateDir().toString()).get("readOnly")).isNull();
    String stateVolume = at(mounts.get(c.stateDir().toString()), "name").asText();
    assertThat(at(docs("daemonset.yaml").get(0), "spec", "template", "spec", "volumes").asList())
        .anySatisfy(
            v -> {
              assertThat(at(v, "name").asText()).isEqualTo(stateVolume);
              assertThat(at(v, "hostPath", "path").asText()).isEqualTo(c.stateDir().toString());
            });
    // the container command reads the mounted agent configuration
    List<String> args = new ArrayList<>();
    at(container(), "args").asList().forEach(a -> args.add(a.asText()));
    assertThat(args.subList(0, 3)).containsExactly("run", "--config", "/etc/evictd/agent.yaml");
    assertThat(mounts).containsKey("/etc/evictd/agent.yaml");
    assertThat(Files.readString(DOCKER.resolve("Dockerfile")))
        .contains("CMD [\"run\", \"--config\", \"/etc/evictd/agent.yaml\"]");
  }

  @Test
  void probesAndPortMatchTheMetricsAddress() throws IOException {
    AgentConfig c = agentConfig();
    int port =
        Integer.parseInt(c.metricsAddress().substring(c.metricsAddress().lastIndexOf(':') + 1));
    YamlNode ports = at(container(), "ports").asList().get(0);
    assertThat(at(ports, "containerPort").asLong(0, 65535)).isEqualTo(port);
    // httpGet probes are sent by the kubelet to the pod IP: the endpoints listen there, and only
    // there
    assertThat(c.metricsAddress()).as("probes reach the pod IP").isEqualTo("10.1.2.3:" + port);
    assertThat(fieldPath("POD_IP")).isEqualTo("status.podIP");
    assertThat(at(container(), "livenessProbe", "httpGet", "path").asText()).isEqualTo("/healthz");
    assertThat(at(container(), "readinessProbe", "httpGet", "path").asText()).isEqualTo("/readyz");
    assertThat(fieldPath("NODE_NAME")).isEqualTo("spec.nodeName");
    // without the DaemonSet's flag the endpoints stay on loopback
    Path p = DOCKER.resolve("agent.yaml");
    assertThat(
            AgentConfig.resolve(YamlNode.parse(p.toString(), Files.readAllBytes(p)), Map.of(), ENV)
                .metricsAddress())
        .isEqualTo("127.0.0.1:9091");
  }

  @Test
  void statisticsComeFromTheNodesOwnKubeletOverVerifiedTls() throws IOException {
    AgentConfig c = agentConfig();
    assertThat(c.stats()).isEqualTo("kubelet");
    assertThat(fieldPath("HOST_IP")).isEqualTo("status.hostIP");
    assertThat(c.kubeletUrl()).isEqualTo("https://10.0.0.5:10250");
    assertThat(c.kubeletInsecureSkipTlsVerify()).isFalse();
    assertThat(c.kubeletAllowHttp()).isFalse();
    assertThat(c.kubeletCaFile()).isEqualTo(dev.evictd.kube.KubeletEndpoint.SERVICE_ACCOUNT_CA);
    assertThat(c.kubeletTokenFile())
        .isEqualTo(dev.evictd.kube.KubeletEndpoint.SERVICE_ACCOUNT_TOKEN);
    // the kubelet's own self-signed certificate, if used, is on a mounted path
    assertThat(Files.readString(DOCKER.resolve("agent.yaml")))
        .contains("kubeletCaFile: /var/lib/kubelet/pki/kubelet.crt");
    assertThat("/var/lib/kubelet/pki/kubelet.crt").startsWith(c.kubeletRootDir().toString());
    // nodes/proxy is an opt-in outside the kustomization
    YamlNode k = docs("kustomization.yaml").get(0);
    List<String> resources = new ArrayList<>();
    at(k, "resources").asList().forEach(r -> resources.add(r.asText()));
    assertThat(resources).doesNotContain("rbac-kubelet-proxy.yaml");
    assertThat(DOCKER.resolve("rbac-kubelet-proxy.yaml")).exists();
  }

  @Test
  void probesAndGracePeriodFitTheAgentsStartAndShutdown() throws IOException {
    YamlNode spec = at(docs("daemonset.yaml").get(0), "spec", "template", "spec");
    long grace = at(spec, "terminationGracePeriodSeconds").asLong(1, 3600);
    assertThat(grace)
        .as("twice the longest shutdown")
        .isGreaterThanOrEqualTo(2 * dev.evictd.agent.Agent.SHUTDOWN_BOUND.toSeconds());
    assertThat(at(container(), "startupProbe", "httpGet", "path").asText()).isEqualTo("/healthz");
    YamlNode live = at(container(), "livenessProbe");
    assertThat(live.get("initialDelaySeconds"))
        .as("the start-up probe covers the start; /healthz answers at once")
        .isNull();
    long liveBudget =
        at(live, "periodSeconds").asLong(1, 600) * at(live, "failureThreshold").asLong(1, 100);
    assertThat(liveBudget).isGreaterThanOrEqualTo(20);
    for (String probe : List.of("startupProbe", "livenessProbe", "readinessProbe")) {
      assertThat(at(container(), probe, "timeoutSeconds").asLong(1, 60))
          .as(probe + " waits longer than the endpoints need (under 1 s)")
          .isGreaterThanOrEqualTo(2);
    }
  }

  @Test
  void shippedConfigurationAndRulesLoad() throws IOException {
    AgentConfig c = agentConfig();
    assertThat(c.dryRun()).as("rollouts start in dry run").isTrue();
    RuleSet rs = RuleCompiler.compile(DOCKER.resolve("rules"));
    assertThat(rs.sha256()).isEqualTo(RuleCompiler.compileDefault().sha256());
  }

  @Test
  void kustomizationWiresEveryManifestAndTheServiceAccountExists() throws IOException {
    YamlNode k = docs("kustomization.yaml").get(0);
    for (YamlNode r : at(k, "resources").asList()) {
      assertThat(DOCKER.resolve(r.asText())).exists();
    }
    for (YamlNode g : at(k, "configMapGenerator").asList()) {
      for (YamlNode f : at(g, "files").asList()) {
        assertThat(DOCKER.resolve(f.asText())).exists();
      }
    }
    String sa =
        at(docs("daemonset.yaml").get(0), "spec", "template", "spec", "serviceAccountName")
            .asText();
    boolean found = false;
    for (YamlNode d : docs("rbac.yaml")) {
      if ("ServiceAccount".equals(at(d, "kind").asText())
          && sa.equals(at(d, "metadata", "name").asText())) {
        found = true;
      }
    }
    assertThat(found).as("ServiceAccount " + sa + " in rbac.yaml").isTrue();
    // the config maps the DaemonSet mounts are the ones the kustomization generates
    List<String> generated = new ArrayList<>();
    at(k, "configMapGenerator").asList().forEach(g -> generated.add(at(g, "name").asText()));
    for (YamlNode v :
        at(docs("daemonset.yaml").get(0), "spec", "template", "spec", "volumes").asList()) {
      if (v.get("configMap") != null) {
        assertThat(generated).contains(at(v, "configMap", "name").asText());
      }
    }
  }
}
