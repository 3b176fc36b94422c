package dev.evictd.cli;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@code --kubelet-version} on plan and doctor, the kubelet line of explain, and a fixture naming
 * several kubelets: the operator sees which kubelet evictd followed.
 */
class KubeletVersionCliTest {

  private static Path[] captured(Path dir) throws IOException {
    Path kc = dir.resolve("kubelet.yaml");
    Files.writeString(
        kc,
        "apiVersion: kubelet.config.k8s.io/v1beta1\nkind: KubeletConfiguration\n"
            + "evictionHard: {memory.available: 1Gi}\n");
    Path pods = dir.resolve("pods.yaml");
    Files.writeString(
        pods,
        "apiVersion: v1\nkind: PodList\nitems:\n"
            + "  - metadata: {name: sidecar, namespace: a, uid: u-s}\n    spec:\n"
            + "      initContainers: [{name: p, restartPolicy: Always, resources: {requests: {memory: 150Mi}}}]\n"
            + "      containers: [{name: c, resources: {requests: {memory: 100Mi}}}]\n"
            + "  - metadata: {name: plain, namespace: a, uid: u-p}\n"
            + "    spec: {containers: [{name: c, resources: {requests: {memory: 200Mi}}}]}\n");
    Path summary = dir.resolve("summary.json");
    Files.writeString(
        summary,
        "{\"node\": {\"nodeName\": \"n\", \"memory\": {\"availableBytes\": 524288000, \"workingSetBytes\": 7516192768}},"
            + " \"pods\": [{\"podRef\": {\"name\": \"sidecar\", \"namespace\": \"a\", \"uid\": \"u-s\"}, \"memory\": {\"workingSetBytes\": 419430400}},"
            + " {\"podRef\": {\"name\": \"plain\", \"namespace\": \"a\", \"uid\": \"u-p\"}, \"memory\": {\"workingSetBytes\": 419430400}}]}");
    return new Path[] {kc, pods, summary};
  }

  private static CliTest.Run plan(Path[] in, String... more) {
    String[] base = {
      "plan",
      "--config",
      in[0].toString(),
      "--pods",
      in[1].toString(),
      "--summary",
      in[2].toString()
    };
    String[] args = java.util.Arrays.copyOf(base, base.length + more.length);
    System.arraycopy(more, 0, args, base.length, more.length);
    return CliTest.run(args);
  }

  @Test
  void planFollowsTheNamedKubeletAndSaysSo(@TempDir Path dir) throws IOException {
    Path[] in = captured(dir);
    CliTest.Run old = plan(in, "--kubelet-version", "v1.33.4");
    assertThat(old.code()).as(old.err()).isZero();
    assertThat(old.out()).contains("kubelet v1.33.4: following 1.33", "evicted     a/sidecar");
    CliTest.Run now = plan(in);
    assertThat(now.code()).as(now.err()).isZero();
    assertThat(now.out()).contains("evicted     a/plain").doesNotContain("following");
    CliTest.Run tooOld = plan(in, "--kubelet-version", "1.29");
    assertThat(tooOld.code()).isEqualTo(2);
    assertThat(tooOld.err())
        .contains("--kubelet-version: kubelet 1.29 is older than the oldest evictd follows");
  }

  @Test
  void doctorSaysWhichKubeletEvictdFollows() {
    assertThat(DoctorCommand.kubeletCheck("v1.34.2").detail())
        .isEqualTo("kubelet v1.34.2: following 1.34");
    assertThat(DoctorCommand.kubeletCheck("v1.39.0").status().toString()).isEqualTo("warn");
    assertThat(DoctorCommand.kubeletCheck("1.30").status().toString()).isEqualTo("fail");
  }

  @Test
  void aFixtureRunsForEachKubeletItNamesAndAMismatchNamesTheKubelet(@TempDir Path dir)
      throws IOException {
    String fixture =
        Files.readString(Path.of("fixtures/kubelet-versions/sidecar-request-1.34-and-newer.yaml"))
            .replace(
                "version: [\"1.34\", \"1.35\", \"1.36\", \"1.37\"]",
                "version: [\"1.34\", \"1.33\"]");
    Path f = dir.resolve("both.yaml");
    Files.writeString(f, fixture);
    CliTest.Run r = CliTest.run("test", f.toString());
    assertThat(r.code()).isEqualTo(1);
    assertThat(r.out()).contains("FAIL", "kubelet 1.33: ");
  }

  @Test
  void captureRecordsTheNodesKubeletAndItsGates(@TempDir Path dir) throws Exception {
    try (dev.evictd.testing.FakeKubeApiServer api = dev.evictd.testing.FakeKubeApiServer.start()) {
      api.createNode(
          new io.fabric8.kubernetes.api.model.NodeBuilder()
              .withNewMetadata()
              .withName("node-1")
              .endMetadata()
              .withNewStatus()
              .withNewNodeInfo()
              .withKubeletVersion("v1.33.4")
              .endNodeInfo()
              .endStatus()
              .build());
      api.configz(
          "node-1",
          200,
          "{\"kubeletconfig\": {\"evictionHard\": {\"memory.available\": \"1Gi\"},"
              + " \"featureGates\": {\"PodLevelResources\": true}}}");
      api.summary(
          "node-1",
          200,
          "{\"node\": {\"nodeName\": \"node-1\", \"memory\": {\"availableBytes\": 4294967296,"
              + " \"workingSetBytes\": 1073741824}}, \"pods\": []}");
      CaptureCommand.clients = () -> api.client(dev.evictd.kube.KubeSettings.DEFAULTS);
      Path out = dir.resolve("captured.yaml");
      CliTest.Run r = CliTest.run("capture", "--node", "node-1", "-o", out.toString());
      assertThat(r.code()).as(r.err()).isZero();
      dev.evictd.fixture.Fixture f = dev.evictd.fixture.FixtureLoader.load(out);
      assertThat(f.config().kubelet().reported()).isEqualTo("v1.33.4");
      assertThat(f.config().kubelet().gate("PodLevelResources")).isTrue();
    } finally {
      CaptureCommand.clients =
          () -> dev.evictd.kube.KubeClients.create(dev.evictd.kube.KubeSettings.DEFAULTS);
    }
  }
}
