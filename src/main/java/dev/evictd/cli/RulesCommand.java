package dev.evictd.cli;

import dev.evictd.engine.RuleCompiler;
import dev.evictd.engine.RuleSet;
import java.nio.file.Path;
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
    spec.commandLine().usage(spec.commandLine().getOut());
  }

  /** {@code evictd rules check [DIR]}: compiles a rule set and reports errors with file:line:column. */
  @Command(
      name = "check",
      mixinStandardHelpOptions = true,
      description = "Compile a rules directory (default: the packaged rules); exit 2 on any error.")
  static final class Check implements Callable<Integer> {
    @Parameters(paramLabel = "DIR", arity = "0..1", description = "Rules directory.")
    Path dir;

    @CommandLine.Spec CommandLine.Model.CommandSpec spec;

    @Override
    public Integer call() {
      RuleSet rs = dir == null ? RuleCompiler.compileDefault() : RuleCompiler.compile(dir);
      long rules = rs.kieBase().getKiePackages().stream().mapToLong(p -> p.getRules().size()).sum();
      spec.commandLine()
          .getOut()
          .println(
              "ok: "
                  + rs.source()
                  + ": "
                  + rs.files().size()
                  + " files, "
                  + rules
                  + " rules, sha256 "
                  + rs.sha256());
      return Main.OK;
    }
  }
}
