package dev.evictd.cli;

import dev.evictd.engine.RuleSet;
import dev.evictd.ruleset.RuleCompiler;
import dev.evictd.ruleset.RuleProvenance;
import dev.evictd.ruleset.RuleSetCache;
import java.io.PrintWriter;
import java.nio.file.Files;
import java.nio.file.Path;
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
      converter = Converters.Sha256Pin.class,
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

  /**
   * The environment variable naming the rule-set cache directory ({@code off}: no cache), when
   * {@code --rules-cache} is not given.
   */
  static final String CACHE_ENV = "EVICTD_RULES_CACHE";

  @Option(
      names = "--rules-cache",
      converter = Converters.NotEmpty.class,
      paramLabel = "DIR|off",
      description = {
        "Where rule sets already checked are remembered, so an unchanged set is not checked again"
            + " (entries are verified, see docs/security.md); off: none.",
        "Default: $"
            + CACHE_ENV
            + ", else $XDG_CACHE_HOME/evictd/rules, else ~/.cache/evictd/rules."
      })
  String cache;

  @Option(
      names = "--strict-permissions",
      description =
          "Refuse rule files and directories that anyone but root or this user can write.")
  boolean strictPermissions;

  /** The load options, with {@code ownership} unless --strict-permissions asks to enforce it. */
  RuleCompiler.Options options(RuleCompiler.Ownership ownership) {
    String p = pin == null ? null : RuleProvenance.normalizePin(pin);
    Path dir = cacheDir(cache, System.getenv(), System.getProperty("user.home"));
    return new RuleCompiler.Options(
        allowUnsafe || unsafeFromEnv(System.getenv()),
        p,
        strictPermissions ? RuleCompiler.Ownership.ENFORCE : ownership,
        // a command exits when done: its models are built here, not in a child (a JVM start per
        // set); -Devictd.rules.models=off: none (the cache keeps what the checks found), for runs
        // whose rules change every time
        dir == null
            ? null
            : RuleSetCache.at(dir)
                .withModelBuilds(
                    "off".equals(System.getProperty("evictd.rules.models"))
                        ? RuleSetCache.ModelBuilds.OFF
                        : RuleSetCache.ModelBuilds.IN_PROCESS));
  }

  /**
   * The rule-set cache directory: the flag, else {@value #CACHE_ENV}, else the user's cache
   * directory; null for {@code off} (or when there is no home directory, or it does not exist).
   */
  static Path cacheDir(String flag, Map<String, String> env, String home) {
    String v = flag != null ? flag : env.get(CACHE_ENV);
    if (v != null && !v.isBlank()) {
      return v.trim().equalsIgnoreCase("off") ? null : Path.of(v.trim());
    }
    String xdg = env.get("XDG_CACHE_HOME");
    if (xdg != null && !xdg.isBlank() && Path.of(xdg).isAbsolute()) {
      return Path.of(xdg, "evictd", "rules");
    }
    // a home that does not exist (nobody's /nonexistent) means none: not one to create as root
    return home == null || home.isBlank() || !Files.isDirectory(Path.of(home))
        ? null
        : Path.of(home, ".cache", "evictd", "rules");
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
    printWarnings(rs.warnings(), err);
  }

  /** Prints what checking a rule set reported without refusing it. */
  static void printWarnings(java.util.List<String> warnings, PrintWriter err) {
    for (String w : warnings) {
      err.println("evictd: warning: " + w);
    }
    err.flush();
  }
}
