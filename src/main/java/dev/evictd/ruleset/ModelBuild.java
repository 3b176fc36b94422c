package dev.evictd.ruleset;

import dev.evictd.api.RulesException;
import dev.evictd.engine.RuleSource;
import dev.evictd.ruleset.lint.ModelCodeCheck;
import java.io.IOException;
import java.io.Reader;
import java.io.Writer;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.TreeMap;

/**
 * Builds the executable model of a rule set, strictly checked: first every check the compiled-DRL
 * path makes (the policy lint, the DRL compile, the compiled-code check; any finding refuses the
 * set, with the same message), then the model is generated from the same sources and its classes
 * read with ASM ({@link ModelCodeCheck}). A set whose model would run what compiled DRL does not (a
 * {@code matches} on java.util.regex), that declares types, or whose model cannot be generated
 * stays on the compiled-DRL path: its entry says why.
 *
 * <p>{@link #main} is the entry point of the short-lived child process the agent and the commands
 * start for this ({@link ModelCache}), so that the DRL parser, ECJ, javaparser and MVEL are loaded
 * there and never in the long-running agent. Not a command: it reads a request a parent wrote into
 * a private directory and writes the result beside it.
 */
public final class ModelBuild {
  /** The request the parent writes: the set's name and its sources. */
  static final String REQUEST = "request.properties";

  /** The result on success: a {@link ModelEntry}. */
  static final String RESULT = "model.entry";

  /** The result when the checks refuse the set: the refusal's message. */
  static final String REFUSED = "refused.txt";

  /** Where the kernel takes a process's adjustment of its out-of-memory score. */
  static final Path OOM_SCORE_ADJ = Path.of("/proc/self/oom_score_adj");

  private ModelBuild() {}

  /**
   * Makes this process the first the kernel kills when its memory cgroup runs out: the child shares
   * the agent's container and its limit, and a compile is what should be lost there, not the agent.
   * Any process may raise its own score; where it cannot (no procfs), the child carries on.
   *
   * @return whether the score was written
   */
  static boolean volunteerForOomKill(Path scoreFile) {
    try {
      Files.writeString(scoreFile, "1000", StandardCharsets.US_ASCII);
      return true;
    } catch (IOException | RuntimeException e) {
      return false;
    }
  }

  /**
   * The child's entry point.
   *
   * @param args the private directory with the request
   */
  public static void main(String[] args) throws IOException {
    if (args.length != 1) {
      throw new IllegalArgumentException("usage: ModelBuild DIR");
    }
    volunteerForOomKill(OOM_SCORE_ADJ);
    Path dir = Path.of(args[0]);
    Properties req = new Properties();
    try (Reader r = Files.newBufferedReader(dir.resolve(REQUEST), StandardCharsets.UTF_8)) {
      req.load(r);
    }
    String source = req.getProperty("source");
    int n = Integer.parseInt(req.getProperty("files"));
    List<RuleSource> sources = new ArrayList<>();
    for (int i = 0; i < n; i++) {
      sources.add(
          new RuleSource(
              req.getProperty(i + ".name"),
              req.getProperty(i + ".path"),
              req.getProperty(i + ".text")));
    }
    try {
      ModelEntry e = build(source, sources);
      Files.write(dir.resolve(RESULT), e.encode());
    } catch (RulesException e) {
      Files.writeString(dir.resolve(REFUSED), e.getMessage(), StandardCharsets.UTF_8);
    }
    // an entry point: ends here even if the engine left a thread behind
    System.exit(0);
  }

  /** Writes the request for {@link #main} into {@code dir}. */
  static void request(Path dir, String source, List<RuleSource> sources) throws IOException {
    Properties req = new Properties();
    req.setProperty("source", source);
    req.setProperty("files", Integer.toString(sources.size()));
    for (int i = 0; i < sources.size(); i++) {
      RuleSource s = sources.get(i);
      req.setProperty(i + ".name", s.name());
      req.setProperty(i + ".path", s.path());
      req.setProperty(i + ".text", s.text());
    }
    try (Writer w = Files.newBufferedWriter(dir.resolve(REQUEST), StandardCharsets.UTF_8)) {
      req.store(w, null);
    }
  }

  /**
   * Checks and builds a set's model.
   *
   * @throws RulesException when the checks refuse the set (the compiled-DRL path's message)
   */
  static ModelEntry build(String source, List<RuleSource> sources) {
    String sha256 = RuleCompiler.sha256(sources);
    RuleSetCache.Entry checked =
        RuleCompiler.compileFresh(source, sources, RuleCompiler.Options.STRICT).entry();
    byte[] lint = RuleSetCache.encode(checked);
    Map<String, byte[]> classes = new TreeMap<>();
    List<String> models = List.of();
    String drlOnly = null;
    try {
      models = PrebuiltModelWriter.generate(sources, classes);
      List<String> refused =
          ModelCodeCheck.check(
              classes, PrebuiltModelWriter.MODEL_PACKAGE, checked.lint().declaredTypes());
      if (!refused.isEmpty()) {
        drlOnly =
            "its model names what compiled DRL does not: "
                + refused.get(0)
                + (refused.size() > 1 ? " (and " + (refused.size() - 1) + " more)" : "");
      }
    } catch (IOException | RuntimeException e) {
      drlOnly = "no executable model: " + firstLine(e.getMessage());
    }
    List<String> facts = List.of();
    if (drlOnly == null) {
      try {
        facts = PrebuiltModelWriter.factClasses(classes.keySet());
      } catch (IOException e) {
        drlOnly = "no executable model: " + firstLine(e.getMessage());
      }
    }
    if (drlOnly != null) {
      return new ModelEntry(
          sha256,
          RuleSetCache.evictdVersion(),
          RuleSetCache.droolsVersion(),
          drlOnly,
          lint,
          List.of(),
          List.of(),
          "-",
          Map.of());
    }
    return new ModelEntry(
        sha256,
        RuleSetCache.evictdVersion(),
        RuleSetCache.droolsVersion(),
        null,
        lint,
        models,
        facts,
        PrebuiltModel.factClassesSha256(facts),
        classes);
  }

  private static String firstLine(String s) {
    if (s == null) {
      return "(no message)";
    }
    String t = s.strip();
    int nl = t.indexOf('\n');
    return nl < 0 ? t : t.substring(0, nl) + " ...";
  }
}
