package dev.evictd.ruleset;

import dev.evictd.api.RulesException;
import dev.evictd.engine.RuleSet;
import dev.evictd.engine.RuleSource;
import dev.evictd.ruleset.lint.CompiledCodeCheck;
import dev.evictd.ruleset.lint.PolicyFinding;
import dev.evictd.ruleset.lint.PolicyLint;
import dev.evictd.ruleset.lint.StoredLint;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.ArrayList;
import java.util.HexFormat;
import java.util.List;
import java.util.concurrent.atomic.AtomicLong;
import org.kie.api.KieBase;
import org.kie.api.KieServices;
import org.kie.api.builder.KieBuilder;
import org.kie.api.builder.KieFileSystem;
import org.kie.api.builder.Message;
import org.kie.api.builder.ReleaseId;
import org.kie.api.runtime.KieContainer;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Compiles DRL rule sets at runtime: a directory given by the operator, or the default rules
 * packaged with evictd. Sources that are exactly the packaged default rules are loaded from their
 * pre-built executable model instead ({@link PrebuiltModel}).
 */
public final class RuleCompiler {
  /** Where the packaged copy of {@code rules/} lives on the classpath. */
  public static final String DEFAULT_RULES_RESOURCE = "evictd-rules";

  private static final String RULES_PACKAGE_DIR = "dev/evictd/rules/";
  private static final String KIE_PREFIX = "src/main/resources/" + RULES_PACKAGE_DIR;
  private static final AtomicLong COUNTER = new AtomicLong();

  private static final Logger LOG = LoggerFactory.getLogger(RuleCompiler.class);

  private RuleCompiler() {}

  /** What to check of the rule files' owners and modes (see {@link RuleProvenance}). */
  public enum Ownership {
    /** Not checked. */
    IGNORE,
    /** Problems are logged and reported in {@link RuleSet#warnings()}. */
    WARN,
    /** Problems refuse the rule set. */
    ENFORCE
  }

  /**
   * How a rule set is loaded.
   *
   * @param allowUnsafe skip the policy lint's refusals (they are logged and kept as warnings): for
   *     trusted experiments only
   * @param pinnedSha256 the SHA-256 the rule set must have, or null
   * @param ownership what to check of the rule files' owners and modes
   * @param cache where sets already checked are remembered, or null for none (the packaged default
   *     rules' entry is used either way)
   */
  public record Options(
      boolean allowUnsafe, String pinnedSha256, Ownership ownership, RuleSetCache cache) {
    /** The default: lint enforced, no pin, owners and modes not checked, no cache. */
    public static final Options STRICT = new Options(false, null, Ownership.IGNORE);

    /** Options without a cache. */
    public Options(boolean allowUnsafe, String pinnedSha256, Ownership ownership) {
      this(allowUnsafe, pinnedSha256, ownership, null);
    }

    /** These options with another pin. */
    public Options withPin(String sha256) {
      return new Options(allowUnsafe, sha256, ownership, cache);
    }

    /** These options with another ownership check. */
    public Options withOwnership(Ownership o) {
      return new Options(allowUnsafe, pinnedSha256, o, cache);
    }

    /** These options with another cache (null for none). */
    public Options withCache(RuleSetCache c) {
      return new Options(allowUnsafe, pinnedSha256, ownership, c);
    }
  }

  /**
   * What checking a rule set found, without necessarily compiling it ({@code rules check}).
   *
   * @param source the directory, file or "default"
   * @param files the rule files, in load order
   * @param sha256 the rule set's SHA-256
   * @param rules how many rules it compiles to
   * @param warnings what was reported without refusing it
   * @param cached whether a verified cache entry answered (nothing was compiled)
   */
  public record Checked(
      String source,
      List<String> files,
      String sha256,
      long rules,
      List<String> warnings,
      boolean cached) {
    public Checked {
      files = List.copyOf(files);
      warnings = List.copyOf(warnings);
    }
  }

