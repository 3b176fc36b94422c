package dev.evictd.cli;

import static org.assertj.core.api.Assertions.assertThat;

import dev.evictd.fixture.FixtureLoader;
import dev.evictd.fixture.FixtureResult;
import dev.evictd.fixture.FixtureRunner;
import dev.evictd.kube.KubeSettings;
import dev.evictd.ruleset.RuleCompiler;
import dev.evictd.testing.FakeKubeApiServer;
import dev.evictd.testing.FakeKubelet;
import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.PodBuilder;
import java.io.PrintWriter;
import java.io.StringWriter;
import java.nio.file.Files;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** evictd capture against the mock API server: the snapshot loads as a fixture that passes. */
class CaptureCommandTest {
  @Test
  void aCapturedNodeBecomesAPassingFixture(@TempDir Path dir) throws Exception {
    try (FakeKubeApiServer api = FakeKubeApiServer.start()) {
      Pod web = api.create(pod("web", 100));
      Pod batch = api.create(pod("batch", 0));
      api.create(
          new PodBuilder(pod("elsewhere", 0)).editSpec().withNodeName("node-2").endSpec().build());
      api.configz(
          "node-1",
          200,
          "{\"kubeletconfig\": {\"evictionHard\": {\"memory.available\": \"1Gi\"}, \"evictionPressureTransitionPeriod\": \"5m0s\","
              + " \"enforceNodeAllocatable\": [\"pods\"], \"maxPods\": 110, \"address\": \"0.0.0.0\"}}");
      api.summary(
          "node-1",
          200,
          "{\"node\": {\"nodeName\": \"node-1\", \"memory\": {\"time\": \"2026-01-01T00:00:00Z\", \"availableBytes\": 524288000,"
              + " \"workingSetBytes\": 7516192768}}, \"pods\": ["
              + "{\"podRef\": {\"name\": \"web\", \"namespace\": \"apps\", \"uid\": \""
              + web.getMetadata().getUid()
              + "\"},"
              + " \"memory\": {\"workingSetBytes\": 104857600}},"
              + "{\"podRef\": {\"name\": \"batch\", \"namespace\": \"apps\", \"uid\": \""
              + batch.getMetadata().getUid()
              + "\"},"
              + " \"memory\": {\"workingSetBytes\": 2147483648}}]}");
      CaptureCommand.clients = () -> api.client(KubeSettings.DEFAULTS);
      Path out = dir.resolve("captured.yaml");
      StringWriter o = new StringWriter();
      StringWriter e = new StringWriter();
      int code =
          Main.execute(
              new String[] {"capture", "--node", "node-1", "-o", out.toString()},
              new PrintWriter(o, true),
              new PrintWriter(e, true));
      assertThat(code).as(e.toString()).isZero();
      assertThat(o.toString()).contains("2 pods", "evicts apps/batch");
      String yaml = Files.readString(out);
      assertThat(yaml)
          .contains("evictionHard", "memory.available: 1Gi")
          .doesNotContain("maxPods", "managedFields", "elsewhere");
      FixtureResult r =
          new FixtureRunner(p -> RuleCompiler.compileDefault()).run(FixtureLoader.load(out));
      assertThat(r.status()).as("%s", r.mismatch()).isEqualTo(FixtureResult.Status.PASSED);
      assertThat(r.plans().get(0).decisions())
          .extracting(d -> d.pod().key())
          .containsExactly("apps/batch");
    } finally {
      CaptureCommand.clients = () -> dev.evictd.kube.KubeClients.create(KubeSettings.DEFAULTS);
    }
  }

  @Test
  void anUnreachableKubeletIsOneClearLine() {
    try (FakeKubeApiServer api = FakeKubeApiServer.start()) {
      CaptureCommand.clients = () -> api.client(KubeSettings.DEFAULTS);
      StringWriter e = new StringWriter();
      int code =
          Main.execute(
              new String[] {"capture", "--node", "ghost"},
              new PrintWriter(new StringWriter(), true),
              new PrintWriter(e, true));
      assertThat(code).isEqualTo(2);
      assertThat(e.toString())
          .startsWith("evictd: node ghost: cannot read the kubelet configuration (/configz):");
      assertThat(e.toString().lines()).hasSize(1);
    } finally {
      CaptureCommand.clients = () -> dev.evictd.kube.KubeClients.create(KubeSettings.DEFAULTS);
    }
  }

  @Test
  void anApiServerThatRefusesTheConnectionSaysSoInWords() throws Exception {
    int port;
    try (java.net.ServerSocket s = new java.net.ServerSocket(0)) {
      port = s.getLocalPort(); // closed again: nothing listens there
    }
    String url = "https://127.0.0.1:" + port;
    CaptureCommand.clients =
        () ->
            dev.evictd.kube.KubeClients.create(
                new io.fabric8.kubernetes.client.ConfigBuilder(
                        io.fabric8.kubernetes.client.Config.empty())
                    .withMasterUrl(url)
                    .build(),
                KubeSettings.DEFAULTS);
    try {
      StringWriter e = new StringWriter();
      assertThat(run(new StringWriter(), e, "capture", "--node", "n")).isEqualTo(2);
      // it ended ": ConnectException"
      assertThat(e.toString())
          .contains(": cannot connect to 127.0.0.1:" + port + ": ")
          .doesNotContain("Exception");
      assertThat(e.toString().lines()).hasSize(1);
    } finally {
      CaptureCommand.clients = () -> dev.evictd.kube.KubeClients.create(KubeSettings.DEFAULTS);
    }
  }

