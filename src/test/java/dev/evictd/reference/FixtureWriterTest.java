package dev.evictd.reference;

import static org.assertj.core.api.Assertions.assertThat;

import dev.evictd.config.YamlNode;
import dev.evictd.fixture.Fixture;
import dev.evictd.fixture.FixtureLoader;
import dev.evictd.fixture.FixtureResult;
import dev.evictd.fixture.FixtureRunner;
import dev.evictd.testing.prop.Choices;
import dev.evictd.testing.prop.ChoicesArbitrary;
import dev.evictd.testing.prop.JqwikRun;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import net.jqwik.api.Arbitrary;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.Provide;
import org.junit.jupiter.api.Test;
import tools.jackson.databind.json.JsonMapper;

/**
 * The fixture serializer: what it writes reads back as the same documents, loads with {@link
 * FixtureLoader}, and replays with the expectations it was given; a failing property prints such a
 * fixture, shrunk.
 */
class FixtureWriterTest {
  private static final JsonMapper JSON = JsonMapper.builder().build();

  @Test
  void scalarsReadBackAsTheSameStrings() {
    List<String> tricky =
        List.of(
            "",
            "true",
            "False",
            "null",
            "~",
            "yes",
            "no",
            "on",
            "1e3",
            "1E3",
            "10%",
            "0x10",
            "0o7",
            "1_000",
            "12:30",
            "2026-01-01T00:00:00Z",
            "a: b",
            "- a",
            "#x",
            "x #y",
            "[a]",
            "{a}",
            "\"q\"",
            "'q'",
            "back\\slash",
            "two\nlines",
            "tab\there",
            "nul\0byte",
            "\u0085",
            "\u2028",
            "\uFEFFbom",
            "emoji \uD83D\uDE00",
            "  padded  ",
            "100Mi",
            "1.5Gi",
            "30s",
            "1m30s",
            "-1",
            "+1",
            ".5",
            "1.",
            "inf",
            ".nan",
            "*alias",
            "&anchor",
            "!tag",
            "%d",
            "@x",
            "`x",
            "|",
            ">",
            "?",
            ",",
            "kubernetes.io/config.source");
    for (String s : tricky) {
      Map<String, Object> doc = new LinkedHashMap<>();
      doc.put("v", s);
      doc.put(s.isEmpty() ? "empty" : s, "key");
      YamlNode n = YamlNode.parse("t.yaml", YamlWriter.write(doc).getBytes(StandardCharsets.UTF_8));
      assertThat(n.get("v").asString(false)).as("value %s", s).isEqualTo(s);
      assertThat(n.asMap()).as("key %s", s).containsKey(s.isEmpty() ? "empty" : s);
    }
  }

  @Test
  void generatedFixturesReadBackLoadAndReplayTheReferenceExpectations() {
    for (int i = 0; i < 60; i++) {
      Scenario s = ScenarioGen.scenario(Choices.random(1_000 + i));
      String text = s.toYaml(Differential.reference(Differential.load(s)));
      // the same documents
      String written =
          JSON.writeValueAsString(
              YamlNode.parse("w.yaml", text.getBytes(StandardCharsets.UTF_8)).toJson());
      String original =
          JSON.writeValueAsString(
              JSON.valueToTree(s.toFixture(Differential.reference(Differential.load(s)))));
      assertThat(JSON.readTree(written)).as("case %d", i).isEqualTo(JSON.readTree(original));
      // loads, and the planner meets every expectation the reference wrote
      Fixture f =
          FixtureLoader.parse(Path.of("generated.yaml"), text.getBytes(StandardCharsets.UTF_8));
      assertThat(f.steps()).hasSize(s.steps().size());
      assertThat(f.pods()).hasSize(s.pods().size());
      assertThat(f.steps()).allSatisfy(step -> assertThat(step.expect()).isNotNull());
      FixtureResult r = new FixtureRunner(dir -> Differential.rules()).run(f);
      assertThat(r.status())
          .as("case %d: %s\n%s", i, r.mismatch(), text)
          .isEqualTo(FixtureResult.Status.PASSED);
    }
  }

  @Test
  void aFailingPropertyPrintsAShrunkFixtureThatLoads() {
    Throwable failure = JqwikRun.failureOf(FailsOnTwoPods.class, "noTwoPodsAndTwoSteps");
    assertThat(failure)
        .isInstanceOf(AssertionError.class)
        .satisfies(
            e -> {
              String msg = e.getMessage();
              assertThat(msg).contains("fails on two pods: two pods and two steps");
              String yaml =
                  msg.substring(
                      msg.indexOf(ChoicesArbitrary.CASE + "\n")
                          + (ChoicesArbitrary.CASE + "\n").length());
              Fixture f =
                  FixtureLoader.parse(
                      Path.of("shrunk.yaml"), yaml.getBytes(StandardCharsets.UTF_8));
              // shrunk to the smallest failing case: exactly two pods and two steps
              assertThat(f.pods()).hasSize(2);
              assertThat(f.steps()).hasSize(2);
              assertThat(new FixtureRunner(dir -> Differential.rules()).run(f).passed()).isTrue();
            });
  }

  /** A property that fails as soon as a scenario has two pods and two steps. */
  static class FailsOnTwoPods {
    @Property(tries = 500, seed = "5")
    void noTwoPodsAndTwoSteps(@ForAll("scenarios") Scenario s) {
      ChoicesArbitrary.assertHolds(
          "fails on two pods",
          s,
          x -> x.pods().size() >= 2 && x.steps().size() >= 2 ? "two pods and two steps" : null,
          Differential::fixtureText);
    }

    @Provide
    Arbitrary<Scenario> scenarios() {
      return ChoicesArbitrary.of(ScenarioGen::scenario);
    }
  }
}