  /**
   * Checks a rules directory as {@link #compile(Path, Options)} does; an unchanged set with a
   * verified cache entry is answered from it without compiling.
   */
  public static Checked check(Path dir, Options options) {
    List<String> warnings = new ArrayList<>();
    List<RuleSource> sources = new RuleSetReader(options.ownership(), warnings).read(dir);
    return check(dir.toString(), sources, options, warnings);
  }

  /** Checks one rule file on its own, as {@link #compileFile} does. */
  public static Checked checkFile(Path file, Options options) {
    List<String> warnings = new ArrayList<>();
    return check(file.toString(), readFile(file, options, warnings), options, warnings);
  }

  /** One rule file as a set's only source, its ownership checked as a directory's would be. */
  private static List<RuleSource> readFile(Path file, Options options, List<String> warnings) {
    RuleSetReader reader = new RuleSetReader(options.ownership(), warnings);
    if (!Files.isRegularFile(file)) {
      throw new RulesException(file + ": not a rule file");
    }
    reader.checkOwnership(file);
    return List.of(
        new RuleSource(
            file.getFileName().toString(), file.toString(), RuleSetReader.readText(file)));
  }

  /** Checks the packaged default rules, as {@link #compileDefault(Options)} does. */
  public static Checked checkDefault(Options options) {
    return check("default", readDefault(), options, new ArrayList<>());
  }

  private static Checked check(
      String source, List<RuleSource> sources, Options options, List<String> warnings) {
    String sha256 = prepare(source, sources, options, warnings);
    RuleSetCache.Entry cached = lookup(source, sha256, options);
    if (cached == null) {
      RuleSet rs = compile(source, sources, options, warnings);
      return new Checked(source, rs.files(), sha256, ruleCount(rs), rs.warnings(), false);
    }
    PolicyLint.Report report = cached.lint().toReport();
    refuseOrWarn(
        report.findings().stream().filter(f -> !f.deferToCompiler()).toList(), options, warnings);
    refuseOrWarn(
        report.findings().stream().filter(PolicyFinding::deferToCompiler).toList(),
        options,
        warnings);
    refuseOrWarn(unparsed(report), options, warnings);
    refuseOrWarn(cached.compiledFindings(), options, warnings);
    return new Checked(source, cached.files(), sha256, cached.rules(), warnings, true);
  }

  /** The verified entry for a set: the configured cache's, else the packaged one; or null. */
  private static RuleSetCache.Entry lookup(String source, String sha256, Options options) {
    RuleSetCache.Entry e = options.cache() == null ? null : options.cache().lookup(source, sha256);
    return e != null ? e : RuleSetCache.packaged(sha256);
  }

  /** How many rules a compiled set has. */
  static long ruleCount(RuleSet rs) {
    return rs.kieBase().getKiePackages().stream().mapToLong(p -> p.getRules().size()).sum();
  }

  /** Compiles the rule files of {@code dir} ({@code *.drl}, in name order). */
  public static RuleSet compile(Path dir) {
    return compile(dir, Options.STRICT);
  }

  /** Compiles the rule files of {@code dir} with the given options. */
  public static RuleSet compile(Path dir, Options options) {
    List<String> warnings = new ArrayList<>();
    RuleSetReader reader = new RuleSetReader(options.ownership(), warnings);
    List<RuleSource> sources = reader.read(dir);
    return compile(dir.toString(), sources, options, warnings);
  }

  /** Compiles one rule file on its own (no manifest, no defaults). */
  public static RuleSet compileFile(Path file, Options options) {
    List<String> warnings = new ArrayList<>();
    return compile(file.toString(), readFile(file, options, warnings), options, warnings);
  }

  /** Compiles the default rules packaged with evictd. */
  public static RuleSet compileDefault() {
    return compileDefault(Options.STRICT);
  }

  /**
   * Compiles the default rules packaged with evictd with the given options (the pin applies;
   * ownership does not).
   */
  public static RuleSet compileDefault(Options options) {
    return compile("default", readDefault(), options, new ArrayList<>());
  }

