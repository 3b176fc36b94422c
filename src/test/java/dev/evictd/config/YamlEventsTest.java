package dev.evictd.config;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.assertj.core.api.Assertions.catchThrowable;

import dev.evictd.api.ConfigException;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Iterator;
import java.util.List;
import java.util.Map;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * The event path ({@link YamlEvents}) against the composer's ({@link
 * YamlComposer#parseAllComposed}): the same nodes, lines, columns, paths and tags on every YAML
 * file of the project, and the same error or the same nodes on inputs it hands back.
 */
class YamlEventsTest {
  private static final java.util.regex.Pattern ALIAS_OR_TAG =
      java.util.regex.Pattern.compile("\\*[A-Za-z]|<<|!");

  static Stream<Path> projectYaml() throws IOException {
    try (Stream<Path> s = Files.walk(Path.of("."))) {
      return s
          .filter(p -> !p.startsWith("./target") && !p.startsWith("./.git"))
          .filter(p -> p.toString().endsWith(".yaml") || p.toString().endsWith(".yml"))
          .sorted()
          .toList()
          .stream();
    }
  }

  @Test
  void coversTheBundledFixtures() throws IOException {
    assertThat(projectYaml().filter(p -> p.startsWith("./fixtures")).count()).isGreaterThan(80);
    for (Path large : List.of(Path.of("fixtures/scale/memory-5000-pods.yaml"))) {
      String text = Files.readString(large);
      assertThat(YamlEvents.build(large.toString(), text, YamlComposer.settings("f"))).isNotNull();
    }
  }

  @ParameterizedTest
  @MethodSource("projectYaml")
  void buildsWhatTheComposerBuildsForEveryProjectFile(Path file) throws IOException {
    byte[] bytes = Files.readAllBytes(file);
    List<YamlNode> reference = YamlComposer.parseAllComposed(file.toString(), bytes);
    List<YamlNode> events =
        YamlEvents.build(
            file.toString(),
            new String(bytes, StandardCharsets.UTF_8),
            YamlComposer.settings(file.toString()));
    if (file.startsWith("./fixtures") && !ALIAS_OR_TAG.matcher(Files.readString(file)).find()) {
      assertThat(events).as("a fixture without aliases takes the event path").isNotNull();
    }
    if (events != null) {
      assertSame(reference, events);
    }
    assertSame(reference, YamlNode.parseAll(file.toString(), bytes));
  }

  /** Plain YAML the event path builds itself. */
  @ParameterizedTest
  @ValueSource(
      strings = {
        "a: 1\nb: [1, 2.5, true, null, ~, '3', \"x\", 0x1f, 0o17, .inf, -.nan, 1e3]\n",
        "- {a: {b: {c: [ [ ], { } ]}}}\n- |\n  text\n- >\n  folded\n- ''\n-\n",
        "---\na: b\n---\n- c\n...\n---\n",
        "k: &anchor v\nl: x\n",
        "'quoted key': 1\n\"x.y\": 2\n3: 3\nnull: 4\n'': 5\n",
        "# only a comment and a value\nv # trailing\n",
        "a:\n  - b: 1\n    c: 2\n  - d\n\tx: 1\n",
        "{\"json\": [1, -2, 3.0e10, \"s\", false, null, {\"n\": {}}]}",
        "a: !  tagged-non-specific\n",
        "big: 123456789012345678901234567890\nneg: -0\nunder: 1_000\n",
        // one text plain, quoted and as a key: each resolved as the composer resolves it
        "[1, '1', \"1\", 1, true, 'true', true, null, 'null', ~, x, 'x']\n",
        "{1: 1, '2': 2, true: '1', x: 1, 'y': x}\n",
      })
  void plainYamlTakesTheEventPathWithTheSameNodes(String yaml) {
    byte[] bytes = yaml.getBytes(StandardCharsets.UTF_8);
    Throwable composedError = catchThrowable(() -> YamlComposer.parseAllComposed("f.yaml", bytes));
    if (composedError != null) {
      // a tab in the indentation is not YAML: both report the composer's error
      assertThat(YamlEvents.build("f.yaml", yaml, YamlComposer.settings("f.yaml"))).isNull();
      assertThatThrownBy(() -> YamlNode.parseAll("f.yaml", bytes))
          .isInstanceOf(ConfigException.class)
          .hasMessage(composedError.getMessage());
      return;
    }
    List<YamlNode> events = YamlEvents.build("f.yaml", yaml, YamlComposer.settings("f.yaml"));
    assertThat(events).isNotNull();
    assertSame(YamlComposer.parseAllComposed("f.yaml", bytes), events);
  }

