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
    modelTransformer = KubeletOptions.Mixin.class,
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
      converter = Converters.NotEmpty.class,
      paramLabel = "NAME",
      description = "The node to capture.")
  String node;

  @Option(
      names = {"-o", "--output"},
      converter = Converters.OutputFile.class,
      paramLabel = "FILE",
      description = "Write the fixture here (default: stdout).")
  Path output;

  @Mixin FsLayoutOption fsLayout = new FsLayoutOption();

  @Option(
      names = "--kubelet-version",
      paramLabel = "VERSION",
      description =
          "The kubelet to follow (1.32 to 1.37, e.g. 1.34 or v1.34.2; default: the Node's"
              + " status.nodeInfo.kubeletVersion).")
  String kubeletVersion;

  @CommandLine.Spec CommandLine.Model.CommandSpec spec;

  /** How the command gets its client (tests point it at a mock API server). */
  static Supplier<KubernetesClient> clients = () -> KubeClients.create(KubeSettings.DEFAULTS);

  @Override
  public Integer call() {
    // the kubelet's files and URL are checked before anything is read
    KubeletEndpoint kubelet = KubeletOptions.endpoint(spec);
    NodeCapture cap;
    try (KubernetesClient client = clients.get()) {
      cap =
          NodeCapture.of(
              client, new KubeApi(client, KubeSettings.DEFAULTS.requestTimeout()), node, kubelet);
    }
    FsLayout layout = fsLayout.orInferred(cap.summary());
    String version = kubeletVersion != null ? kubeletVersion : cap.kubeletVersion();
    String partial =
        FixtureWriter.write(
            "capture",
            "",
            cap.kubeletConfig(),
            version,
            node,
            layout,
            cap.trimmedPods(),
            cap.summary(),
            null);
    // the captured configuration goes through the same validation a fixture gets
    YamlNode kc =
        YamlNode.parse("capture", partial.getBytes(StandardCharsets.UTF_8)).get("kubeletConfig");
    YamlNode recorded =
        YamlNode.parse("capture", partial.getBytes(StandardCharsets.UTF_8)).get("kubelet");
    EvictionConfig config =
        KubeletEvictionConfig.from(
            kc, node, layout, version, recorded == null ? null : recorded.get("featureGates"));
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
            version,
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
        throw new ConfigException(
            "--output " + output + ": " + dev.evictd.config.IoErrors.cannotWrite(output, e));
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