  /** The optional manifest of a rules directory that builds on another rule set. */
  public static final String MANIFEST = "rules.yaml";

  /**
   * Reads the rule files of a directory. A directory with a {@code rules.yaml} manifest builds on
   * another rule set: {@code extends: default} (the packaged rules) or a path relative to the
   * directory; its own files replace the base's files of the same name, and {@code exclude:
   * [name.drl]} drops base files.
   */
  public static List<RuleSource> read(Path dir) {
    return new RuleSetReader(Ownership.IGNORE, new ArrayList<>()).read(dir);
  }

  /** Reads the default rules from the classpath. */
  public static List<RuleSource> readDefault() {
    return RuleSetReader.readDefault();
  }

  /**
   * Compiles rule sources; every compile error is reported as {@code file:line:column: message}.
   */
  public static RuleSet compile(String source, List<RuleSource> sources) {
    return compile(source, sources, Options.STRICT, new ArrayList<>());
  }

  /**
   * Compiles rule sources: checks the pin, runs the policy lint, compiles, then checks the compiled
   * code. With {@link Options#allowUnsafe()} the lint's refusals are logged and returned as
   * warnings instead.
   */
  public static RuleSet compile(String source, List<RuleSource> sources, Options options) {
    return compile(source, sources, options, new ArrayList<>());
  }

  /** The pin, the unsafe warning and the text check; returns the set's SHA-256. */
  private static String prepare(
      String source, List<RuleSource> sources, Options options, List<String> warnings) {
    String sha256 = sha256(sources);
    if (options.pinnedSha256() != null) {
      RuleProvenance.requirePinned(source, sha256, options.pinnedSha256());
    }
    if (options.allowUnsafe()) {
      String w =
          source
              + ": policy lint disabled (--allow-unsafe-rules or EVICTD_ALLOW_UNSAFE_RULES): these rules may run any"
              + " Java code as evictd's user";
      LOG.warn("{}", w);
      warnings.add(w);
    }
    long bytes = 0;
    for (RuleSource s : sources) {
      bytes += s.text().getBytes(StandardCharsets.UTF_8).length;
    }
    if (bytes > RuleSetReader.MAX_RULE_SET_BYTES) {
      // sources that were not read by RuleSetReader (the state directory's last trusted set)
      throw new RulesException(
          source + ": too large: " + RuleSetReader.LIMIT + ", these hold " + bytes + " bytes");
    }
    for (RuleSource s : sources) {
      int nul = s.text().indexOf('\0');
      if (nul >= 0) {
        long line = 1 + s.text().substring(0, nul).chars().filter(c -> c == '\n').count();
        throw new RulesException(s.path() + ":" + line + ": not a text file (NUL byte)");
      }
    }
    return sha256;
  }

  /** A set compiled with every check, and the cache entry that records what they found. */
  record Built(RuleSet rules, RuleSetCache.Entry entry) {}

  /**
   * Compiles sources from their DRL with every check, as for an operator's rules, even when they
   * are the packaged default rules with a pre-built model ({@link PrebuiltModel}), and stores the
   * cache entry whatever entry there already is (the build's packaged entry: {@link
   * PackagedRuleSet}; an executable model's: {@link ModelBuild}).
   */
  static Built compileFresh(String source, List<RuleSource> sources, Options options) {
    return pipeline(source, sources, options, new ArrayList<>(), true);
  }

  private static RuleSet compile(
      String source, List<RuleSource> sources, Options options, List<String> warnings) {
    return pipeline(source, sources, options, warnings, false).rules();
  }

  /**
   * The rule-set pipeline: read, parse, lint, compile (or load the executable model), the
   * compiled-code check. {@code fresh}: from the DRL, without a pre-built or cached model or a
   * cached lint result. A stack overflow anywhere refuses the set like any other error (a thread
   * that runs out of stack unwinds cleanly).
   */
  private static Built pipeline(
      String source,
      List<RuleSource> sources,
      Options options,
      List<String> warnings,
      boolean fresh) {
    try {
      return checkedCompile(source, sources, options, warnings, fresh);
    } catch (StackOverflowError e) {
      throw new RulesException(
          source + ": rules cannot be checked: nested too deeply (the stack ran out)");
    }
  }

