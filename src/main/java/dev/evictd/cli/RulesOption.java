package dev.evictd.cli;

import dev.evictd.api.EvictdException;
import dev.evictd.api.RulesException;
import dev.evictd.engine.RuleSet;
import dev.evictd.engine.RuleSource;
import dev.evictd.ruleset.RuleCompiler;
import java.nio.file.Path;
import java.util.Collections;
import java.util.IdentityHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicReference;
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

  /** Compiled sets by directory (the empty path: the packaged defaults), each compiled once. */
  private final Map<Path, CompletableFuture<RuleSet>> byDir = new ConcurrentHashMap<>();

  private final Set<RuleSet> warned = Collections.newSetFromMap(new IdentityHashMap<>());

  /**
   * The rule set chosen by --rules, else {@code fallback} (a fixture's own rules), else the
   * packaged defaults; its warnings are printed the first time it is returned.
   */
  RuleSet resolve(Path fallback) {
    RuleSet rs = resolveQuietly(fallback);
    warnOnce(rs);
    return rs;
  }

  /**
   * Starts {@link #resolve} on a thread of its own, for a command that has other work to do
   * meanwhile (parsing its input files on a second core); {@link #await} hands back the set and
   * prints its warnings, or throws what resolving it threw.
   */
  CompletableFuture<RuleSet> resolveAhead(Path fallback) {
    CompletableFuture<RuleSet> f = new CompletableFuture<>();
    Thread t =
        new Thread(
            () -> {
              try {
                f.complete(resolveQuietly(fallback));
              } catch (RuntimeException | Error e) {
                f.completeExceptionally(e);
              }
            },
            "evictd-rules");
    t.setDaemon(true);
    t.start();
    return f;
  }

  /** Whether this is {@link #loadDefaultsAhead}'s own instance, which takes no load but its own. */
  private boolean ahead;

  /**
   * The packaged defaults being loaded by {@link #loadDefaultsAhead}, until a command takes them.
   */
  private static final AtomicReference<CompletableFuture<RuleSet>> DEFAULTS_AHEAD =
      new AtomicReference<>();

  /**
   * Starts loading the packaged defaults with every load option at its default, before picocli has
   * read the command line (a command line that names no rules and no load option): a command's
   * {@link #resolveQuietly} then takes that load instead of starting its own, once it knows that
   * its options are indeed the defaults. Picocli's reading of the command line, a sixth of {@code
   * evictd plan}'s start-up, was time the rules waited for.
   */
  static void loadDefaultsAhead() {
    RulesOption defaults = new RulesOption();
    defaults.ahead = true;
    CompletableFuture<RuleSet> f = defaults.resolveAhead(null);
    CompletableFuture<RuleSet> before = DEFAULTS_AHEAD.getAndSet(f);
    if (before != null) {
      settle(before);
    }
  }

  /** Whether what {@link #loadDefaultsAhead} started is still there for a command to take. */
  static boolean defaultsAheadPending() {
    return DEFAULTS_AHEAD.get() != null;
  }

  /** Waits for what {@link #loadDefaultsAhead} started when no command took it. */
  static void settleDefaultsAhead() {
    CompletableFuture<RuleSet> f = DEFAULTS_AHEAD.getAndSet(null);
    if (f != null) {
      settle(f);
    }
  }

  /** The set {@link #resolveAhead} resolved, its warnings printed the first time. */
  RuleSet await(CompletableFuture<RuleSet> ahead) {
    RuleSet rs = join(ahead);
    warnOnce(rs);
    return rs;
  }

  /**
   * Waits for {@link #resolveAhead}'s set when it is not wanted any more, whatever became of it.
   */
  static void settle(CompletableFuture<RuleSet> ahead) {
    ahead.exceptionally(e -> null).join();
  }

  /**
   * {@link #resolve} without printing the warnings; safe to call from several threads at once (a
   * set is compiled once, the other callers wait for it).
   */
  RuleSet resolveQuietly(Path fallback) {
    Path dir = rules != null ? rules : fallback;
    Path key = dir == null ? DEFAULTS : dir.toAbsolutePath().normalize();
    if (dir == null
        && !ahead
        && pin == null
        && !allowUnsafe
        && cache == null
        && !strictPermissions) {
      // the very load this one would start, with the same options: begun before the command line
      CompletableFuture<RuleSet> early = DEFAULTS_AHEAD.getAndSet(null);
      if (early != null) {
        byDir.putIfAbsent(DEFAULTS, early);
      }
    }
    CompletableFuture<RuleSet> mine = new CompletableFuture<>();
    CompletableFuture<RuleSet> f = byDir.putIfAbsent(key, mine);
    if (f == null) {
      f = mine;
      try {
        mine.complete(load(dir, options(RuleCompiler.Ownership.IGNORE)));
      } catch (EvictdException e) {
        RuntimeException named = rules != null ? named(e) : e;
        byDir.remove(key, mine);
        mine.completeExceptionally(named);
        throw named;
      } catch (RuntimeException | Error e) {
        // not remembered: the next caller tries again, as before there was a cache
        byDir.remove(key, mine);
        mine.completeExceptionally(e);
        throw e;
      }
    }
    return join(f);
  }

  /**
   * An error about the --rules directory itself ({@code DIR: not a directory of rules}) as one
   * about the option: {@code --rules DIR: ...}; any other (a rule file's {@code file:line}) as it
   * is.
   */
  private EvictdException named(EvictdException e) {
    String m = e.getMessage();
    return m != null && m.startsWith(rules + ":") ? new RulesException("--rules " + m, e) : e;
  }

  /** A future's value; what it failed with rethrown as it was thrown. */
  static RuleSet join(CompletableFuture<RuleSet> f) {
    try {
      return f.join();
    } catch (CompletionException e) {
      if (e.getCause() instanceof RuntimeException r) {
        throw r;
      }
      if (e.getCause() instanceof Error err) {
        throw err;
      }
      throw e;
    }
  }

  /** Compiled sets by their SHA-256 (the first directory or the defaults that had it). */
  private final Map<String, CompletableFuture<RuleSet>> bySha = new ConcurrentHashMap<>();

  /** Compiles a directory's set (null: the defaults). */
  private static RuleSet compile(Path dir, RuleCompiler.Options options) {
    return dir == null ? RuleCompiler.compileDefault(options) : RuleCompiler.compile(dir, options);
  }

  /**
   * Loads a directory's set (null: the defaults). A set with the same sources as one compiled
   * already (the same SHA-256: file names and contents), such as a fixture's {@code rules:
   * ../rules} naming the packaged defaults, shares that set's knowledge base instead of compiling
   * it again; it is still checked as its own (pin, lint, permissions, from the rule-set cache's
   * verified entry).
   */
  private RuleSet load(Path dir, RuleCompiler.Options options) {
    String sha;
    List<RuleSource> defaults = null;
    try {
      if (dir == null) {
        // read once: each read of the packaged rules opens evictd's jar as a zip file system
        defaults = RuleCompiler.readDefault();
      }
      sha = RuleCompiler.sha256(dir == null ? defaults : RuleCompiler.read(dir));
    } catch (RuntimeException e) {
      return compile(dir, options); // its own error, as the compiler reports it
    }
    CompletableFuture<RuleSet> mine = new CompletableFuture<>();
    CompletableFuture<RuleSet> first = bySha.putIfAbsent(sha, mine);
    if (first == null) {
      try {
        RuleSet rs =
            defaults != null
                ? RuleCompiler.compile("default", defaults, options)
                : compile(dir, options);
        mine.complete(rs);
        return rs;
      } catch (RuntimeException | Error e) {
        bySha.remove(sha, mine);
        mine.completeExceptionally(e);
        throw e;
      }
    }
    RuleSet same;
    try {
      same = first.join();
    } catch (CompletionException e) {
      return compile(dir, options);
    }
    RuleCompiler.Checked c =
        dir == null ? RuleCompiler.checkDefault(options) : RuleCompiler.check(dir, options);
    if (!c.sha256().equals(sha) || !same.sha256().equals(sha)) {
      return compile(dir, options); // changed since it was read
    }
    return new RuleSet(
        same.kieBase(),
        dir == null ? "default" : dir.toString(),
        c.files(),
        c.sha256(),
        c.warnings());
  }

  /** Prints a set's warnings, unless they were printed already. */
  void warnOnce(RuleSet rs) {
    boolean first;
    synchronized (warned) {
      first = warned.add(rs);
    }
    if (first && mixee != null) {
      printWarnings(rs, mixee.commandLine().getErr());
    }
  }

  private static final Path DEFAULTS = Path.of("");
}
