package dev.evictd.cli;

import dev.evictd.engine.RuleSet;
import dev.evictd.ruleset.RuleCompiler;
import java.nio.file.Path;
import java.util.HashMap;
import java.util.Map;
import picocli.CommandLine;
import picocli.CommandLine.Option;

/**
 * The {@code --rules DIR} option shared by the commands that run the planner (with the pin, lint
 * and permission options of {@link RuleLoadOptions}), and a cache of compiled sets.
 */
final class RulesOption extends RuleLoadOptions {
  @Option(
      names = "--rules",
      paramLabel = "DIR",
      description = "Rules directory (*.drl). Default: the rules packaged with evictd.")
  Path rules;

  @CommandLine.Spec(CommandLine.Spec.Target.MIXEE)
  CommandLine.Model.CommandSpec mixee;

  private final Map<Path, RuleSet> cache = new HashMap<>();
  private RuleSet defaults;

  /**
   * The rule set chosen by --rules, else {@code fallback} (a fixture's own rules), else the
   * packaged defaults.
   */
  RuleSet resolve(Path fallback) {
    Path dir = rules != null ? rules : fallback;
    RuleCompiler.Options options = options(RuleCompiler.Ownership.IGNORE);
    if (dir == null) {
      if (defaults == null) {
        defaults = RuleCompiler.compileDefault(options);
        warn(defaults);
      }
      return defaults;
    }
    Path key = dir.toAbsolutePath().normalize();
    RuleSet rs = cache.get(key);
    if (rs == null) {
      rs = RuleCompiler.compile(dir, options);
      cache.put(key, rs);
      warn(rs);
    }
    return rs;
  }

  private void warn(RuleSet rs) {
    if (mixee != null) {
      printWarnings(rs, mixee.commandLine().getErr());
    }
  }
}