  private static Built checkedCompile(
      String source,
      List<RuleSource> sources,
      Options options,
      List<String> warnings,
      boolean fresh) {
    // read: the pin, the size, the encoding (the reader checked limits and ownership)
    String sha256 = prepare(source, sources, options, warnings);
    boolean models = !fresh && !options.allowUnsafe() && options.cache() != null;
    // The packaged default rules, byte for byte: the build checked them (lint, compiled code, the
    // model's bytecode) and refused any finding, so there is nothing to refuse or warn about here
    // but what prepare() reported. Any other set: its verified executable model from the cache,
    // which recorded no finding either.
    KieBase model = fresh ? null : PrebuiltModel.load(sha256);
    if (model == null && models) {
      model = ModelCache.cached(source, sha256, options.cache());
    }
    if (model != null) {
      return new Built(loaded(model, source, sources, sha256, warnings), null);
    }
    // parse: the parser's errors end the pipeline here, each as file:line:col
    PolicyLint.Parse parse = PolicyLint.parse(sources);
    if (!parse.errors().isEmpty()) {
      // what the reading found (code hidden from review, nesting) comes first, unless allowed
      refuseOrWarn(options.allowUnsafe() ? List.of() : parse.findings(), options, warnings);
      throw new RulesException(String.join("\n", parse.errors()));
    }
    if (models) {
      // the rest of the pipeline where the model is built (a child process for the agent, so
      // that neither the lint nor the compiler loads into it): its refusal is this pipeline's own
      // message; null when there is no model to have (then the rest runs here)
      model = ModelCache.build(source, sources, sha256, options.cache(), parse);
      if (model != null) {
        return new Built(loaded(model, source, sources, sha256, warnings), null);
      }
    }
    // lint: a verified entry stands for the lint of these exact sources; the set is still
    // compiled and its compiled code checked below, so a cached set is exactly as confined as a
    // fresh one.
    RuleSetCache.Entry cached = fresh ? null : lookup(source, sha256, options);
    PolicyLint.Report report = cached != null ? cached.lint().toReport() : PolicyLint.check(parse);
    // Unknown names and unparsable Java are most often typos: the compiler's error says more, so
    // they wait for it; if the rules compile all the same, they are refused after it.
    refuseOrWarn(
        report.findings().stream().filter(f -> !f.deferToCompiler()).toList(), options, warnings);
    Built built = compileChecked(source, sources, sha256, report, options, warnings);
    if (cached == null && options.cache() != null) {
      options.cache().store(built.entry());
    }
    return built;
  }

  /** Compile, then the compiled-code check; the entry records what the checks found. */
  private static Built compileChecked(
      String source,
      List<RuleSource> sources,
      String sha256,
      PolicyLint.Report report,
      Options options,
      List<String> warnings) {
    List<PolicyFinding> deferred =
        report.findings().stream().filter(PolicyFinding::deferToCompiler).toList();
    RuleSet rs;
    try {
      rs = build(source, sources, sha256, warnings);
    } catch (CompilerFailed e) {
      // the compiler gave up with no file or line (its stack ran out): what the lint could not
      // parse says where
      refuseOrWarn(deferred, options, warnings);
      throw e;
    }
    refuseOrWarn(deferred, options, warnings);
    // the compiler uses the same parser, so this does not happen; if it did, nothing was checked
    refuseOrWarn(unparsed(report), options, warnings);
    List<PolicyFinding> compiled = CompiledCodeCheck.check(rs.kieBase(), report, source);
    refuseOrWarn(compiled, options, warnings);
    RuleSetCache.Entry entry =
        new RuleSetCache.Entry(
            RuleSetCache.FORMAT,
            RuleSetCache.evictdVersion(),
            RuleSetCache.droolsVersion(),
            sha256,
            rs.files(),
            ruleCount(rs),
            StoredLint.of(report),
            compiled);
    return new Built(
        new RuleSet(rs.kieBase(), rs.source(), rs.files(), rs.sha256(), warnings), entry);
  }

