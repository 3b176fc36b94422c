package dev.evictd.cli;

import dev.evictd.api.EvictionConfig;
import dev.evictd.api.EvictionDecision;
import dev.evictd.api.EvictionPlan;
import dev.evictd.api.Threshold;
import dev.evictd.config.GoDuration;
import dev.evictd.engine.RuleSet;
import dev.evictd.fixture.Fixture;
import dev.evictd.fixture.FixtureLoader;
import dev.evictd.fixture.FixtureResult;
import dev.evictd.fixture.FixtureRunner;
import io.fabric8.kubernetes.api.model.Pod;
import java.io.PrintWriter;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.concurrent.Callable;
import java.util.stream.Collectors;
import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Option;
import picocli.CommandLine.Parameters;
import tools.jackson.databind.node.ObjectNode;

/** {@code evictd explain}: why the victim of a step was chosen. */
@Command(
    name = "explain",
    mixinStandardHelpOptions = true,
    description = {
      "Explain a fixture step: the signal acted on and why, why each pod ranks where it does (its keys), which rules",
      "fired for the chosen victim and which facts they matched, and why exempt pods were skipped.",
      "Default step: the first step that evicts, else the last one."
    })
final class ExplainCommand implements Callable<Integer> {
  @Mixin RulesOption rules = new RulesOption();

  @Option(names = "--step", paramLabel = "N", description = "The step to explain (1-based).")
  Integer step;

  @Mixin OutputOption.Text output = new OutputOption.Text();

  @Option(
      names = "--top",
      paramLabel = "N",
      defaultValue = "10",
      description = "How many ranked pods to show (0: all).")
  int top;

  @Parameters(
      paramLabel = "FIXTURE",
      converter = Converters.InputFile.class,
      description = "The fixture file.")
  Path fixture;

  @CommandLine.Spec CommandLine.Model.CommandSpec spec;

  @Override
  public Integer call() {
    Fixture f = FixtureLoader.load(fixture);
    RuleLoadOptions.printWarnings(f.warnings(), spec.commandLine().getErr());
    RuleSet rs = rules.resolve(f.rules());
    FixtureResult r = new FixtureRunner(p -> rs).run(f, false);
    List<EvictionPlan> plans = r.plans();
    int n;
    if (step != null) {
      if (step < 1 || step > plans.size()) {
        throw new dev.evictd.api.ConfigException(
            "--step "
                + step
                + ": the fixture has "
                + plans.size()
                + " step"
                + (plans.size() == 1 ? "" : "s"));
      }
      n = step;
    } else {
      n = plans.size();
      for (int i = 0; i < plans.size(); i++) {
        if (!plans.get(i).decisions().isEmpty()) {
          n = i + 1;
          break;
        }
      }
    }
    EvictionPlan plan = plans.get(n - 1);
    List<Pod> podsAtStep = podsAt(f, n);
    PrintWriter out = spec.commandLine().getOut();
    if (output.json()) {
      ObjectNode root = PlanJson.plan(plan);
      root.put("fixture", f.name());
      root.put("step", n);
      root.set("rules", PlanJson.rules(rs));
      out.println(PlanJson.write(root));
    } else {
      explain(out, f.config(), plan, n, podsAtStep, top);
    }
    out.flush();
    return Main.OK;
  }

  private static List<Pod> podsAt(Fixture f, int n) {
    List<Pod> pods = f.pods();
    for (int i = 0; i < n; i++) {
      if (f.steps().get(i).pods() != null) {
        pods = f.steps().get(i).pods();
      }
    }
    return pods;
  }

