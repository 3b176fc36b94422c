package dev.evictd.cli;

import static org.assertj.core.api.Assertions.assertThat;

import org.junit.jupiter.api.Test;

/**
 * A command line evictd cannot read is one line in evictd's words, naming the command and where its
 * usage is (exit 2): not picocli's message and a second line of advice.
 */
class UsageErrorsTest {
  private static void refused(String expected, String... args) {
    CliTest.Run r = CliTest.run(args);
    assertThat(r.code()).as(r.err()).isEqualTo(Main.BAD_INPUT);
    assertThat(r.out()).isEmpty();
    assertThat(r.err()).isEqualTo(expected + "\n");
  }

  @Test
  void anUnknownOptionSaysWhatItMayHaveMeant() {
    refused(
        "evictd: test: unknown option '--fiter' (did you mean --filter?); see 'evictd test --help'",
        "test",
        "--fiter",
        "x",
        "fixtures/pid");
    // its value is not a second mistake
    refused(
        "evictd: stats: unknown option '--cgroup-rot' (did you mean --cgroup-root?); see"
            + " 'evictd stats --help'",
        "stats",
        "--cgroup-rot",
        "/x");
    refused(
        "evictd: rules check: unknown option '--rn'; see 'evictd rules check --help'",
        "rules",
        "check",
        "--rn",
        "x");
    refused("evictd: unknown option '--bogus'; see 'evictd --help'", "--bogus");
  }

  @Test
  void aMissingRequiredOptionOrParameterIsNamed() {
    refused(
        "evictd: plan: missing required options --config FILE, --pods FILE, --summary FILE; see"
            + " 'evictd plan --help'",
        "plan");
    refused(
        "evictd: plan: missing required option --summary FILE; see 'evictd plan --help'",
        "plan",
        "--config",
        "pom.xml",
        "--pods",
        "pom.xml");
    refused("evictd: test: missing required parameter PATH; see 'evictd test --help'", "test");
  }

  @Test
  void anOptionWithoutItsValueSaysWhatItTakes() {
    refused(
        "evictd: test: --jobs needs a value (N); see 'evictd test --help'",
        "test",
        "fixtures/pid",
        "--jobs");
    refused(
        "evictd: plan: --config needs a value (FILE); see 'evictd plan --help'",
        "plan",
        "--config");
  }

  @Test
  void anUnknownCommandListsTheCommandsAndAnExtraArgumentIsNamed() {
    refused(
        "evictd: rules: unknown command 'chek' (one of: check); see 'evictd rules --help'",
        "rules",
        "chek");
    refused(
        "evictd: rules check: unexpected argument 'b'; see 'evictd rules check --help'",
        "rules",
        "check",
        "rules",
        "b");
  }
}
