package dev.evictd.cli;

import dev.evictd.api.EvictionPlan;
import dev.evictd.engine.RuleSet;
import dev.evictd.fixture.Fixture;
import dev.evictd.fixture.FixtureLoader;
import dev.evictd.fixture.FixtureResult;
import dev.evictd.fixture.FixtureRunner;
import java.io.PrintWriter;
import java.nio.file.Path;
import java.util.concurrent.Callable;
import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Option;
import picocli.CommandLine.Parameters;

/** {@code evictd replay}: runs a fixture and prints its timeline, step by step. */
@Command(
    name = "replay",
    mixinStandardHelpOptions = true,
    description =
        "Run a fixture and print a readable timeline: clock, signals, thresholds, conditions, ranking, decisions.")
final class ReplayCommand implements Callable<Integer> {
  @Mixin RulesOption rules = new RulesOption();

  @Mixin OutputOption.Text output = new OutputOption.Text();

  @Option(names = "--full-ranking", description = "Print every ranked pod, not only the head.")
  boolean fullRanking;

  @Mixin HtmlOption html = new HtmlOption();

  @Parameters(
      paramLabel = "FIXTURE",
      converter = Converters.InputFile.class,
      description = "The fixture file.")
  Path fixture;

  @CommandLine.Spec CommandLine.Model.CommandSpec spec;

  @Override
  public Integer call() {
    PrintWriter out = spec.commandLine().getOut();
    Fixture f = FixtureLoader.load(fixture);
    RuleLoadOptions.printWarnings(f.warnings(), spec.commandLine().getErr());
    RuleSet rs = rules.resolve(f.rules());
    if (html.wanted()) {
      return writeHtml(out, f, rs);
    }
    FixtureResult r = new FixtureRunner(p -> rs).run(f);
    if (output.json()) {
      out.println(PlanJson.replay(f, rs, r));
      out.flush();
      return r.passed() ? Main.OK : Main.FAILED;
    }
    out.println("fixture  " + f.name() + "  (" + f.file() + ")");
    out.println("rules    " + rs.source() + "  sha256 " + rs.sha256().substring(0, 12));
    PlanText.printConfig(out, f.config());
    int i = 0;
    for (EvictionPlan p : r.plans()) {
      out.println();
      PlanText.printPlan(out, "step " + (++i), p, FixtureRunner.START, fullRanking);
    }
    out.println();
    switch (r.status()) {
      case PASSED ->
          out.println("result   PASS (" + r.plans().size() + " steps, expectations hold)");
      case FAILED -> out.println("result   FAIL: " + r.mismatch());
      default -> out.println("result   ERROR: " + r.mismatch());
    }
    out.flush();
    return exitCode(r);
  }

  private static int exitCode(FixtureResult r) {
    return r.passed()
        ? Main.OK
        : (r.status() == FixtureResult.Status.FAILED ? Main.FAILED : Main.BAD_INPUT);
  }

  /**
   * The timeline as HTML. With {@code --against} both rule sets run every step, as in {@code evictd
   * diff}; without, the run stops at the first mismatch, as the text timeline does.
   */
  private int writeHtml(PrintWriter out, Fixture f, RuleSet rs) {
    RuleSet b = html.against == null ? null : DiffCommand.load(html.against);
    FixtureResult r = new FixtureRunner(p -> rs).run(f, b == null);
    if (r.status() == FixtureResult.Status.ERROR && r.plans().isEmpty()) {
      out.println("result   ERROR: " + r.mismatch() + " (no timeline written)");
      out.flush();
      return Main.BAD_INPUT;
    }
    FixtureResult rb = b == null ? null : new FixtureRunner(p -> b).run(f, false);
    String result =
        switch (r.status()) {
          case PASSED -> "PASS (expectations hold)";
          case FAILED -> "FAIL: " + r.mismatch();
          default -> "ERROR: " + r.mismatch();
        };
    String page =
        TimelineHtml.render(
            new TimelineHtml.Input(
                f.name(),
                f.description(),
                "fixture " + f.file(),
                f.config(),
                FixtureRunner.START,
                new TimelineHtml.Run(rs, r.plans()),
                rb == null ? null : new TimelineHtml.Run(b, rb.plans()),
                result));
    TimelineHtml.write(html.html, page);
    out.println(
        "timeline of "
            + r.plans().size()
            + (r.plans().size() == 1 ? " step" : " steps")
            + " written to "
            + html.html
            + " ("
            + result
            + ")");
    out.flush();
    return exitCode(r);
  }
}