  /** What the event path hands to the composer: the results and errors are the composer's. */
  @ParameterizedTest
  @ValueSource(
      strings = {
        "a: &x {b: 1}\nc: *x\n",
        "a: &x [1]\nc: {<<: *x}\n",
        "base: &b {x: 1}\nd:\n  <<: *b\n  y: 2\n",
        "d:\n  <<: {x: 1}\n  y: 2\n",
        "a: !!str 1\nb: !!int '2'\n",
        "a: !custom x\n",
        "m: !!map {a: 1}\n",
        "? [a, b]\n: c\n",
        "? {a: 1}\n: c\n",
        "a: 1\na: 2\n",
        "x:\n  y: 1\n  z: 2\n  y: 3\n",
        "a: [1, 2\n",
        "a: b: c\n",
        "a: 'unterminated\n",
        "- a\nb: c\n",
        "a: *missing\n",
        "r: &r [*r]\n",
        "a: {b: 1}\n---\nc: [\n",
        "a: 1\nb:\n\t- x\n",
        "%YAML 1.1\n%YAML 1.1\n--- a\n",
        "key: @reserved\n",
        "# only a comment\n",
        "---\n...\n",
      })
  void everythingElseIsTheComposers(String yaml) {
    assertLikeComposer(yaml);
  }

  /** More distinct short scalars than the event path remembers: the rest resolved one by one. */
  @Test
  void moreDistinctScalarsThanRememberedAreTheComposers() {
    StringBuilder sb = new StringBuilder();
    for (int i = 0; i < 22_000; i++) { // 66,000 distinct
      sb.append("- [").append(i).append(", '").append(i).append("', x").append(i).append("]\n");
    }
    sb.append("- [1, '1', x1, 21999, '21999', x21999, 22000, '22000']\n");
    String yaml = sb.toString();
    List<YamlNode> events = YamlEvents.build("f.yaml", yaml, YamlComposer.settings("f.yaml"));
    assertThat(events).isNotNull();
    assertSame(
        YamlComposer.parseAllComposed("f.yaml", yaml.getBytes(StandardCharsets.UTF_8)), events);
  }

  @Test
  void tooDeepAndManyAliasesAsTheComposerReportsThem() {
    assertLikeComposer("a: " + "[".repeat(250) + "]".repeat(250) + "\n");
    assertLikeComposer("a: " + "{b: ".repeat(201) + "1" + "}".repeat(201) + "\n");
    assertLikeComposer("a: " + "[".repeat(199) + "]".repeat(199) + "\n");
    StringBuilder laughs = new StringBuilder("a: &a [x, x, x, x, x, x, x, x, x]\n");
    for (char c = 'b'; c <= 'j'; c++) {
      char p = (char) (c - 1);
      laughs
          .append(c)
          .append(": &")
          .append(c)
          .append(" [*")
          .append(p)
          .append(", *")
          .append(p)
          .append(", *")
          .append(p)
          .append(", *")
          .append(p)
          .append(", *")
          .append(p)
          .append(", *")
          .append(p)
          .append(", *")
          .append(p)
          .append("]\n");
    }
    assertLikeComposer(laughs.toString());
    assertThatThrownBy(() -> YamlNode.parseAll("f.yaml", laughs.toString().getBytes()))
        .isInstanceOf(ConfigException.class)
        .hasMessageContaining("aliases");
  }

  private static void assertLikeComposer(String yaml) {
    byte[] bytes = yaml.getBytes(StandardCharsets.UTF_8);
    Throwable composedError = catchThrowable(() -> YamlComposer.parseAllComposed("f.yaml", bytes));
    Throwable error = catchThrowable(() -> YamlNode.parseAll("f.yaml", bytes));
    if (composedError == null) {
      assertThat(error).isNull();
      assertSame(
          YamlComposer.parseAllComposed("f.yaml", bytes), YamlNode.parseAll("f.yaml", bytes));
    } else {
      assertThat(error)
          .isInstanceOf(composedError.getClass())
          .hasMessage(composedError.getMessage());
    }
  }

  private static void assertSame(List<YamlNode> expected, List<YamlNode> actual) {
    assertThat(actual).hasSameSizeAs(expected);
    for (int i = 0; i < expected.size(); i++) {
      assertSame(expected.get(i), actual.get(i));
    }
  }

  private static void assertSame(YamlNode e, YamlNode a) {
    String at = e.where() + ":" + e.column();
    assertThat(a.path()).as(at).isEqualTo(e.path());
    assertThat(a.file()).as(at).isEqualTo(e.file());
    assertThat(a.line()).as(at).isEqualTo(e.line());
    assertThat(a.column()).as(at).isEqualTo(e.column());
    assertThat(a.kind()).as(at).isEqualTo(e.kind());
    assertThat(a.tag()).as(at).isEqualTo(e.tag());
    switch (e.kind()) {
      case MAP -> {
        assertThat(a.asMap().keySet()).as(at).containsExactlyElementsOf(e.asMap().keySet());
        Iterator<YamlNode> ai = a.asMap().values().iterator();
        for (Map.Entry<String, YamlNode> en : e.asMap().entrySet()) {
          assertSame(en.getValue(), ai.next());
        }
      }
      case SEQ -> assertSame(e.asList(), a.asList());
      case SCALAR -> {
        assertThat(a.asText()).as(at).isEqualTo(e.asText());
        assertThat(a.toJson()).as(at).isEqualTo(e.toJson());
      }
      case NULL -> assertThat(a.isNull()).as(at).isTrue();
    }
  }
}
