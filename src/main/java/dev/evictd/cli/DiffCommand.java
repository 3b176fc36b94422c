package dev.evictd.cli;

import dev.evictd.api.EvictdException;
import dev.evictd.api.EvictionDecision;
import dev.evictd.api.EvictionPlan;
import dev.evictd.engine.RuleSet;
import dev.evictd.fixture.Fixture;
import dev.evictd.fixture.FixtureLoader;
import dev.evictd.fixture.FixtureResult;
import dev.evictd.fixture.FixtureRunner;
import dev.evictd.ruleset.RuleCompiler;
import java.io.PrintWriter;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;
import java.util.concurrent.Callable;
import java.util.stream.Collectors;
import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;
import picocli.CommandLine.Parameters;

/**
 * {@code evictd diff}: runs two rule sets over the same fixtures and lists where their plans
 * differ.
 */
@Command(
    name = "diff",
    mixinStandardHelpOptions = true,
    description = {
      "Shadow-test a policy change offline: run two rule sets over the same fixtures (every step, expectations",
      "ignored) and list where conditions, the signal acted on, the ranking or the evictions differ.",
      "Exit 0 when the plans agree everywhere, 1 when they differ, 2 on bad input."
    })
final class DiffCommand implements Callable<Integer> {
  @Option(
      names = "--rules",
      required = true,
      converter = Converters.NotEmpty.class,
      paramLabel = "DIR",
      description = "The rule set under test (\"default\": the packaged rules).")
  String rulesA;

  @Option(
      names = "--against",
      required = true,
      converter = Converters.NotEmpty.class,
      paramLabel = "DIR",
      description = "The rule set to compare with (\"default\": the packaged rules).")
  String rulesB;

  @Parameters(paramLabel = "PATH", arity = "1..*", description = "Fixture files or directories.")
  List<Path> paths;

  @CommandLine.Spec CommandLine.Model.CommandSpec spec;

  static RuleSet load(String dir) {
    return "default".equals(dir)
        ? RuleCompiler.compileDefault()
        : RuleCompiler.compile(Path.of(dir));
  }

  @Override
  public Integer call() {
    PrintWriter out = spec.commandLine().getOut();
    RuleSet a = load(rulesA);
    RuleSet b = load(rulesB);
    List<Path> files = new ArrayList<>();
    for (Path p : paths) {
      files.addAll(TestCommand.fixtureFiles(p));
    }
    int compared = 0;
    int differing = 0;
    boolean errors = false;
    for (Path file : files) {
      Fixture f;
      try {
        f = FixtureLoader.load(file);
      } catch (EvictdException e) {
        out.println("ERROR " + TestCommand.about(file, e.getMessage()));
        errors = true;
        continue;
      }
      RuleLoadOptions.printWarnings(f.warnings(), spec.commandLine().getErr());
      FixtureResult ra = new FixtureRunner(x -> a).run(f, false);
      FixtureResult rb = new FixtureRunner(x -> b).run(f, false);
      compared++;
      List<String> diffs = new ArrayList<>();
      if (ra.status() == FixtureResult.Status.ERROR || rb.status() == FixtureResult.Status.ERROR) {
        diffs.add(
            "cannot run: "
                + (ra.status() == FixtureResult.Status.ERROR ? ra.mismatch() : rb.mismatch()));
      } else {
        int steps = Math.min(ra.plans().size(), rb.plans().size());
        for (int i = 0; i < steps; i++) {
          compare(i + 1, ra.plans().get(i), rb.plans().get(i), diffs);
        }
      }
      if (diffs.isEmpty()) {
        out.println("same  " + file);
      } else {
        differing++;
        out.println("DIFF  " + file + " (" + f.name() + ")");
        diffs.forEach(d -> out.println("      " + d));
      }
    }
    out.println(
        compared
            + " fixtures compared, "
            + differing
            + " differ ("
            + rulesA
            + " vs "
            + rulesB
            + ")");
    out.flush();
    if (errors) {
      return Main.BAD_INPUT;
    }
    return differing > 0 ? Main.FAILED : Main.OK;
  }

  static void compare(int step, EvictionPlan a, EvictionPlan b, List<String> diffs) {
    String prefix = "step " + step + ": ";
    if (!Objects.equals(a.failure(), b.failure())) {
      diffs.add(prefix + "failure: " + a.failure() + " | " + b.failure());
    }
    if (!a.conditions().equals(b.conditions())) {
      diffs.add(prefix + "conditions: " + a.conditions() + " | " + b.conditions());
    }
    if (a.signal() != b.signal()) {
      diffs.add(prefix + "signal: " + a.signal() + " | " + b.signal());
    }
    if (!a.reclaimed().equals(b.reclaimed())) {
      diffs.add(prefix + "reclaimed: " + a.reclaimed() + " | " + b.reclaimed());
    }
    List<String> ka = a.ranking().stream().map(r -> r.pod().key()).toList();
    List<String> kb = b.ranking().stream().map(r -> r.pod().key()).toList();
    if (!ka.equals(kb)) {
      diffs.add(prefix + "ranking: " + head(ka) + " | " + head(kb));
    }
    String ea = evictions(a.decisions());
    String eb = evictions(b.decisions());
    if (!ea.equals(eb)) {
      diffs.add(prefix + "evicted: " + ea + " | " + eb);
    }
  }

  private static String head(List<String> keys) {
    return keys.size() <= 5
        ? keys.toString()
        : keys.subList(0, 5) + " ... (" + keys.size() + " pods)";
  }

  private static String evictions(List<EvictionDecision> ds) {
    return ds.stream()
        .map(
            d ->
                d.pod().key() + " grace " + d.gracePeriodSeconds() + "s" + PlanText.methodSuffix(d))
        .collect(Collectors.joining(", ", "[", "]"));
  }
}
