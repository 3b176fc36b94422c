package dev.evictd.reference;

import static org.assertj.core.api.Assertions.assertThat;

import dev.evictd.fixture.Expectation;
import dev.evictd.fixture.Fixture;
import dev.evictd.fixture.FixtureLoader;
import dev.evictd.fixture.FixtureStep;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.stream.Stream;
import org.junit.jupiter.api.DynamicTest;
import org.junit.jupiter.api.TestFactory;

/**
 * The reference implementation meets the expectations of every fixture written for the default
 * rules (the kubelet's own scenarios ported to fixtures, and evictd's edge cases): evidence that it
 * is a faithful port, found without the rules.
 */
class KubeletReferenceTest {

  static List<Path> defaultRuleFixtures() throws IOException {
    try (Stream<Path> s = Files.walk(Path.of("fixtures"))) {
      return s.filter(
              p ->
                  p.toString().endsWith(".yaml")
                      && !p.getFileName().toString().equals("rules.yaml"))
          .filter(p -> FixtureLoader.load(p).rules() == null)
          .sorted()
          .toList();
    }
  }

  @TestFactory
  Stream<DynamicTest> referenceMeetsEveryFixture() throws IOException {
    List<Path> files = defaultRuleFixtures();
    assertThat(files).hasSizeGreaterThan(25);
    return files.stream()
        .map(
            f ->
                DynamicTest.dynamicTest(
                    f.toString(), () -> assertThat(mismatches(FixtureLoader.load(f))).isEmpty()));
  }

  /** Every expectation of the fixture the reference does not meet. */
  static List<String> mismatches(Fixture f) {
    List<KubeletReference.Result> results = Differential.reference(f);
    List<String> out = new ArrayList<>();
    for (int i = 0; i < f.steps().size(); i++) {
      FixtureStep step = f.steps().get(i);
      Expectation e = step.expect();
      KubeletReference.Result r = results.get(i);
      if (e == null) {
        continue;
      }
      String at = "step " + step.index() + ": ";
      if (e.conditions() != null && !e.conditions().equals(r.conditions())) {
        out.add(at + "conditions " + e.conditions() + " != " + r.conditions());
      }
      if (e.signal() != null && !e.signal().equals(r.signal() == null ? "" : r.signal().key())) {
        out.add(at + "signal " + e.signal() + " != " + r.signal());
      }
      if (e.reclaimed() != null && !e.reclaimed().equals(r.reclaimed())) {
        out.add(at + "reclaimed " + e.reclaimed() + " != " + r.reclaimed());
      }
      if (e.ranking() != null && !e.ranking().equals(r.ranking())) {
        out.add(at + "ranking " + e.ranking() + " != " + r.ranking());
      }
      if (e.evicted() != null) {
        List<String> pods = r.evictions().stream().map(KubeletReference.Eviction::pod).toList();
        List<String> expected =
            e.evicted().stream().map(Expectation.ExpectedEviction::pod).toList();
        if (!expected.equals(pods)) {
          out.add(at + "evicted " + expected + " != " + pods);
          continue;
        }
        for (int j = 0; j < expected.size(); j++) {
          Expectation.ExpectedEviction x = e.evicted().get(j);
          KubeletReference.Eviction y = r.evictions().get(j);
          if (x.gracePeriodSeconds() != null && x.gracePeriodSeconds() != y.gracePeriodSeconds()) {
            out.add(at + "grace " + x.gracePeriodSeconds() + " != " + y.gracePeriodSeconds());
          }
          if (x.message() != null && !x.message().equals(y.message())) {
            out.add(at + "message \"" + x.message() + "\" != \"" + y.message() + "\"");
          }
        }
      }
    }
    return out;
  }
}