  private static RuleSet loaded(
      KieBase model, String source, List<RuleSource> sources, String sha256, List<String> w) {
    LOG.debug("{}: rules {} loaded from their executable model", source, sha256);
    return new RuleSet(model, source, sources.stream().map(RuleSource::name).toList(), sha256, w);
  }

  private static List<PolicyFinding> unparsed(PolicyLint.Report report) {
    return report.unparsed().stream()
        .map(
            f ->
                new PolicyFinding(
                    f, 0, "", "the whole file", "cannot be analysed: the DRL parser failed"))
        .toList();
  }

  private static void refuseOrWarn(
      List<PolicyFinding> findings, Options options, List<String> warnings) {
    if (findings.isEmpty()) {
      return;
    }
    if (!options.allowUnsafe()) {
      throw new RulesException(
          String.join("\n", findings.stream().map(PolicyFinding::toString).toList()));
    }
    for (PolicyFinding f : findings) {
      LOG.warn("unsafe rules allowed: {}", f);
      warnings.add(f.toString());
    }
  }

  /** The innermost cause's message, after the compiler's own wrapping ("failed or interrupted"). */
  private static String rootCause(Throwable e) {
    Throwable c = e;
    for (int i = 0; i < 10 && c.getCause() != null && c.getCause() != c; i++) {
      c = c.getCause();
    }
    return c == e || c.getMessage() == null ? "" : " (" + firstLine(c.getMessage()) + ")";
  }

  private static RuleSet build(
      String source, List<RuleSource> sources, String sha256, List<String> warnings) {
    KieServices ks = KieServices.Factory.get();
    KieFileSystem kfs = ks.newKieFileSystem();
    ReleaseId rid =
        ks.newReleaseId("dev.evictd.rules", "rules" + COUNTER.incrementAndGet(), "1.0.0");
    kfs.generateAndWritePomXML(rid);
    for (RuleSource s : sources) {
      kfs.write(KIE_PREFIX + s.name(), s.text());
    }
    KieBuilder kb;
    try {
      kb = ks.newKieBuilder(kfs).buildAll();
    } catch (StackOverflowError e) {
      throw new CompilerFailed(
          source + ": rules cannot be compiled: nested too deeply for the compiler");
    } catch (RuntimeException e) {
      throw new CompilerFailed(
          source
              + ": rules cannot be compiled: "
              + (e.getMessage() == null ? "the compiler failed" : firstLine(e.getMessage()))
              + rootCause(e));
    }
    // the compiler builds rules on several threads and reports in the order they finished: sorted
    // by file and line, the same set gives the same errors on every run, cached or not
    List<Message> messages =
        kb.getResults().getMessages(Message.Level.ERROR).stream()
            .sorted(
                java.util.Comparator.comparing((Message m) -> String.valueOf(m.getPath()))
                    .thenComparingInt(Message::getLine)
                    .thenComparing(m -> String.valueOf(m.getText())))
            .toList();
    List<String> errors = new ArrayList<>();
    for (Message m : messages) {
      if (errors.size() == MAX_ERRORS) {
        errors.add("(and " + (messages.size() - MAX_ERRORS) + " more errors)");
        break;
      }
      String e = describe(m, sources);
      // the compiler repeats itself (one line of 20,000 statements: 20,000 times the same error)
      errors.add(e.length() > MAX_ERROR_CHARS ? e.substring(0, MAX_ERROR_CHARS) + " ..." : e);
    }
    if (!errors.isEmpty()) {
      ks.getRepository().removeKieModule(rid);
      throw new RulesException(String.join("\n", errors));
    }
    KieBase kbase;
    try {
      KieContainer kc = ks.newKieContainer(rid);
      kbase = kc.getKieBase();
    } catch (RuntimeException e) {
      throw new RulesException(source + ": rules cannot be loaded: " + e.getMessage());
    } finally {
      ks.getRepository().removeKieModule(rid);
    }
    List<String> names = sources.stream().map(RuleSource::name).toList();
    return new RuleSet(kbase, source, names, sha256, warnings);
  }

