package dev.evictd.cli;

import dev.evictd.api.ConfigException;
import dev.evictd.api.EvictionConfig;
import dev.evictd.api.EvictionPlan;
import dev.evictd.api.FsLayout;
import dev.evictd.config.KubeletEvictionConfig;
import dev.evictd.config.YamlNode;
import dev.evictd.engine.Planner;
import dev.evictd.engine.PlannerHooks;
import dev.evictd.engine.RuleSet;
import dev.evictd.fixture.CapturedInputs;
import dev.evictd.fixture.FixtureRunner;
import dev.evictd.fixture.FixtureWriter;
import dev.evictd.kube.KubeApi;
import dev.evictd.kube.KubeClients;
import dev.evictd.kube.KubeSettings;
import dev.evictd.kube.KubeletEndpoint;
import dev.evictd.kube.NodeCapture;
import io.fabric8.kubernetes.client.KubernetesClient;
import java.io.IOException;
import java.io.PrintWriter;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Instant;
import java.util.concurrent.Callable;
import java.util.function.Supplier;
import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Option;

/**
 * {@code evictd capture}: snapshots a live node into a fixture, so an incident becomes a regression
 * test.
 */
@Command(
    name = "capture",
    mixinStandardHelpOptions = true,
    description = {
      "Snapshot a live node into a fixture: the kubelet's running configuration (/configz), the node's pods and its",
      "stats summary, with what the rules decide now as the step's expectations (edit them into what should happen).",
      "Uses the in-cluster service account or your kubeconfig."
    })
final class CaptureCommand implements Callable<Integer> {
  @Mixin RulesOption rules = new RulesOption();

  @Option(
      names = "--node",
      required = true,
      paramLabel = "NAME",
      description = "The node to capture.")
  String node;

  @Option(
      names = {"-o", "--output"},
      paramLabel = "FILE",
      description = "Write the fixture here (default: stdout).")
  Path output;

  @Option(
      names = "--fs-layout",
      paramLabel = "LAYOUT",
      description = "shared, dedicated or split (default: inferred from the summary).")
  String fsLayout;

  @Option(
      names = "--kubelet-url",
      paramLabel = "URL",
      description =
          "Read /configz and the summary from this kubelet (https://NODE_IP:10250) instead of through"
              + " the API server's node proxy.")
  String kubeletUrl;

  @Option(
      names = "--kubelet-ca-file",
      paramLabel = "FILE",
      description = "CA of the kubelet's serving certificate (default: the service account's CA).")
  Path kubeletCaFile;

  @Option(
      names = "--kubelet-token-file",
      paramLabel = "FILE",
      description = "Token for the kubelet (default: the service account's token).")
  Path kubeletTokenFile;

  @Option(
      names = "--kubelet-insecure-skip-tls-verify",
      description = "Trust any kubelet certificate (insecure).")
  boolean kubeletInsecureSkipTlsVerify;

  @Option(
      names = "--kubelet-tls-server-name",
      paramLabel = "NAME",
      description = "The name the kubelet's certificate must carry, when not the URL's host.")
  String kubeletTlsServerName;

  @Option(
      names = "--kubelet-allow-http",
      description = "Accept an http:// kubelet URL (no token is then sent).")
  boolean kubeletAllowHttp;

  @CommandLine.Spec CommandLine.Model.CommandSpec spec;

  /** The kubelet to read directly, checked (files, scheme), or null for the node proxy. */
  KubeletEndpoint kubelet() {
    if (kubeletUrl == null) {
      return null;
    }
    if (!kubeletUrl.matches("https?://[^\\s]+")) {
      throw new ConfigException(
          "--kubelet-url: expected an http(s) URL, found \"" + kubeletUrl + "\"");
    }
    if (kubeletInsecureSkipTlsVerify && kubeletCaFile != null) {
      throw new ConfigException(
          "--kubelet-insecure-skip-tls-verify: give either --kubelet-ca-file or"
              + " --kubelet-insecure-skip-tls-verify, not both");
    }
    KubeletEndpoint e =
        new KubeletEndpoint(
            URI.create(kubeletUrl),
            kubeletTokenFile == null ? KubeletEndpoint.SERVICE_ACCOUNT_TOKEN : kubeletTokenFile,
            kubeletCaFile == null ? KubeletEndpoint.SERVICE_ACCOUNT_CA : kubeletCaFile,
            kubeletInsecureSkipTlsVerify,
            kubeletTlsServerName,
            kubeletAllowHttp);
    e.check();
    return e;
  }

  /** How the command gets its client (tests point it at a mock API server). */
  static Supplier<KubernetesClient> clients = () -> KubeClients.create(KubeSettings.DEFAULTS);

  @Override
  public Integer call() {
    // the kubelet's files and URL are checked before anything is read
    KubeletEndpoint kubelet = kubelet();
    NodeCapture cap;
    try (KubernetesClient client = clients.get()) {
      cap =
          NodeCapture.of(
              client, new KubeApi(client, KubeSettings.DEFAULTS.requestTimeout()), node, kubelet);
    }
    FsLayout layout =
        fsLayout == null
            ? CapturedInputs.inferLayout(cap.summary())
            : FsLayout.fromKey(fsLayout)
                .orElseThrow(
                    () -> new ConfigException("--fs-layout: unknown layout \"" + fsLayout + "\""));
    String partial =
        FixtureWriter.write(
            "capture",
            "",
            cap.kubeletConfig(),
            node,
            layout,
            cap.trimmedPods(),
            cap.summary(),
            null);
    // the captured configuration goes through the same validation a fixture gets
    YamlNode kc =
        YamlNode.parse("capture", partial.getBytes(StandardCharsets.UTF_8)).get("kubeletConfig");
    EvictionConfig config = KubeletEvictionConfig.from(kc, node, layout);
    RuleSet rs = rules.resolve(null);
    EvictionPlan plan;
    try (Planner planner = new Planner(rs, config)) {
      plan =
          planner.sync(
              FixtureRunner.START,
              cap.summary(),
              cap.trimmedPods(),
              PlannerHooks.noReclaim(cap.summary()));
    }
    String yaml =
        FixtureWriter.write(
            "captured from node " + node + " at " + Instant.now(),
            "Captured by evictd capture. The expectations are what the rules ("
                + rs.source()
                + ", sha256 "
                + rs.sha256().substring(0, 12)
                + ") decided on this snapshot; edit them into what should happen.",
            cap.kubeletConfig(),
            node,
            layout,
            cap.trimmedPods(),
            cap.summary(),
            plan);
    if (output == null) {
      PrintWriter out = spec.commandLine().getOut();
      out.print(yaml);
      out.flush();
    } else {
      try {
        Files.writeString(output, yaml, StandardCharsets.UTF_8);
      } catch (IOException e) {
        throw new ConfigException(output + ": cannot write: " + e.getMessage());
      }
      spec.commandLine()
          .getOut()
          .println(
              "wrote "
                  + output
                  + ": "
                  + cap.pods().size()
                  + " pods, "
                  + (plan.decisions().isEmpty()
                      ? "no eviction"
                      : "evicts " + plan.decisions().get(0).pod()));
    }
    return Main.OK;
  }
}
