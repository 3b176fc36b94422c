package dev.evictd.cli;

import dev.evictd.api.ConfigException;
import dev.evictd.api.EvictdException;
import dev.evictd.engine.RuleSet;
import dev.evictd.fixture.FixtureResult;
import dev.evictd.fixture.FixtureSuite;
import dev.evictd.ruleset.RuleCompiler;
import java.io.IOException;
import java.io.PrintWriter;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.Callable;
import java.util.concurrent.CompletableFuture;
import java.util.function.Function;
import java.util.stream.Stream;
import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Parameters;

/** {@code evictd test}: runs fixtures and reports one line per fixture. */
@Command(
    name = "test",
    mixinStandardHelpOptions = true,
    description = {
      "Run fixtures (directories recursively, *.yaml and *.yml), each on a fresh planner.",
      "Exit 0 when all pass, 1 when any fails, 2 when any cannot be loaded."
    })
final class TestCommand implements Callable<Integer> {
  @Mixin RulesOption rules = new RulesOption();

  @Parameters(paramLabel = "PATH", arity = "1..*", description = "Fixture files or directories.")
  List<Path> paths;

  @picocli.CommandLine.Option(
      names = "--filter",
      paramLabel = "REGEX",
      description =
          "Run only fixtures whose path or name matches (find, not full match); one that matches"
              + " none is an error (exit 2).")
  java.util.regex.Pattern filter;

  @picocli.CommandLine.Option(
      names = "--junit-xml",
      converter = Converters.OutputFile.class,
      paramLabel = "FILE",
      description = "Also write a JUnit XML report (one testcase per fixture) for CI.")
  Path junitXml;

  @picocli.CommandLine.Option(
      names = {"-j", "--jobs"},
      paramLabel = "N",
      description =
          "Fixtures run at once (default: the available CPUs; 1: one after another). The output"
              + " is the same either way.")
  int jobs = Runtime.getRuntime().availableProcessors();

  @CommandLine.Spec CommandLine.Model.CommandSpec spec;

  @Override
  public Integer call() {
    PrintWriter out = spec.commandLine().getOut();
    if (jobs < 1) {
      throw new CommandLine.ParameterException(
          spec.commandLine(), "--jobs must be at least 1, was " + jobs);
    }
    // a set named by --rules is every fixture's: compiled beside the listing and loading, and what
    // is wrong with it said once, before any fixture's line, not on every one
    CompletableFuture<RuleSet> given = rules.rules == null ? null : rules.resolveAhead(null);
    List<Path> files = new ArrayList<>();
    boolean loadErrors = false;
    for (Path p : paths) {
      try {
        files.addAll(fixtureFiles(p));
      } catch (EvictdException e) {
        out.println("ERROR " + about(p, e.getMessage()));
        loadErrors = true;
      }
    }
    JunitXml report = new JunitXml();
    // each outcome is printed on this thread, in file order, as soon as the fixtures before it are
    Function<Path, RuleSet> rulesFor =
        given == null ? rules::resolveQuietly : dir -> RulesOption.join(given);
    try {
      new FixtureSuite(rulesFor, filter, jobs)
          .run(
              files,
              o -> {
                if (given != null) {
                  rules.await(given); // the first outcome waits for it: any fixture run does
                }
                print(o, out, report);
              });
      if (given != null) {
        rules.await(given); // no fixture to run (or none listed): still the set's own error
      }
    } catch (RuntimeException | Error e) {
      if (given != null) {
        RulesOption.settle(given); // a command that failed leaves no thread of its own behind
      }
      out.flush();
      throw e;
    }
    if (filter != null && !files.isEmpty() && skipped == files.size()) {
      // nothing was tested: not a pass, and no report that CI would read as one
      out.flush();
      throw new ConfigException(
          "--filter '"
              + filter.pattern()
              + (files.size() == 1
                  ? "' matches neither the path nor the name of the one fixture"
                  : "' matches none of the " + files.size() + " fixtures (by path or name)"));
    }
    loadErrors |= this.loadErrors;
    out.println(passed + " passed, " + failed + " failed");
    out.flush();
    if (junitXml != null) {
      report.write(junitXml);
    }
    if (loadErrors) {
      return Main.BAD_INPUT;
    }
    return failed > 0 ? Main.FAILED : Main.OK;
  }

