package dev.evictd.engine;

import dev.evictd.ruleset.RuleCompiler;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;

/** Rule sets written for one test and compiled as users' rule files are. */
final class TestRules {
  private TestRules() {}

  /** Lint refusals kept as warnings: for rules that must do what the lint refuses (wall clock). */
  static final RuleCompiler.Options UNSAFE =
      new RuleCompiler.Options(true, null, RuleCompiler.Ownership.IGNORE);

  /** Compiles {@code rules} (DRL after the package and import lines) from a file in {@code dir}. */
  static RuleSet compile(Path dir, String rules) {
    return compile(dir, rules, RuleCompiler.Options.STRICT);
  }

  /** The same, with the given compile options. */
  static RuleSet compile(Path dir, String rules, RuleCompiler.Options options) {
    Path file = dir.resolve("test.drl");
    try {
      Files.writeString(
          file, "package dev.evictd.rules;\n\nimport dev.evictd.api.*;\n\n" + rules + "\n");
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
    return RuleCompiler.compileFile(file, options);
  }
}
