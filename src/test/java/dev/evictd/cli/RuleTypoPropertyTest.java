package dev.evictd.cli;

import static org.assertj.core.api.Assertions.assertThat;

import dev.evictd.agent.RulesReloader;
import dev.evictd.engine.RuleSet;
import dev.evictd.ruleset.RuleCompiler;
import dev.evictd.ruleset.RuleSetCache;
import dev.evictd.testing.prop.Choices;
import dev.evictd.testing.prop.ChoicesArbitrary;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicReference;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;
import net.jqwik.api.Arbitrary;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.Provide;
import net.jqwik.api.lifecycle.AfterContainer;
import net.jqwik.api.lifecycle.BeforeContainer;

/**
 * An operator's typo is always a line number: every bundled rule file and every example policy,
 * mutated once (a token or a character deleted, inserted or replaced; a line dropped; two lines
 * swapped), through {@code rules check}, {@code test --rules}, {@code plan --rules} and the agent's
 * hot reload, with the rule-set cache on (a directory this test owns) and off. Each try either
 * loads a rule set or is refused with {@code file:line[:col]} findings and exit 2; never an
 * internal error, a stack trace, exit 3 or a hang.
 */
class RuleTypoPropertyTest {
  private static final Pattern FINDING = Pattern.compile("(?m)[^\\s:]+\\.drl:(\\d+)(:\\d+)?: ");
  private static final Pattern JAVA_THROWABLE =
      Pattern.compile("\\b[a-z]+\\.[\\w.$]+(Exception|Error)\\b");
  private static final String[] CHARS = {
    "(", ")", "{", "}", "[", "]", "\"", "'", ";", ",", ".", ":", "$", "@", "=", "!", "<", ">", "&",
    "|", "#", "/", "*", "x", "e", "0", " ", "\n", "\\"
  };
  private static final String[] ENTRIES = {"check", "test", "plan", "reload"};

  /** A rule set: its directory, its own rule files, a fixture to run it on. */
  record Policy(Path dir, List<String> files, String fixture) {}

  /** One try: the policy, which file, how it is mutated, the mutated text, the entry point. */
  record Typo(
      Policy policy, String file, String mutation, String text, String entry, boolean cache) {
    @Override
    public String toString() {
      return "%s/%s: %s via %s, cache %s"
          .formatted(policy.dir(), file, mutation, entry, cache ? "on" : "off");
    }
  }

  private static final List<Policy> POLICIES = policies();
  private static Path work;
  private static Path cacheDir;
  private static Path planInputs;
  private static ExecutorService runner;

  @BeforeContainer
  static void setUp() throws IOException {
    // a mutated set that compiles is built into no executable model (seconds each): the cache
    // still memoises the pipeline's result, which is what a typo meets
    System.setProperty("evictd.rules.models", "off");
    work = Files.createTempDirectory("evictd-typos");
    cacheDir = work.resolve("cache");
    planInputs = work.resolve("plan");
    Files.createDirectories(planInputs);
    Files.writeString(planInputs.resolve("kc.yaml"), "evictionHard: {memory.available: 1Gi}\n");
    Files.writeString(
        planInputs.resolve("pods.json"),
        "{\"items\": [{\"metadata\": {\"name\": \"web\", \"namespace\": \"prod\", \"uid\": \"u-web\"}}]}");
    Files.writeString(
        planInputs.resolve("summary.json"),
        "{\"node\": {\"nodeName\": \"n\", \"memory\": {\"availableBytes\": 536870912, \"workingSetBytes\": 7516192768}},"
            + " \"pods\": [{\"podRef\": {\"name\": \"web\", \"namespace\": \"prod\", \"uid\": \"u-web\"},"
            + " \"memory\": {\"workingSetBytes\": 104857600}}]}");
    runner =
        Executors.newCachedThreadPool(
            r -> {
              Thread t = new Thread(r, "typo-try");
              t.setDaemon(true);
              return t;
            });
  }

  @AfterContainer
  static void tearDown() throws IOException {
    System.clearProperty("evictd.rules.models");
    runner.shutdownNow();
    try (Stream<Path> s = Files.walk(work)) {
      for (Path p : s.sorted(Comparator.reverseOrder()).toList()) {
        Files.deleteIfExists(p);
      }
    }
  }

  @Property(tries = 500, seed = "43")
  void aTypoIsALoadedSetOrFindingsWithLines(@ForAll("typos") Typo typo) {
    ChoicesArbitrary.assertHolds(
        "a typo is a line number", typo, RuleTypoPropertyTest::failure, Typo::toString);
  }

  @Provide
  Arbitrary<Typo> typos() {
    return ChoicesArbitrary.of(RuleTypoPropertyTest::draw, 100);
  }

