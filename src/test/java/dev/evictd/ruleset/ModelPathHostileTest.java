package dev.evictd.ruleset;

import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.Assertions.assertThrows;

import dev.evictd.api.RulesException;
import dev.evictd.engine.RuleSource;
import dev.evictd.ruleset.lint.ModelCodeCheck;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * The hostile rule corpus ({@code src/test/resources/hostile-rules/}) on the executable-model path:
 * every file is refused with exactly the message compiled DRL gives; and with the lint out of the
 * way, the model of every file whose Java the compiled-code check catches is refused by the model's
 * bytecode check, naming the same class or member.
 */
class ModelPathHostileTest {
  static final Path HOSTILE = Path.of("src/test/resources/hostile-rules");

  /** The compiled-code check's expectation in a file's header: a Java class or member name. */
  private static final Pattern COMPILED =
      Pattern.compile("compiled: ((?:[a-z]\\w*\\.)+[A-Z][\\w.<>]*)");

  static Stream<Path> hostileFiles() throws IOException {
    try (Stream<Path> s = Files.list(HOSTILE)) {
      return s.filter(p -> p.toString().endsWith(".drl")).sorted().toList().stream();
    }
  }

  @ParameterizedTest
  @MethodSource("hostileFiles")
  void everyHostileFileIsRefusedOnTheModelPathWithTheCompiledPathsMessage(
      Path file, @TempDir Path tmp) {
    String compiled =
        assertThrows(
                RulesException.class,
                () -> RuleCompiler.compileFile(file, RuleCompiler.Options.STRICT))
            .getMessage();
    RuleCompiler.Options model =
        RuleCompiler.Options.STRICT.withCache(
            RuleSetCache.at(tmp).withModelBuilds(RuleSetCache.ModelBuilds.IN_PROCESS));
    String onModelPath =
        assertThrows(RulesException.class, () -> RuleCompiler.compileFile(file, model))
            .getMessage();
    assertThat(onModelPath).isEqualTo(compiled);
    try (Stream<Path> s = Files.list(tmp)) {
      assertThat(s.toList()).as("nothing cached for a refused set").isEmpty();
    } catch (IOException e) {
      throw new java.io.UncheckedIOException(e);
    }
  }

  static Stream<Path> compiledCheckFiles() throws IOException {
    return hostileFiles().filter(f -> expectedName(f) != null);
  }

  private static String expectedName(Path file) {
    try {
      Matcher m = COMPILED.matcher(Files.readAllLines(file).get(1));
      return m.find() ? m.group(1) : null;
    } catch (IOException e) {
      throw new java.io.UncheckedIOException(e);
    }
  }

  @ParameterizedTest
  @MethodSource("compiledCheckFiles")
  void withTheLintOffTheModelsBytecodeCheckRefusesWhatTheCompiledCodeCheckDoes(Path file)
      throws IOException {
    String name = expectedName(file);
    Map<String, byte[]> classes = new TreeMap<>();
    List<String> refused;
    try {
      PrebuiltModelWriter.generate(
          List.of(
              new RuleSource(
                  file.getFileName().toString(), file.toString(), Files.readString(file))),
          classes);
      refused = ModelCodeCheck.check(classes, PrebuiltModelWriter.MODEL_PACKAGE);
    } catch (IOException | RuntimeException e) {
      return; // the model cannot even be made: such a set stays on the compiled path
    }
    // the same class or member, though the model may call it on another type (kcontext's
    // getKieRuntime is the model's KnowledgeHelper.getKieRuntime)
    String member = name.substring(name.lastIndexOf('.') + 1);
    assertThat(refused)
        .as("%s: %s", file, name)
        .anyMatch(l -> l.contains(name) || l.contains("." + member + ":"));
  }
}
