package dev.evictd.hostile;

import static org.assertj.core.api.Assertions.assertThat;

import ch.qos.logback.classic.Level;
import ch.qos.logback.classic.Logger;
import ch.qos.logback.classic.spi.ILoggingEvent;
import ch.qos.logback.core.read.ListAppender;
import dev.evictd.agent.Agent;
import dev.evictd.agent.AgentConfig;
import dev.evictd.config.YamlNode;
import dev.evictd.kube.KubeSettings;
import dev.evictd.testing.FakeKubeApiServer;
import dev.evictd.testing.PodsWithSecrets;
import io.fabric8.kubernetes.api.model.Event;
import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.PodBuilder;
import java.net.URI;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Clock;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.function.Supplier;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.slf4j.LoggerFactory;

/**
 * Rule sets that pass the policy lint and then try to harm through their decisions
 * (src/test/resources/hostile-runtime/, one directory per case), run by the whole agent against the
 * fake API server: the decision guard refuses what names no active pod of the node, every request
 * is for the node's own pods with escaped paths and uid preconditions, and no secret of a pod
 * reaches the pod's condition, its Event or the log.
 */
class HostileDecisionsTest {
  /** One client for every probe and scrape (a JDK client per call leaves its threads behind). */
  private static final java.net.http.HttpClient HTTP = java.net.http.HttpClient.newHttpClient();

  static final Path CORPUS = Path.of("src/test/resources/hostile-runtime");

  /**
   * The uid a rule file names for the pod of another node: the test puts the uid the API server
   * gave that pod in its place (the fake server numbers uids itself).
   */
  static final String FOREIGN_UID = "0a1b2c3d-0000-4000-8000-00000000f0f0";

  /** Escaped segments only: what a request path may be made of. */
  static final String SEGMENT = "[A-Za-z0-9._~%-]+";

  /** The writes the agent may send: its own pods, their status and eviction, Events. */
  static final Pattern WRITE =
      Pattern.compile(
          "/api/v1/namespaces/apps/pods/(big|small)(/status|/eviction)?"
              + "|/api/v1/namespaces/(apps|default)/events");

  static Pod pod(String ns, String name, String node, String uid) {
    return new PodBuilder()
        .withNewMetadata()
        .withName(name)
        .withNamespace(ns)
        .withUid(uid)
        .endMetadata()
        .withNewSpec()
        .withNodeName(node)
        .addNewContainer()
        .withName("app")
        .withImage("busybox")
        .endContainer()
        .endSpec()
        .build();
  }

  static String summary(Pod small, Pod big) {
    return """
        {"node": {"nodeName": "node-1", "memory": {"availableBytes": 524288000, "workingSetBytes": 7516192768}},
         "pods": [
           {"podRef": {"name": "small", "namespace": "apps", "uid": "%s"}, "memory": {"workingSetBytes": 104857600},
            "containers": [{"name": "app", "memory": {"workingSetBytes": 104857600}}]},
           {"podRef": {"name": "big", "namespace": "apps", "uid": "%s"}, "memory": {"workingSetBytes": 2147483648},
            "containers": [{"name": "app", "memory": {"workingSetBytes": 2147483648}}]}]}
        """
        .formatted(small.getMetadata().getUid(), big.getMetadata().getUid());
  }

  static Agent start(Path dir, String ruleSet, FakeKubeApiServer api, String foreignUid)
      throws Exception {
    Path rules = Files.createDirectory(dir.resolve("rules"));
    try (var files = Files.list(CORPUS.resolve(ruleSet))) {
      for (Path f : files.toList()) {
        Files.writeString(
            rules.resolve(f.getFileName().toString()),
            Files.readString(f).replace(FOREIGN_UID, foreignUid));
      }
    }
    Path cfg = dir.resolve("agent.yaml");
    Files.writeString(
        cfg,
        "nodeName: node-1\nstats: kubelet-proxy\nexecutor: delete\ninterval: 1s\nmetricsAddress: 127.0.0.1:0\n"
            + "memcgNotifier: false\nfsLayout: shared\n"
            + "rules: "
            + rules
            + "\nstateDir: "
            + dir.resolve("state")
            + "\nkubeletRootDir: "
            + dir
            + "\nruntimeRootDir: "
            + dir
            + "\neviction:\n  evictionHard: {memory.available: 1Gi}\n");
    AgentConfig c =
        AgentConfig.resolve(
            YamlNode.parse(cfg.toString(), Files.readAllBytes(cfg)), Map.of(), Map.of());
    return Agent.start(c, Clock.systemUTC(), () -> api.client(KubeSettings.DEFAULTS));
  }

  static String metrics(Agent agent) {
    try {
      return HTTP.send(
              HttpRequest.newBuilder(
                      URI.create("http://127.0.0.1:" + agent.address().getPort() + "/metrics"))
                  .build(),
              HttpResponse.BodyHandlers.ofString())
          .body();
    } catch (Exception e) {
      return "";
    }
  }

