package dev.evictd.bench;

import dev.evictd.engine.RuleSet;
import dev.evictd.ruleset.RuleCompiler;

/** The packaged default rules, compiled once per JVM. */
final class Rules {
  private static RuleSet rules;

  private Rules() {}

  static synchronized RuleSet defaults() {
    if (rules == null) {
      rules = RuleCompiler.compileDefault();
    }
    return rules;
  }
}
