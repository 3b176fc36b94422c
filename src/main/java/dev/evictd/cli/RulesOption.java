package dev.evictd.cli;

import dev.evictd.engine.RuleCompiler;
import dev.evictd.engine.RuleSet;
import java.nio.file.Path;
import java.util.HashMap;
import java.util.Map;
import picocli.CommandLine.Option;

/** The {@code --rules DIR} option shared by the commands that run the planner, with a cache of compiled sets. */
final class RulesOption {
  @Option(
      names = "--rules",
      paramLabel = "DIR",
      description = "Rules directory (*.drl). Default: the rules packaged with evictd.")
  Path rules;

  private final Map<Path, RuleSet> cache = new HashMap<>();
  private RuleSet defaults;

  /** The rule set chosen by --rules, else {@code fallback} (a fixture's own rules), else the packaged defaults. */
  RuleSet resolve(Path fallback) {
    Path dir = rules != null ? rules : fallback;
    if (dir == null) {
      if (defaults == null) {
        defaults = RuleCompiler.compileDefault();
      }
      return defaults;
    }
    Path key = dir.toAbsolutePath().normalize();
    RuleSet rs = cache.get(key);
    if (rs == null) {
      rs = RuleCompiler.compile(dir);
      cache.put(key, rs);
    }
    return rs;
  }
}
