package dev.evictd.cli;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.io.PrintWriter;
import java.io.StringWriter;
import java.nio.file.Files;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import tools.jackson.databind.JsonNode;
import tools.jackson.databind.json.JsonMapper;

/** Decisions the decision guard refuses show in plan, replay and explain, as text and JSON. */
class RefusedDecisionsCliTest {
  static final String RULES = "src/test/resources/hostile-runtime/path-injection";

  static final String FIXTURE =
      "kubeletConfig: {evictionHard: {memory.available: 1Gi}}\n"
          + "pods:\n  - metadata: {name: big, namespace: apps, uid: u-big}\n"
          + "steps:\n"
          + "  - summary: {node: {memory: {availableBytes: 500Mi, workingSetBytes: 4Gi}},\n"
          + "              pods: [{podRef: {name: big, namespace: apps, uid: u-big}, memory: {workingSetBytes: 1Gi}}]}\n"
          + "    expect: {evicted: [{pod: apps/big, gracePeriodSeconds: 1}]}\n";

  static final String INJECTED = "apps/big/../../../kube-system/pods/other?dryRun=All";

  static String[] run(String... args) {
    StringWriter out = new StringWriter();
    StringWriter err = new StringWriter();
    int code = Main.execute(args, new PrintWriter(out, true), new PrintWriter(err, true));
    assertThat(code).as(err.toString()).isZero();
    return new String[] {out.toString(), err.toString()};
  }

  static void assertRefusals(JsonNode plan) {
    assertThat(plan.get("decisions")).hasSize(1);
    assertThat(plan.get("decisions").get(0).get("pod").asString()).isEqualTo("apps/big");
    JsonNode refused = plan.get("refused");
    assertThat(refused).hasSize(3);
    assertThat(refused.get(0).get("pod").asString()).isEqualTo(INJECTED);
    assertThat(refused.get(0).get("reason").asString()).isEqualTo("pod_mismatch");
    assertThat(refused.get(0).get("rules").get(0).asString())
        .isEqualTo("hostile: path injection through the pod name");
    assertThat(refused.get(2).get("reason").asString()).isEqualTo("unknown_pod");
  }

  @Test
  void replayAndExplainShowRefusedDecisionsWithTheRule(@TempDir Path dir) throws IOException {
    Path f = Files.writeString(dir.resolve("pressure.yaml"), FIXTURE);
    String text = run("replay", "--rules", RULES, f.toString())[0];
    assertThat(text)
        .contains("evicted     apps/big  grace 1s")
        .contains(
            "refused     "
                + INJECTED
                + "  pod_mismatch: uid u-big is pod apps/big, not \""
                + INJECTED
                + "\"  (rule \"hostile: path injection through the pod name\")")
        .contains("refused     apps/../kube-system/other  pod_mismatch")
        .contains(
            "refused     " + INJECTED + "  unknown_pod: no active pod of this node has uid \"\"");
    JsonMapper json = JsonMapper.builder().build();
    assertRefusals(
        json.readTree(run("replay", "-o", "json", "--rules", RULES, f.toString())[0])
            .get("steps")
            .get(0));

    String explained = run("explain", "--rules", RULES, f.toString())[0];
    assertThat(explained)
        .contains("evict apps/big (pressure, memory.available)")
        .contains("refused: " + INJECTED + "  pod_mismatch: uid u-big is pod apps/big");
    // the decision's trace is the rules behind the accepted decision, not a refused one for the
    // same uid
    String trace =
        explained.substring(
            explained.indexOf("evict apps/big"), explained.indexOf("refused: " + INJECTED));
    assertThat(trace)
        .contains("[decide] \"evict the first pod in rank order that is not exempt\"")
        .doesNotContain("hostile");
    assertRefusals(json.readTree(run("explain", "-o", "json", "--rules", RULES, f.toString())[0]));
  }

  @Test
  void planShowsRefusedDecisions(@TempDir Path dir) throws IOException {
    Path kc =
        Files.writeString(
            dir.resolve("kubelet.yaml"),
            "apiVersion: kubelet.config.k8s.io/v1beta1\nkind: KubeletConfiguration\n"
                + "evictionHard: {memory.available: 1Gi}\n");
    Path pods =
        Files.writeString(
            dir.resolve("pods.yaml"),
            "apiVersion: v1\nkind: PodList\nitems:\n"
                + "  - metadata: {name: big, namespace: apps, uid: u-big}\n"
                + "    spec: {containers: [{name: c}]}\n");
    Path summary =
        Files.writeString(
            dir.resolve("summary.json"),
            "{\"node\": {\"nodeName\": \"worker-7\", \"memory\": {\"availableBytes\": 536870912,"
                + " \"workingSetBytes\": 7516192768}}, \"pods\": [{\"podRef\": {\"name\": \"big\","
                + " \"namespace\": \"apps\", \"uid\": \"u-big\"}, \"memory\": {\"workingSetBytes\":"
                + " 2147483648}}]}");
    String[] common = {
      "--rules",
      RULES,
      "--config",
      kc.toString(),
      "--pods",
      pods.toString(),
      "--summary",
      summary.toString()
    };
    String table = run(concat(new String[] {"plan"}, common))[0];
    assertThat(table)
        .contains("evicted     apps/big  grace 1s")
        .contains("refused     " + INJECTED + "  pod_mismatch");
    String out = run(concat(new String[] {"plan", "-o", "json"}, common))[0];
    assertRefusals(JsonMapper.builder().build().readTree(out));
  }

  static String[] concat(String[] a, String[] b) {
    String[] out = java.util.Arrays.copyOf(a, a.length + b.length);
    System.arraycopy(b, 0, out, a.length, b.length);
    return out;
  }
}
