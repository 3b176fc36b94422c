package dev.evictd.cli;

import dev.evictd.api.EvictdException;
import dev.evictd.api.EvictionPlan;
import dev.evictd.engine.RuleSet;
import dev.evictd.fixture.Fixture;
import dev.evictd.fixture.FixtureLoader;
import dev.evictd.fixture.FixtureResult;
import dev.evictd.fixture.FixtureRunner;
import dev.evictd.ruleset.RuleCompiler;
import java.io.PrintWriter;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.Callable;
import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Parameters;

/** {@code evictd rules}: work with rule sets. */
@Command(
    name = "rules",
    mixinStandardHelpOptions = true,
    description = "Work with rule sets.",
    subcommands = {RulesCommand.Check.class})
final class RulesCommand implements Runnable {
  @CommandLine.Spec CommandLine.Model.CommandSpec spec;

  @Override
  public void run() {
    throw Main.noCommand(spec.commandLine());
  }

  /**
   * {@code evictd rules check [PATH]}: runs the policy lint and compiles a rule set (a directory,
   * or one file on its own); refusals and errors as {@code file:line}, exit 2. Files others can
   * write are warned about.
   */
  @Command(
      name = "check",
      mixinStandardHelpOptions = true,
      description = {
        "Check and compile a rules directory or one .drl file (default: the packaged rules); exit 2 on any error.",
        "The policy lint refuses rules that reach outside evictd's facts and plain Java values (see docs/security.md)."
      })
  static final class Check implements Callable<Integer> {
    @Parameters(
        paramLabel = "PATH",
        arity = "0..1",
        description = "Rules directory, or one .drl file.")
    Path dir;

    @CommandLine.Option(
        names = "--run",
        paramLabel = "FIXTURE",
        arity = "1..*",
        description =
            "Also run the rule set on these fixtures (files or directories) and fail (exit 1) on any"
                + " run-time failure: a rule that throws, loops or overruns its budget. Expectations"
                + " are not compared (that is evictd test).")
    List<Path> run;

    @CommandLine.Mixin RuleLoadOptions load = new RuleLoadOptions();

    @CommandLine.Spec CommandLine.Model.CommandSpec spec;

    @Override
    public Integer call() {
      RuleCompiler.Options options = load.options(RuleCompiler.Ownership.WARN);
      RuleCompiler.Checked checked;
      RuleSet rs = null;
      if (run != null) {
        // running the set needs it compiled
        if (dir == null) {
          rs = RuleCompiler.compileDefault(options);
        } else if (Files.isRegularFile(dir)) {
          rs = RuleCompiler.compileFile(dir, options);
        } else {
          rs = RuleCompiler.compile(dir, options);
        }
        checked =
            new RuleCompiler.Checked(
                rs.source(), rs.files(), rs.sha256(), ruleCount(rs), rs.warnings(), false);
      } else if (dir == null) {
        checked = RuleCompiler.checkDefault(options);
      } else if (Files.isRegularFile(dir)) {
        checked = RuleCompiler.checkFile(dir, options);
      } else {
        checked = RuleCompiler.check(dir, options);
      }
      RuleLoadOptions.printWarnings(checked.warnings(), spec.commandLine().getErr());
      spec.commandLine()
          .getOut()
          .println(
              "ok: "
                  + checked.source()
                  + ": "
                  + checked.files().size()
                  + " files, "
                  + checked.rules()
                  + " rules, sha256 "
                  + checked.sha256()
                  + (options.allowUnsafe() ? ", policy lint DISABLED" : ", policy lint passed"));
      return rs == null ? Main.OK : runFixtures(rs);
    }

    private static long ruleCount(RuleSet rs) {
      return rs.kieBase().getKiePackages().stream().mapToLong(p -> p.getRules().size()).sum();
    }

    /**
     * Runs every fixture on {@code rs} (whatever rules the fixture names) and reports each run-time
     * failure in one line naming the fixture, the step and the rule.
     */
    private int runFixtures(RuleSet rs) {
      PrintWriter out = spec.commandLine().getOut();
      FixtureRunner runner = new FixtureRunner(ignored -> rs);
      int fixtures = 0;
      int failures = 0;
      boolean unreadable = false;
      for (Path p : run) {
        List<Path> files;
        try {
          files = TestCommand.fixtureFiles(p);
        } catch (EvictdException e) {
          out.println("ERROR " + TestCommand.about(p, e.getMessage()));
          unreadable = true;
          continue;
        }
        for (Path f : files) {
          Fixture fixture;
          try {
            fixture = FixtureLoader.load(f);
          } catch (EvictdException e) {
            out.println("ERROR " + TestCommand.about(f, e.getMessage()));
            unreadable = true;
            continue;
          }
          RuleLoadOptions.printWarnings(fixture.warnings(), spec.commandLine().getErr());
          fixtures++;
          String failure = runTimeFailure(fixture, runner.runUntilFailure(fixture));
          if (failure != null) {
            failures++;
            out.println("FAIL " + f + ": " + failure);
          }
        }
      }
      out.println(
          "ran "
              + fixtures
              + " fixtures on "
              + rs.sha256().substring(0, 12)
              + ": "
              + (failures == 0 ? "no run-time failure" : failures + " with run-time failures"));
      if (failures > 0) {
        return Main.FAILED;
      }
      return unreadable ? Main.BAD_INPUT : Main.OK;
    }

    /** The first run-time failure of a fixture's run (one line), or null. */
    static String runTimeFailure(Fixture fixture, FixtureResult r) {
      if (r.status() == FixtureResult.Status.ERROR) {
        return r.mismatch().toString().lines().findFirst().orElse("");
      }
      for (int i = 0; i < r.plans().size(); i++) {
        EvictionPlan plan = r.plans().get(i);
        if (plan.failed()) {
          return "step "
              + fixture.steps().get(i).index()
              + ": "
              + plan.failure().lines().findFirst().orElse("");
        }
      }
      return null;
    }
  }
}
