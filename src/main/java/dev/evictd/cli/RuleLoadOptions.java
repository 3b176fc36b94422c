package dev.evictd.cli;

import dev.evictd.engine.RuleSet;
import dev.evictd.ruleset.RuleCompiler;
import dev.evictd.ruleset.RuleProvenance;
import java.io.PrintWriter;
import java.util.Locale;
import java.util.Map;
import picocli.CommandLine.Option;

/**
 * How the commands that load rules trust them: the SHA-256 pin, the policy lint opt-out, file
 * permissions.
 */
class RuleLoadOptions {
  /**
   * The environment variable that, set to 1, has the same effect as {@code --allow-unsafe-rules}.
   */
  static final String UNSAFE_ENV = "EVICTD_ALLOW_UNSAFE_RULES";

  @Option(
      names = "--rules-sha256",
      paramLabel = "HEX",
      description =
          "Accept only the rule set with this SHA-256 (as `evictd rules check` prints it).")
  String pin;

  @Option(
      names = "--allow-unsafe-rules",
      description = {
        "Load rules the policy lint refuses (I/O, processes, reflection, threads...): each refusal is logged.",
        "For trusted experiments only. Also " + UNSAFE_ENV + "=1."
      })
  boolean allowUnsafe;

  @Option(
      names = "--strict-permissions",
      description =
          "Refuse rule files and directories that anyone but root or this user can write.")
  boolean strictPermissions;

  /** The load options, with {@code ownership} unless --strict-permissions asks to enforce it. */
  RuleCompiler.Options options(RuleCompiler.Ownership ownership) {
    String p = pin == null ? null : RuleProvenance.normalizePin(pin);
    return new RuleCompiler.Options(
        allowUnsafe || unsafeFromEnv(System.getenv()),
        p,
        strictPermissions ? RuleCompiler.Ownership.ENFORCE : ownership);
  }

  /** Whether the environment asks for unsafe rules ({@code 1}, {@code true} or {@code yes}). */
  static boolean unsafeFromEnv(Map<String, String> env) {
    String v = env.get(UNSAFE_ENV);
    if (v == null) {
      return false;
    }
    return switch (v.trim().toLowerCase(Locale.ROOT)) {
      case "1", "true", "yes" -> true;
      default -> false;
    };
  }

  /** Prints what loading a rule set reported without refusing it. */
  static void printWarnings(RuleSet rs, PrintWriter err) {
    for (String w : rs.warnings()) {
      err.println("evictd: warning: " + w);
    }
    err.flush();
  }
}
