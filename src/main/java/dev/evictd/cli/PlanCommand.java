package dev.evictd.cli;

import dev.evictd.api.EvictionConfig;
import dev.evictd.api.EvictionPlan;
import dev.evictd.api.FsLayout;
import dev.evictd.config.KubeletEvictionConfig;
import dev.evictd.config.YamlNode;
import dev.evictd.engine.Planner;
import dev.evictd.engine.PlannerHooks;
import dev.evictd.engine.RuleSet;
import dev.evictd.fixture.CapturedInputs;
import dev.evictd.kube.NodePods;
import dev.evictd.stats.Summary;
import io.fabric8.kubernetes.api.model.Pod;
import java.io.PrintWriter;
import java.nio.file.Path;
import java.time.Instant;
import java.util.List;
import java.util.concurrent.Callable;
import java.util.concurrent.CompletableFuture;
import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Option;

/** {@code evictd plan}: one sync on captured data from a node. */
@Command(
    name = "plan",
    mixinStandardHelpOptions = true,
    description =
        "Run one sync on captured data: a kubelet configuration, the node's pods and its stats summary.")
final class PlanCommand implements Callable<Integer> {
  @Mixin RulesOption rules = new RulesOption();

  @Option(
      names = "--config",
      required = true,
      converter = Converters.InputFile.class,
      paramLabel = "FILE",
      description = "KubeletConfiguration YAML.")
  Path config;

  @Option(
      names = "--pods",
      required = true,
      converter = Converters.InputFile.class,
      paramLabel = "FILE",
      description = "Pods: a v1 PodList, a List, a YAML list of pods, or pod documents.")
  Path podsFile;

  @Option(
      names = "--summary",
      required = true,
      converter = Converters.InputFile.class,
      paramLabel = "FILE",
      description = "Stats summary JSON (GET /api/v1/nodes/NODE/proxy/stats/summary).")
  Path summaryFile;

  @Option(
      names = "--node",
      converter = Converters.NotEmpty.class,
      paramLabel = "NAME",
      description = "Node name (default: from the summary, else \"node\").")
  String node;

  @Mixin FsLayoutOption fsLayout = new FsLayoutOption();

  @Option(
      names = "--kubelet-version",
      paramLabel = "VERSION",
      description =
          "The kubelet to follow (1.32 to 1.37, e.g. 1.34 or v1.34.2; default: the newest evictd"
              + " knows).")
  String kubeletVersion;

  @Mixin OutputOption.Table output = new OutputOption.Table();

  @Option(
      names = "--explain",
      description = "Explain the decision: keys, rules that fired and the facts they matched.")
  boolean explain;

  @Mixin HtmlOption html = new HtmlOption();

  @CommandLine.Spec CommandLine.Model.CommandSpec spec;

  @Override
  public Integer call() {
    PrintWriter out = spec.commandLine().getOut();
    // the rules load on a second core while the inputs are parsed; their errors come in the order
    // they always did: the summary's, the pods', the configuration's, then the rules'
    CompletableFuture<RuleSet> ahead = rules.resolveAhead(null);
    Inputs in;
    try {
      in = inputs();
    } catch (RuntimeException | Error e) {
      RulesOption.settle(ahead); // a command that failed leaves no thread of its own behind
      throw e;
    }
    Summary summary = in.summary();
    List<Pod> pods = in.pods();
    EvictionConfig ec = in.config();
    RuleSet rs = rules.await(ahead);
    if (html.wanted()) {
      return writeHtml(out, ec, rs, summary, pods);
    }
    EvictionPlan plan;
    try (Planner planner = new Planner(rs, ec)) {
      Instant now = Instant.now();
      plan = planner.sync(now, summary, pods, PlannerHooks.noReclaim(summary));
      if (output.json()) {
        var root = PlanJson.plan(plan);
        root.set("config", PlanJson.config(ec));
        root.set("rules", PlanJson.rules(rs));
        out.println(PlanJson.write(root));
      } else {
        out.println("rules    " + rs.source() + "  sha256 " + rs.sha256().substring(0, 12));
        PlanText.printConfig(out, ec);
        out.println();
        PlanText.printPlan(out, "plan (" + pods.size() + " pods)", plan, now, !explain);
        if (explain) {
          out.println();
          ExplainCommand.explain(out, ec, plan, 1, pods, 10);
        }
      }
    }
    out.flush();
    return plan.failed() ? Main.FAILED : Main.OK;
  }

  /** What the command's three files hold. */
  private record Inputs(Summary summary, List<Pod> pods, EvictionConfig config) {}

  /** Parses the files, in the order their errors are reported. */
  private Inputs inputs() {
    PrintWriter err = spec.commandLine().getErr();
    Summary summary =
        CapturedInputs.nodeSummary(summaryFile, w -> err.println("evictd: warning: " + w));
    err.flush();
    List<Pod> pods = CapturedInputs.pods(podsFile);
    FsLayout layout = fsLayout.orInferred(summary);
    String nodeName = node;
    if (nodeName == null) {
      nodeName =
          summary.node() != null && summary.node().nodeName() != null
              ? summary.node().nodeName()
              : "node";
    }
    YamlNode kc = CapturedInputs.kubeletConfig(config);
    if (kubeletVersion != null) {
      try {
        dev.evictd.k8s.KubeletFeatureGates.minorOf(kubeletVersion);
      } catch (IllegalArgumentException e) {
        throw new dev.evictd.api.ConfigException("--kubelet-version: " + e.getMessage());
      }
    }
    EvictionConfig ec = KubeletEvictionConfig.from(kc, nodeName, layout, kubeletVersion);
    return new Inputs(summary, onNode(pods, ec.nodeName()), ec);
  }

  /**
   * The pods the kubelet of {@code nodeName} counts as active ({@link NodePods}), what was left out
   * said on stderr.
   */
  private List<Pod> onNode(List<Pod> pods, String nodeName) {
    NodePods on = NodePods.of(pods, nodeName);
    PrintWriter err = spec.commandLine().getErr();
    for (String reason : on.reasons(podsFile.toString(), "--node")) {
      err.println("evictd: " + reason);
    }
    err.flush();
    return on.active();
  }

  private int writeHtml(
      PrintWriter out, EvictionConfig ec, RuleSet rs, Summary summary, List<Pod> pods) {
    RuleSet b = html.against == null ? null : DiffCommand.load(html.against);
    Instant now = Instant.now();
    EvictionPlan plan;
    EvictionPlan planB = null;
    try (Planner planner = new Planner(rs, ec)) {
      plan = planner.sync(now, summary, pods, PlannerHooks.noReclaim(summary));
    }
    if (b != null) {
      try (Planner planner = new Planner(b, ec)) {
        planB = planner.sync(now, summary, pods, PlannerHooks.noReclaim(summary));
      }
    }
    String page =
        TimelineHtml.render(
            new TimelineHtml.Input(
                "plan: " + ec.nodeName() + ", " + pods.size() + " pods",
                null,
                "captured: config " + config + ", pods " + podsFile + ", summary " + summaryFile,
                ec,
                now,
                new TimelineHtml.Run(rs, List.of(plan)),
                planB == null ? null : new TimelineHtml.Run(b, List.of(planB)),
                null));
    TimelineHtml.write(html.html, page);
    out.println("plan of " + pods.size() + " pods written to " + html.html);
    out.flush();
    return plan.failed() ? Main.FAILED : Main.OK;
  }
}