  /** The explanation of one plan, as text. */
  static void explain(
      PrintWriter out, EvictionConfig config, EvictionPlan plan, int n, List<Pod> pods, int top) {
    Instant start = FixtureRunner.START;
    out.println(
        "step " + n + " (t=" + GoDuration.format(Duration.between(start, plan.now())) + ")");
    String kubelet = PlanText.kubelet(config);
    if (kubelet != null) {
      out.println("  " + kubelet);
    }
    if (plan.failed()) {
      out.println("  the sync failed, nothing is evicted: " + plan.failure());
      return;
    }
    EvictionPlan.ThresholdStatus acted = null;
    for (EvictionPlan.ThresholdStatus s : plan.thresholds()) {
      if (s.actionable() && plan.signal() == s.threshold().signal() && acted == null) {
        acted = s;
      }
    }
    if (plan.signal() == null) {
      List<EvictionPlan.ThresholdStatus> active =
          plan.thresholds().stream().filter(EvictionPlan.ThresholdStatus::active).toList();
      if (active.isEmpty()) {
        out.println("  no threshold is met: nothing to act on");
      } else {
        out.println("  thresholds in effect, none acted on yet:");
        for (EvictionPlan.ThresholdStatus s : active) {
          out.println("    " + PlanText.describe(s.threshold()) + " - " + whyNotYet(s, plan.now()));
        }
      }
    } else if (acted != null) {
      Threshold t = acted.threshold();
      out.println(
          "  acting on "
              + t.signal()
              + ": "
              + PlanText.describe(t)
              + " (threshold "
              + acted.quantity()
              + ", available "
              + plan.observations().stream()
                  .filter(o -> o.signal() == t.signal())
                  .findFirst()
                  .map(o -> o.availableQuantity().toString())
                  .orElse("?")
              + (t.isHard()
                  ? "; hard: acted on at once"
                  : "; soft: grace period "
                      + GoDuration.format(t.gracePeriod())
                      + " met, first observed t="
                      + GoDuration.format(Duration.between(start, acted.firstObservedAt())))
              + ")");
      out.println("  (threshold from " + t.origin() + ")");
    }
    if (!plan.observations().isEmpty()) {
      out.println("  figures (source, age at the sync):");
      for (dev.evictd.api.Observation o : plan.observations()) {
        out.println(
            "    " + o.signal() + " " + o.availableQuantity() + " (" + plan.provenance(o) + ")");
      }
    }
    if (!plan.reclaimed().isEmpty()) {
      out.println(
          "  node-level reclaim ran first: "
              + plan.reclaimed().stream().map(Object::toString).collect(Collectors.joining(", "))
              + (plan.reclaimResolved()
                  ? " - and freed enough, so no pod is evicted"
                  : " - and did not free enough"));
    }
    if (!plan.ranking().isEmpty()) {
      out.println(
          "  ranking for "
              + plan.signal()
              + " ("
              + plan.ranking().size()
              + " pods, their figures from "
              + plan.source(plan.signal())
              + "; keys compared in order, equal keys keep the pod list order):");
      int shown = top <= 0 ? plan.ranking().size() : Math.min(top, plan.ranking().size());
      for (int i = 0; i < shown; i++) {
        EvictionPlan.RankedPod r = plan.ranking().get(i);
        out.println(
            "    "
                + (i + 1)
                + ". "
                + r.pod().key()
                + "  "
                + r.key().stream()
                    .map(c -> c.name() + "=" + c.shownValue())
                    .collect(Collectors.joining(" "))
                + (r.exemptReason() == null ? "" : "   skipped: " + r.exemptReason()));
      }
      if (shown < plan.ranking().size()) {
        out.println("    ... " + (plan.ranking().size() - shown) + " more (--top 0 shows all)");
      }
      if (!plan.ranking().isEmpty()) {
        out.println(
            "    key levels: "
                + plan.ranking().get(0).key().stream()
                    .map(c -> c.name() + (c.descending() ? " (larger first)" : " (smaller first)"))
                    .collect(Collectors.joining(", then ")));
      }
    }
    if (plan.decisions().isEmpty()) {
      out.println("  no pod is evicted in this step");
    }
    for (EvictionDecision d : plan.decisions()) {
      out.println(
          "  evict "
              + d.pod().key()
              + " ("
              + d.kind().name().toLowerCase(java.util.Locale.ROOT).replace('_', '-')
              + ", "
              + d.signal()
              + (PlanText.methodSuffix(d).isEmpty() ? "" : "," + PlanText.methodSuffix(d))
              + ")");
      out.println(
          "    grace period " + d.gracePeriodSeconds() + "s: " + whyGrace(config, d, acted, pods));
      out.println("    message: \"" + d.message() + "\"");
      List<EvictionPlan.RuleFiring> trace = plan.decisionTrace().get(d.pod().uid());
      if (trace != null && !trace.isEmpty()) {
        out.println("    rules that fired for this decision (the deciding rule first):");
        for (EvictionPlan.RuleFiring rf : trace) {
          out.println("      [" + rf.phase() + "] \"" + rf.rule() + "\"");
          out.println("          matched: " + String.join(", ", rf.facts()));
        }
      }
    }
    for (EvictionPlan.RefusedDecision r : plan.refused()) {
      out.println("  refused: " + PlanText.refused(r));
      if (r.rules().size() > 1) {
        out.println("    by rules: " + String.join(" <- ", r.rules()));
      }
    }
    for (String w : plan.warnings()) {
      out.println("  warning: " + w);
    }
  }

  private static String whyNotYet(EvictionPlan.ThresholdStatus s, Instant now) {
    if (!s.gracePeriodMet()) {
      Duration elapsed =
          s.firstObservedAt() == null ? Duration.ZERO : Duration.between(s.firstObservedAt(), now);
      return "grace period "
          + GoDuration.format(s.threshold().gracePeriod())
          + " not met ("
          + GoDuration.format(elapsed)
          + " elapsed)";
    }
    if (!s.actionable()) {
      return "statistics not updated since the last sync";
    }
    return "another threshold is acted on first";
  }

  private static String whyGrace(
      EvictionConfig config,
      EvictionDecision d,
      EvictionPlan.ThresholdStatus acted,
      List<Pod> pods) {
    if (d.kind() == EvictionDecision.Kind.LOCAL_STORAGE) {
      return "local-storage limit evictions are immediate";
    }
    if (acted == null || acted.threshold().isHard()) {
      return "hard threshold";
    }
    Long own = null;
    for (Pod p : pods) {
      if (p.getMetadata() != null
          && d.pod().name().equals(p.getMetadata().getName())
          && d.pod().namespace().equals(dev.evictd.engine.PodFacts.namespace(p))
          && p.getSpec() != null) {
        own = dev.evictd.engine.PodFacts.terminationGracePeriodSeconds(p.getSpec());
      }
    }
    boolean overwrite =
        config.kubelet() != null
            && config
                .kubelet()
                .gate(dev.evictd.api.Kubelet.ALLOW_OVERWRITE_TERMINATION_GRACE_PERIOD_SECONDS);
    return "soft threshold: evictionMaxPodGracePeriod "
        + config.maxPodGracePeriodSeconds()
        + "s"
        + (own == null
            ? ""
            : overwrite
                ? ", not capped by the pod's terminationGracePeriodSeconds "
                    + own
                    + "s (AllowOverwriteTerminationGracePeriodSeconds on)"
                : ", capped by the pod's terminationGracePeriodSeconds " + own + "s")
        + (config.maxPodGracePeriodSeconds() < 0 || (own != null && own < 0 && !overwrite)
            ? "; below 1 s, raised to 1 s by the kubelet's pod worker"
            : "");
  }
}
