package dev.evictd.cli;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@code evictd plan} on a capture of every node's pods ({@code kubectl get pods -A}): it plans on
 * the pods the node's kubelet counts as active, those bound to it and not finished, and says on
 * stderr what it left out.
 */
class PlanOnNodeTest {
  @Test
  void podsOfOtherNodesAndFinishedPodsAreLeftOutAndSaidSo(@TempDir Path dir) throws IOException {
    Path kc = dir.resolve("kubelet.yaml");
    Files.writeString(kc, "kind: KubeletConfiguration\nevictionHard: {memory.available: 1Gi}\n");
    Path pods = dir.resolve("pods.yaml");
    // the biggest user of memory runs on another node, the next one has finished
    Files.writeString(
        pods,
        """
        kind: PodList
        items:
          - metadata: {name: far, namespace: a, uid: u-far}
            spec: {nodeName: worker-8, containers: [{name: c}]}
          - metadata: {name: done, namespace: a, uid: u-done}
            spec: {nodeName: worker-7, containers: [{name: c}]}
            status: {phase: Succeeded}
          - metadata: {name: here, namespace: a, uid: u-here}
            spec: {nodeName: worker-7, containers: [{name: c}]}
          - metadata: {name: plain, namespace: a, uid: u-plain}
            spec: {containers: [{name: c}]}
        """);
    Path summary = dir.resolve("summary.json");
    Files.writeString(
        summary,
        """
        {"node": {"nodeName": "worker-7",
                  "memory": {"availableBytes": 536870912, "workingSetBytes": 7516192768}},
         "pods": [
          {"podRef": {"name": "far", "namespace": "a", "uid": "u-far"},
           "memory": {"workingSetBytes": 4294967296}},
          {"podRef": {"name": "done", "namespace": "a", "uid": "u-done"},
           "memory": {"workingSetBytes": 3221225472}},
          {"podRef": {"name": "here", "namespace": "a", "uid": "u-here"},
           "memory": {"workingSetBytes": 2147483648}},
          {"podRef": {"name": "plain", "namespace": "a", "uid": "u-plain"},
           "memory": {"workingSetBytes": 1048576}}]}
        """);
    CliTest.Run r = plan(kc, pods, summary);
    assertThat(r.code()).as(r.err()).isZero();
    assertThat(r.out()).contains("plan (2 pods)", "evicted     a/here").doesNotContain("a/far");
    assertThat(r.err())
        .contains(pods + ": 1 of 4 pods run on other nodes than worker-7 and are left out")
        .contains(pods + ": 1 finished pods (Succeeded or Failed) are left out");
    // named with --node, the other node's pod is the one planned on
    CliTest.Run other = plan(kc, pods, summary, "--node", "worker-8");
    assertThat(other.out()).contains("plan (2 pods)", "evicted     a/far");
  }

  private static CliTest.Run plan(Path kc, Path pods, Path summary, String... more) {
    List<String> args = new ArrayList<>(List.of("plan"));
    args.addAll(List.of(more));
    args.addAll(
        List.of(
            "--config", kc.toString(), "--pods", pods.toString(), "--summary", summary.toString()));
    return CliTest.run(args.toArray(String[]::new));
  }
}