  private int passed;
  private int failed;
  private int skipped;
  private boolean loadErrors;

  /** Prints and counts one fixture's outcome. */
  private void print(FixtureSuite.Outcome o, PrintWriter out, JunitXml report) {
    Path f = o.file();
    if (o instanceof FixtureSuite.NotLoaded n) {
      out.println("ERROR " + about(f, n.message()));
      report.error(f, f.getFileName().toString(), n.message(), 0);
      loadErrors = true;
      failed++;
      return;
    }
    if (!(o instanceof FixtureSuite.Ran ran)) {
      skipped++; // left out by --filter
      return;
    }
    if (ran.rules() != null) {
      rules.warnOnce(ran.rules()); // where a serial run would print them: before its first use
    }
    if (!ran.warnings().isEmpty()) {
      out.flush(); // the lines before on stdout come first on a terminal
      RuleLoadOptions.printWarnings(ran.warnings(), spec.commandLine().getErr());
    }
    FixtureResult r = ran.result();
    report.add(r);
    switch (r.status()) {
      case PASSED -> {
        passed++;
        out.println("PASS  " + f + " (" + r.name() + ")");
      }
      case FAILED -> {
        failed++;
        out.println("FAIL  " + f + " (" + r.name() + "): " + r.mismatch());
      }
      default -> {
        failed++;
        loadErrors = true;
        out.println("ERROR " + f + " (" + r.name() + "): " + r.mismatch());
      }
    }
  }

  /**
   * An error about a file that names it once: the message itself when it starts with the file's
   * name (the loaders' messages do: {@code f.yaml:3: ...}), else the file, then the message.
   */
  static String about(Path file, String message) {
    String f = file.toString();
    return message.startsWith(f + ":") ? message : f + ": " + message;
  }

  /**
   * The fixture files under a path: the file itself, or every *.yaml / *.yml below a directory,
   * sorted.
   */
  static List<Path> fixtureFiles(Path p) {
    if (Files.isRegularFile(p)) {
      return List.of(p);
    }
    if (!Files.isDirectory(p)) {
      throw new dev.evictd.api.FixtureException(
          p
              + (Files.exists(p, java.nio.file.LinkOption.NOFOLLOW_LINKS)
                  ? ": not a regular file or a directory"
                  : ": no such file or directory"));
    }
    List<Path> found;
    try (Stream<Path> s = Files.walk(p)) {
      found =
          s.filter(Files::isRegularFile)
              .filter(
                  f -> {
                    String n = f.getFileName().toString();
                    // rules.yaml is a rules directory's manifest, not a fixture
                    return (n.endsWith(".yaml") || n.endsWith(".yml"))
                        && !n.equals(RuleCompiler.MANIFEST);
                  })
              .sorted()
              .toList();
    } catch (IOException | java.io.UncheckedIOException e) {
      throw new dev.evictd.api.FixtureException(p + ": cannot list: " + e.getMessage());
    }
    if (found.isEmpty()) {
      // a directory named by mistake (a rules directory after --run, a typo) runs nothing: that
      // is not a pass
      throw new dev.evictd.api.FixtureException(
          p
              + ": no fixture (*.yaml, *.yml) in this directory"
              + (holdsRules(p) ? "; it holds rule files (.drl): a rules directory?" : ""));
    }
    return found;
  }

  private static boolean holdsRules(Path dir) {
    try (Stream<Path> s = Files.list(dir)) {
      return s.anyMatch(f -> f.getFileName().toString().endsWith(".drl"));
    } catch (IOException | java.io.UncheckedIOException e) {
      return false;
    }
  }
}
