package dev.evictd.engine;

import java.util.List;
import org.kie.api.KieBase;

/**
 * A compiled rule set: the Drools knowledge base, where it came from, and the SHA-256 of its
 * sources (file names and contents), which identifies the exact policy a node runs.
 *
 * @param kieBase the compiled rules
 * @param source the directory (or "default") the rules were loaded from
 * @param files the rule files, in load order
 * @param sha256 hex digest of the rule set
 * @param warnings what loading it reported without refusing it: files others could write ({@code
 *     rules check}), lint refusals let through by {@code --allow-unsafe-rules}
 */
public record RuleSet(
    KieBase kieBase, String source, List<String> files, String sha256, List<String> warnings) {
  public RuleSet {
    files = List.copyOf(files);
    warnings = List.copyOf(warnings);
  }

  /** A rule set loaded without warnings. */
  public RuleSet(KieBase kieBase, String source, List<String> files, String sha256) {
    this(kieBase, source, files, sha256, List.of());
  }
}