  /** The bundled rules and every example policy of fixtures/examples. */
  private static List<Policy> policies() {
    List<Policy> out = new ArrayList<>();
    out.add(
        new Policy(
            Path.of("rules"),
            drlFiles(Path.of("rules")),
            "fixtures/memory/allocatable-memory-pressure.yaml"));
    try (Stream<Path> s = Files.list(Path.of("fixtures/examples"))) {
      for (Path example : s.sorted().toList()) {
        Path rules = example.resolve("rules");
        if (Files.isDirectory(rules)) {
          out.add(new Policy(rules, drlFiles(rules), firstFixture(example)));
        }
      }
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
    return out;
  }

  /** One fixture of an example: a try runs one sync or a few, not the example's every fixture. */
  private static String firstFixture(Path example) throws IOException {
    try (Stream<Path> s = Files.list(example)) {
      return s.map(Path::toString)
          .filter(n -> n.endsWith(".yaml"))
          .sorted()
          .findFirst()
          .orElseThrow();
    }
  }

  private static List<String> drlFiles(Path dir) {
    try (Stream<Path> s = Files.list(dir)) {
      return s.map(p -> p.getFileName().toString())
          .filter(n -> n.endsWith(".drl"))
          .sorted()
          .toList();
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }

  private static Typo draw(Choices c) {
    Policy p = c.pick(POLICIES);
    String file = c.pick(p.files());
    String text;
    try {
      text = Files.readString(p.dir().resolve(file));
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
    String kind =
        c.pick(
            "delete token",
            "insert token",
            "replace token",
            "delete char",
            "insert char",
            "replace char",
            "drop line",
            "swap lines");
    String mutated;
    String what;
    if (kind.endsWith("token")) {
      List<String> tokens = tokens(text);
      int at = c.between(0, tokens.size() - 1);
      String with = c.chance(0.5) ? c.pick(tokens) : c.pick(CHARS);
      List<String> out = new ArrayList<>(tokens);
      switch (kind) {
        case "delete token" -> out.remove(at);
        case "insert token" -> out.add(at, with);
        default -> out.set(at, with);
      }
      mutated = String.join("", out);
      what =
          kind
              + " "
              + at
              + " ("
              + quote(tokens.get(at))
              + (kind.startsWith("delete") ? "" : " with " + quote(with))
              + ")";
    } else if (kind.endsWith("char")) {
      int at = c.between(0, text.length() - 1);
      String with = c.pick(CHARS);
      mutated =
          switch (kind) {
            case "delete char" -> text.substring(0, at) + text.substring(at + 1);
            case "insert char" -> text.substring(0, at) + with + text.substring(at);
            default -> text.substring(0, at) + with + text.substring(at + 1);
          };
      what =
          kind
              + " at "
              + at
              + " ("
              + quote(text.substring(at, at + 1))
              + (kind.startsWith("delete") ? "" : " with " + quote(with))
              + ")";
    } else {
      List<String> lines = new ArrayList<>(List.of(text.split("\n", -1)));
      int a = c.between(0, lines.size() - 1);
      if (kind.equals("drop line")) {
        what = "drop line " + (a + 1) + " (" + quote(lines.remove(a)) + ")";
      } else {
        int b = c.between(0, lines.size() - 1);
        String la = lines.get(a);
        lines.set(a, lines.get(b));
        lines.set(b, la);
        what = "swap lines " + (a + 1) + " and " + (b + 1);
      }
      mutated = String.join("\n", lines);
    }
    return new Typo(p, file, what, mutated, c.pick(ENTRIES), c.chance(0.35));
  }

  private static String quote(String s) {
    return "'" + s.replace("\n", "\\n") + "'";
  }

  /** Words, runs of blanks, and single other characters. */
  private static List<String> tokens(String text) {
    List<String> out = new ArrayList<>();
    Matcher m = Pattern.compile("[A-Za-z0-9_]+|\\s+|.", Pattern.DOTALL).matcher(text);
    while (m.find()) {
      out.add(m.group());
    }
    return out;
  }

  /** Null when the try holds; else what went wrong. */
  private static String failure(Typo typo) throws Exception {
    Path dir = Files.createTempDirectory(work, "set");
    try {
      for (String f : listing(typo.policy().dir())) {
        Files.copy(typo.policy().dir().resolve(f), dir.resolve(f));
      }
      Files.writeString(dir.resolve(typo.file()), typo.text());
      Future<String> outcome = runner.submit(() -> outcome(typo, dir));
      try {
        return outcome.get(2, TimeUnit.MINUTES);
      } catch (TimeoutException e) {
        outcome.cancel(true);
        return "hung for two minutes";
      }
    } finally {
      try (Stream<Path> s = Files.walk(dir)) {
        for (Path p : s.sorted(Comparator.reverseOrder()).toList()) {
          Files.deleteIfExists(p);
        }
      }
    }
  }

  private static List<String> listing(Path dir) throws IOException {
    try (Stream<Path> s = Files.list(dir)) {
      return s.map(p -> p.getFileName().toString()).toList();
    }
  }

  /** What an entry point answered: exit 0 (loaded), 1 (a fixture failed) or else, and why. */
  record Answer(int code, String err) {}

  /**
   * The try with the cache off; with it on as well when the typo says so, which must answer as the
   * cache off did. With the cache on, a set the cache-off run refused meets the executable model
   * build as a command does; one it loaded builds no model (seconds each, not what a typo meets).
   */
  private static String outcome(Typo typo, Path dir) {
    Answer off = answer(typo, dir, false, false);
    String failure = failure(typo, off);
    if (failure != null || !typo.cache()) {
      return failure;
    }
    Answer on = answer(typo, dir, true, off.code() == 2);
    failure = failure(typo, on);
    if (failure == null && (on.code() == 2) != (off.code() == 2)
        || on.code() == 2 && !on.err().equals(off.err())) {
      failure = "the cache on answered otherwise than off:\n" + on + "\n" + off;
    }
    return failure == null ? null : "cache on: " + failure;
  }

  private static Answer answer(Typo typo, Path dir, boolean cache, boolean models) {
    if (cache && !models) {
      System.setProperty("evictd.rules.models", "off");
    }
    try {
      String c = cache ? cacheDir.toString() : "off";
      String rules = dir.toString();
      CliTest.Run r =
          switch (typo.entry()) {
            case "check" -> CliTest.run("rules", "check", rules, "--rules-cache", c);
            case "test" ->
                CliTest.run("test", "--rules", rules, "--rules-cache", c, typo.policy().fixture());
            case "plan" ->
                CliTest.run(
                    "plan",
                    "--rules",
                    rules,
                    "--rules-cache",
                    c,
                    "--config",
                    planInputs.resolve("kc.yaml").toString(),
                    "--pods",
                    planInputs.resolve("pods.json").toString(),
                    "--summary",
                    planInputs.resolve("summary.json").toString());
            default -> null;
          };
      return r != null ? new Answer(r.code(), r.err()) : reloaded(dir, cache, models);
    } finally {
      System.clearProperty("evictd.rules.models");
    }
  }

  private static String failure(Typo typo, Answer a) {
    if (a.code() == 2) {
      return findings(a.err());
    }
    // a set that loads: the command's own answer (a fixture the changed rules fail exits 1)
    if (a.code() == 0 || (a.code() == 1 && typo.entry().equals("test"))) {
      return a.err().contains("internal error") || a.err().contains("\tat ")
          ? "stack trace: " + a.err()
          : null;
    }
    return "exit " + a.code() + ": " + a.err();
  }

  /** The agent's hot reload of the set, as the agent wires it: 0 handed over, 2 refused. */
  private static Answer reloaded(Path dir, boolean cache, boolean models) {
    RuleCompiler.Options options =
        new RuleCompiler.Options(
            false,
            null,
            RuleCompiler.Ownership.IGNORE,
            cache
                ? RuleSetCache.at(cacheDir)
                    .withModelBuilds(
                        models ? RuleSetCache.ModelBuilds.IN_PROCESS : RuleSetCache.ModelBuilds.OFF)
                : null);
    AtomicReference<String> failed = new AtomicReference<>();
    AtomicReference<RuleSet> loaded = new AtomicReference<>();
    try (RulesReloader reloader =
        new RulesReloader(
            dir,
            "none",
            d -> RuleCompiler.compile(d, options),
            loaded::set,
            failed::set,
            Duration.ofHours(1))) {
      if (reloader.reload()) {
        return loaded.get() == null ? new Answer(3, "handed over nothing") : new Answer(0, "");
      }
      return new Answer(2, failed.get() == null ? "refused without a reason" : failed.get());
    }
  }

  /** Null when the message names at least one {@code file.drl:line}; else the message. */
  private static String findings(String err) {
    if (err.contains("internal error")
        || err.contains("\tat ")
        || JAVA_THROWABLE.matcher(err).find()) {
      return "stack trace or internal error: " + err;
    }
    Matcher m = FINDING.matcher(err);
    return m.find() && Integer.parseInt(m.group(1)) > 0 ? null : "no file:line finding: " + err;
  }

  @org.junit.jupiter.api.Test
  void theGeneratorCoversEveryBundledAndExamplePolicy() {
    assertThat(POLICIES).hasSizeGreaterThan(5);
    assertThat(POLICIES.get(0).files()).contains("conditions.drl", "decide.drl");
  }
}