  /** How many of the compiler's errors a refusal lists, and how long each may be. */
  private static final int MAX_ERRORS = 20;

  private static final int MAX_ERROR_CHARS = 500;

  /** The compiler failed as a whole, naming no file or line. */
  private static final class CompilerFailed extends RulesException {
    CompilerFailed(String message) {
      super(message);
    }
  }

  private static String firstLine(String s) {
    return s.lines().findFirst().orElse("").trim();
  }

  private static final java.util.regex.Pattern LINE_COLUMN =
      java.util.regex.Pattern.compile("\\s*\\[Line: (\\d+), Column: (\\d+)\\]");

  private static String describe(Message m, List<RuleSource> sources) {
    String path = m.getPath() == null ? "" : m.getPath();
    String shown = path;
    int at = path.indexOf(RULES_PACKAGE_DIR);
    RuleSource file = null;
    if (at >= 0) {
      String name = path.substring(at + RULES_PACKAGE_DIR.length());
      file = sources.stream().filter(s -> s.name().equals(name)).findFirst().orElse(null);
      shown = file != null ? file.path() : name;
    }
    String text = m.getText() == null ? "error" : m.getText().trim().replaceAll("\\s*\\n\\s*", " ");
    int line = m.getLine() > 0 || file == null ? m.getLine() : lineOfNear(file.text(), text);
    int column = m.getColumn();
    java.util.regex.Matcher lc = LINE_COLUMN.matcher(text);
    if (lc.find()) {
      if (line <= 0) {
        line = Integer.parseInt(lc.group(1));
      }
      if (column <= 0) {
        column = Integer.parseInt(lc.group(2));
      }
      text = lc.replaceAll("").trim();
    }
    StringBuilder sb = new StringBuilder(shown.isEmpty() ? "rules" : shown);
    if (line > 0) {
      sb.append(':').append(line);
      if (column > 0) {
        sb.append(':').append(column);
      }
    }
    return sb.append(": ").append(text).toString();
  }

  private static final java.util.regex.Pattern NEAR =
      java.util.regex.Pattern.compile("\\[Near : \\{\\.\\.\\. (.+?) \\.\\.\\.\\.\\}");

  /**
   * The line of an MVEL analysis error, which Drools reports without one: where the code it quotes
   * ({@code [Near : {... code ....}]}) is in the file, when it is there once; else 0.
   */
  private static int lineOfNear(String fileText, String message) {
    java.util.regex.Matcher near = NEAR.matcher(message);
    if (!near.find()) {
      return 0;
    }
    String code =
        String.join(
            "\\s*",
            java.util.Arrays.stream(near.group(1).trim().split("\\s+"))
                .map(java.util.regex.Pattern::quote)
                .toList());
    java.util.regex.Matcher where = java.util.regex.Pattern.compile(code).matcher(fileText);
    if (!where.find()) {
      return 0;
    }
    int start = where.start();
    return where.find()
        ? 0
        : (int) fileText.substring(0, start).chars().filter(c -> c == '\n').count() + 1;
  }

  /** SHA-256 over the rule files' names and contents, in load order. */
  public static String sha256(List<RuleSource> sources) {
    try {
      MessageDigest md = MessageDigest.getInstance("SHA-256");
      for (RuleSource s : sources) {
        md.update(s.name().getBytes(StandardCharsets.UTF_8));
        md.update((byte) 0);
        md.update(s.text().getBytes(StandardCharsets.UTF_8));
        md.update((byte) 0);
      }
      return HexFormat.of().formatHex(md.digest());
    } catch (NoSuchAlgorithmException e) {
      throw new IllegalStateException(e);
    }
  }
}
