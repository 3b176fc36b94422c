package dev.evictd.cli;

import static org.assertj.core.api.Assertions.assertThat;

import org.junit.jupiter.api.Test;

/**
 * {@code evictd rules check DIR --run FIXTURE...}: the rule sets of the hostile corpus that pass
 * the lint and compile but fail at run time are caught offline, one line naming the fixture, the
 * step and the rule.
 */
class RulesCheckRunTest {
  static final String RUNTIME = "src/test/resources/hostile-rules/runtime/";

  static String failLine(CliTest.Run r) {
    return r.out().lines().filter(l -> l.startsWith("FAIL ")).findFirst().orElse("");
  }

  @Test
  void aDirectoryWithoutFixturesAfterRunIsAnErrorNotAPass() {
    // --run takes every path after it: a rules directory there is no fixture, and says so
    CliTest.Run r =
        CliTest.run(
            "rules",
            "check",
            "--run",
            "fixtures/memory/soft-memory-pressure.yaml",
            RUNTIME + "throwing");
    assertThat(r.code()).as(r.out() + r.err()).isEqualTo(2);
    assertThat(r.out())
        .contains(
            "ERROR "
                + RUNTIME
                + "throwing: no fixture (*.yaml, *.yml) in this directory; it holds rule files"
                + " (.drl): a rules directory?");
    CliTest.Run test = CliTest.run("test", RUNTIME + "throwing");
    assertThat(test.code()).as(test.out() + test.err()).isEqualTo(2);
    assertThat(test.out()).contains("no fixture (*.yaml, *.yml) in this directory");
  }

  @Test
  void aThrowingSetFailsWithTheFixtureStepAndRule() {
    CliTest.Run r =
        CliTest.run(
            "rules",
            "check",
            RUNTIME + "throwing",
            "--run",
            "fixtures/memory/soft-memory-pressure.yaml");
    assertThat(r.code()).as(r.out() + r.err()).isEqualTo(1);
    assertThat(failLine(r))
        .matches(
            "FAIL fixtures/memory/soft-memory-pressure.yaml: step \\d+: rule \"throws when pods are"
                + " ranked\" failed in phase decide: IllegalStateException: boom under pressure");
    assertThat(r.out())
        .contains("policy lint passed", "ran 1 fixtures on ", "1 with run-time failures");
  }

  @Test
  void aLoopingSetFailsOnEachFixtureUnderPressureAndNamesTheRule() {
    CliTest.Run r =
        CliTest.run(
            "rules",
            "check",
            RUNTIME + "looping-modify",
            "--run",
            "fixtures/memory/soft-memory-pressure.yaml",
            "fixtures/memory/allocatable-memory-pressure.yaml");
    assertThat(r.code()).as(r.out() + r.err()).isEqualTo(1);
    assertThat(failLine(r))
        .startsWith("FAIL fixtures/memory/")
        .contains(": step ", "re-fires on the state it modifies", "a rule may be looping");
    assertThat(r.out().lines().filter(l -> l.startsWith("FAIL ")))
        .hasSize(2)
        .allSatisfy(l -> assertThat(l).contains("re-fires on the state it modifies"));
  }

  @Test
  void theDefaultRulesRunCleanAndExpectationsAreNotCompared() {
    CliTest.Run r = CliTest.run("rules", "check", "rules", "--run", "fixtures/memory");
    assertThat(r.code()).as(r.out() + r.err()).isZero();
    assertThat(r.out()).doesNotContain("FAIL ").contains("no run-time failure");

    // the qos-ranking fixtures expect another ranking than the defaults give: not a run-time
    // failure
    CliTest.Run other =
        CliTest.run("rules", "check", "rules", "--run", "fixtures/examples/qos-ranking");
    assertThat(other.code()).as(other.out() + other.err()).isZero();
    assertThat(CliTest.run("test", "--rules", "rules", "fixtures/examples/qos-ranking").code())
        .isEqualTo(1);
  }

  @Test
  void aFixtureThatCannotBeReadIsBadInput() {
    CliTest.Run r = CliTest.run("rules", "check", "rules", "--run", "no/such/fixture.yaml");
    assertThat(r.code()).isEqualTo(2);
    assertThat(r.out()).contains("ERROR no/such/fixture.yaml: no such file or directory\n");
  }
}