  /** Collects what evictd logs (at INFO and above) while it runs. */
  static final class LogCapture implements AutoCloseable {
    final ListAppender<ILoggingEvent> appender = new ListAppender<>();
    final Logger root = (Logger) LoggerFactory.getLogger(org.slf4j.Logger.ROOT_LOGGER_NAME);
    final Logger evictd = (Logger) LoggerFactory.getLogger("dev.evictd");
    final Level level = evictd.getLevel();

    LogCapture() {
      appender.start();
      root.addAppender(appender);
      evictd.setLevel(Level.INFO);
    }

    List<String> lines() {
      List<String> out = new ArrayList<>();
      for (ILoggingEvent e : List.copyOf(appender.list)) {
        out.add(e.getLoggerName() + " " + e.getFormattedMessage());
      }
      return out;
    }

    @Override
    public void close() {
      evictd.setLevel(level);
      root.detachAppender(appender);
      appender.stop();
    }
  }

  static boolean await(Supplier<Boolean> condition) {
    return FakeKubeApiServer.await(condition, Duration.ofSeconds(60));
  }

  /**
   * Runs a hostile rule set on node-1 (pods apps/small and apps/big, memory pressure) with a pod of
   * node-2 in the cluster; returns the requests the API server saw and the log.
   */
  record Run(
      List<FakeKubeApiServer.Request> requests,
      List<String> log,
      String metrics,
      Pod big,
      Pod foreign,
      Pod foreignAfter,
      List<Event> events) {}

  static Run run(Path dir, String ruleSet, Pod bigPod, String refusedReason) throws Exception {
    FakeKubeApiServer api = FakeKubeApiServer.start();
    Agent agent = null;
    try (LogCapture log = new LogCapture()) {
      Pod foreign = api.create(pod("kube-system", "other-node-pod", "node-2", null));
      Pod small = api.create(pod("apps", "small", "node-1", null));
      Pod big = api.create(bigPod);
      api.summary("node-1", 200, summary(small, big));
      agent = start(dir, ruleSet, api, foreign.getMetadata().getUid());
      Agent a = agent;
      assertThat(await(() -> !api.requests("DELETE", "/api/v1/namespaces/apps/pods/big").isEmpty()))
          .as("the default rules still evict the pod under pressure")
          .isTrue();
      if (refusedReason != null) {
        assertThat(
                await(
                    () ->
                        metrics(a)
                            .contains(
                                "evictd_decisions_refused_total{reason=\""
                                    + refusedReason
                                    + "\"}")))
            .as("the hostile decisions are refused and counted")
            .isTrue();
      }
      assertThat(
              await(
                  () -> api.events("apps").stream().anyMatch(e -> "Evicted".equals(e.getReason()))))
          .isTrue();
      String m = metrics(agent);
      api.close(); // before the informer: see FakeKubeApiServer#close
      agent.close();
      agent = null;
      return new Run(
          api.requests(),
          log.lines(),
          m,
          big,
          foreign,
          api.pod("kube-system", "other-node-pod").orElse(null),
          api.events("apps"));
    } finally {
      if (agent != null) {
        api.close();
        agent.close();
      }
    }
  }

  /** No request for a pod outside the node's list, no unescaped path, uid preconditions. */
  static void assertOnlyTheNodesPodsWereAddressed(Run r) {
    assertThat(r.requests()).isNotEmpty();
    for (FakeKubeApiServer.Request q : r.requests()) {
      String path = q.path();
      assertThat(path)
          .as("%s %s", q.method(), path)
          .doesNotContain("..")
          .doesNotContain("kube-system")
          .doesNotContain("other")
          .doesNotContainIgnoringCase("dryRun")
          .matches("(/" + SEGMENT + ")+(\\?[^#]*)?");
      if (!q.method().equals("GET")) {
        assertThat(path).as("%s %s", q.method(), path).matches(WRITE);
        assertThat(q.body()).doesNotContain(r.foreign().getMetadata().getUid(), "other-node-pod");
      }
      if (q.method().equals("DELETE") || path.endsWith("/eviction")) {
        assertThat(q.body())
            .as("%s %s carries the uid precondition", q.method(), path)
            .contains("\"preconditions\":{\"uid\":\"" + r.big().getMetadata().getUid() + "\"}");
      }
      if (q.method().equals("PATCH")) {
        assertThat(q.body()).contains("\"uid\":\"" + r.big().getMetadata().getUid() + "\"");
      }
    }
    assertThat(r.foreignAfter()).as("the other node's pod is still there").isNotNull();
    assertThat(
            r.foreignAfter().getStatus() == null
                ? List.of()
                : r.foreignAfter().getStatus().getConditions())
        .isEmpty();
  }

