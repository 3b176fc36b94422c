package dev.evictd.cli;

import dev.evictd.engine.RuleCompiler;
import dev.evictd.engine.RuleSet;
import java.nio.file.Files;
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

    @CommandLine.Mixin RuleLoadOptions load = new RuleLoadOptions();

    @CommandLine.Spec CommandLine.Model.CommandSpec spec;

    @Override
    public Integer call() {
      RuleCompiler.Options options = load.options(RuleCompiler.Ownership.WARN);
      RuleSet rs;
      if (dir == null) {
        rs = RuleCompiler.compileDefault(options);
      } else if (Files.isRegularFile(dir)) {
        rs = RuleCompiler.compileFile(dir, options);
      } else {
        rs = RuleCompiler.compile(dir, options);
      }
      RuleLoadOptions.printWarnings(rs, spec.commandLine().getErr());
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
                  + rs.sha256()
                  + (options.allowUnsafe() ? ", policy lint DISABLED" : ", policy lint passed"));
      return Main.OK;
    }
  }
}