  static int run(StringWriter out, StringWriter err, String... args) {
    return Main.execute(args, new PrintWriter(out, true), new PrintWriter(err, true));
  }

  @Test
  void readsConfigzAndTheSummaryFromTheKubeletDirectly(@TempDir Path dir) throws Exception {
    Path token = Files.writeString(dir.resolve("token"), "tok");
    try (FakeKubeApiServer api = FakeKubeApiServer.start();
        FakeKubelet kubelet =
            new FakeKubelet(
                "tok",
                "{\"node\": {\"nodeName\": \"node-1\", \"memory\": {\"availableBytes\": 524288000,"
                    + " \"workingSetBytes\": 7516192768}}, \"pods\": []}")) {
      api.create(pod("web", 100));
      kubelet.configz("{\"kubeletconfig\": {\"evictionHard\": {\"memory.available\": \"1Gi\"}}}");
      CaptureCommand.clients = () -> api.client(KubeSettings.DEFAULTS);
      Path out = dir.resolve("captured.yaml");
      StringWriter e = new StringWriter();
      int code =
          run(
              new StringWriter(),
              e,
              "capture",
              "--node",
              "node-1",
              "-o",
              out.toString(),
              "--kubelet-url",
              kubelet.ipUrl(),
              "--kubelet-ca-file",
              kubelet.certificate().toString(),
              "--kubelet-token-file",
              token.toString());
      assertThat(code).as(e.toString()).isZero();
      assertThat(Files.readString(out)).contains("memory.available: 1Gi", "name: web");
      assertThat(kubelet.requests())
          .extracting(FakeKubelet.Request::path)
          .containsExactly("/configz", "/stats/summary");
      assertThat(api.requests()).noneMatch(r -> r.path().contains("/proxy/"));
    } finally {
      CaptureCommand.clients = () -> dev.evictd.kube.KubeClients.create(KubeSettings.DEFAULTS);
    }
  }

  @Test
  void kubeletMisconfigurationIsOneLineAndExitTwo(@TempDir Path dir) throws Exception {
    Path token = Files.writeString(dir.resolve("token"), "tok");
    Path otherCa = FakeKubelet.otherCa(dir);
    try (FakeKubeApiServer api = FakeKubeApiServer.start();
        FakeKubelet kubelet = new FakeKubelet("tok", "{}")) {
      CaptureCommand.clients = () -> api.client(KubeSettings.DEFAULTS);
      String[][] cases = {
        {"--kubelet-url", kubelet.ipUrl(), "--kubelet-token-file", dir.resolve("none").toString()},
        {"--kubelet-url", kubelet.ipUrl().replace("https", "http"), "--kubelet-token-file", "x"},
        {
          "--kubelet-url",
          kubelet.ipUrl(),
          "--kubelet-token-file",
          token.toString(),
          "--kubelet-ca-file",
          otherCa.toString()
        },
      };
      String[] expected = {
        "evictd: kubeletTokenFile " + dir.resolve("none") + ": no such file",
        "evictd: kubeletUrl http://127.0.0.1:",
        "evictd: node node-1: cannot read the kubelet configuration (/configz at "
            + kubelet.ipUrl()
            + "): GET /configz ("
            + kubelet.ipUrl().replaceFirst("^https://", "")
            + "): TLS handshake failed: the kubelet's certificate",
      };
      for (int i = 0; i < cases.length; i++) {
        StringWriter e = new StringWriter();
        String[] args = new String[cases[i].length + 3];
        args[0] = "capture";
        args[1] = "--node";
        args[2] = "node-1";
        System.arraycopy(cases[i], 0, args, 3, cases[i].length);
        assertThat(run(new StringWriter(), e, args)).as(e.toString()).isEqualTo(2);
        assertThat(e.toString()).startsWith(expected[i]).doesNotContain("internal error");
        assertThat(e.toString().lines()).hasSize(1);
      }
      assertThat(kubelet.requests()).as("no token went out").isEmpty();
    } finally {
      CaptureCommand.clients = () -> dev.evictd.kube.KubeClients.create(KubeSettings.DEFAULTS);
    }
  }

  static Pod pod(String name, int priority) {
    return new PodBuilder()
        .withNewMetadata()
        .withName(name)
        .withNamespace("apps")
        .addToLabels("app", name)
        .endMetadata()
        .withNewSpec()
        .withNodeName("node-1")
        .withPriority(priority)
        .addNewContainer()
        .withName("c")
        .withImage("busybox")
        .endContainer()
        .endSpec()
        .build();
  }
}