  @Test
  void decisionsForPodsOfOtherNodesAreRefusedAndNeverReachTheApiServer(@TempDir Path dir)
      throws Exception {
    Run r = run(dir, "foreign-pod", pod("apps", "big", "node-1", null), "unknown_pod");
    assertOnlyTheNodesPodsWereAddressed(r);
    assertThat(r.requests().stream().filter(q -> q.method().equals("DELETE")))
        .as("one pod deleted: the one the default rules chose")
        .hasSize(1);
    assertThat(r.log())
        .anySatisfy(
            l ->
                assertThat(l)
                    .contains(
                        "refused a decision of rule \"hostile: evict pods of other nodes\" to evict"
                            + " kube-system/other-node-pod: no active pod of this node has uid"
                            + " \""
                            + r.foreign().getMetadata().getUid()
                            + "\" (unknown_pod)"))
        .anySatisfy(
            l ->
                assertThat(l)
                    .contains("to evict apps/small: no active pod of this node has uid \"\""));
    // each refused decision is logged once in its sync: the rule makes four per sync
    long lines = r.log().stream().filter(l -> l.contains("refused a decision of rule")).count();
    assertThat(lines).isPositive();
    assertThat(lines % 4).isZero();
    assertThat(refusedCount(r.metrics(), "unknown_pod")).isPositive().isLessThanOrEqualTo(lines);
  }

  @Test
  void podNamesThatWouldRewriteTheRequestPathNeverReachIt(@TempDir Path dir) throws Exception {
    Run r = run(dir, "path-injection", pod("apps", "big", "node-1", null), "pod_mismatch");
    assertOnlyTheNodesPodsWereAddressed(r);
    assertThat(r.metrics()).contains("evictd_decisions_refused_total{reason=\"unknown_pod\"}");
    assertThat(r.log())
        .anySatisfy(
            l ->
                assertThat(l)
                    .contains(
                        "to evict apps/big/../../../kube-system/pods/other?dryRun=All: uid "
                            + r.big().getMetadata().getUid()
                            + " is pod apps/big")
                    .contains("(pod_mismatch)"));
  }

  @Test
  void aRuleCopyingEveryPodSecretIntoTheMessageLeaksNothing(@TempDir Path dir) throws Exception {
    Run r = run(dir, "secrets", PodsWithSecrets.pod("apps", "big", "node-1"), null);
    assertOnlyTheNodesPodsWereAddressed(r);
    FakeKubeApiServer.Request patch =
        r.requests().stream().filter(q -> q.method().equals("PATCH")).findFirst().orElseThrow();
    Event evicted =
        r.events().stream().filter(e -> "Evicted".equals(e.getReason())).findFirst().orElseThrow();
    // the hostile rule's message went through...
    assertThat(patch.body()).contains("leak:");
    assertThat(evicted.getMessage()).startsWith("leak:");
    assertThat(r.log()).anySatisfy(l -> assertThat(l).contains("leak:"));
    // ...with nothing secret in it
    String event = evicted.getMessage() + " " + evicted.getMetadata().getAnnotations();
    for (String secret : PodsWithSecrets.SECRETS) {
      assertThat(patch.body()).as("status condition").doesNotContain(secret);
      assertThat(event).as("Evicted Event").doesNotContain(secret);
      for (String line : r.log()) {
        assertThat(line).as("log").doesNotContain(secret);
      }
    }
    assertThat(evicted.getMessage()).doesNotContain("DB_PASSWORD");
  }

  @Test
  void theSecretsRuleSetsPlanHasNoSecretInIt(@TempDir Path dir) throws Exception {
    dev.evictd.engine.RuleSet rules =
        dev.evictd.ruleset.RuleCompiler.compile(CORPUS.resolve("secrets"));
    var config =
        dev.evictd.config.KubeletEvictionConfig.from(
            YamlNode.parse("k.yaml", "evictionHard: {memory.available: 1Gi}\n".getBytes()),
            "node-1",
            dev.evictd.api.FsLayout.SHARED);
    Pod big = PodsWithSecrets.pod("apps", "big", "node-1");
    big.getMetadata().setUid("u-big");
    Pod small = pod("apps", "small", "node-1", "u-small");
    var stats =
        dev.evictd.fixture.CapturedInputs.summary(
            Files.writeString(dir.resolve("summary.json"), summary(small, big)));
    try (var planner = new dev.evictd.engine.Planner(rules, config)) {
      var plan =
          planner.sync(
              java.time.Instant.parse("2026-01-01T00:00:00Z"),
              stats,
              List.of(small, big),
              dev.evictd.engine.PlannerHooks.noReclaim(null));
      assertThat(plan.decisions())
          .singleElement()
          .satisfies(d -> assertThat(d.message()).startsWith("leak:"));
      // the whole plan as plan, replay and explain print it: decisions, trace, firings, warnings
      String all = plan.toString();
      for (String secret : PodsWithSecrets.SECRETS) {
        assertThat(all).as("plan").doesNotContain(secret);
      }
    }
  }

  static long refusedCount(String metrics, String reason) {
    for (String l : metrics.split("\n")) {
      if (l.startsWith("evictd_decisions_refused_total{reason=\"" + reason + "\"}")) {
        return (long) Double.parseDouble(l.substring(l.lastIndexOf(' ') + 1));
      }
    }
    return 0;
  }
}
