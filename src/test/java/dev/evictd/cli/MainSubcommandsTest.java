package dev.evictd.cli;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.PrintWriter;
import java.io.StringWriter;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import picocli.CommandLine;

/** The subcommands registered on demand by {@link Main#execute}. */
class MainSubcommandsTest {
  record Run(int code, String out, String err) {}

  static Run run(String... args) {
    StringWriter out = new StringWriter();
    StringWriter err = new StringWriter();
    int code = Main.execute(args, new PrintWriter(out, true), new PrintWriter(err, true));
    return new Run(code, out.toString(), err.toString());
  }

  @Test
  void eachNameIsTheOneItsCommandDeclares() {
    for (Map.Entry<String, Class<?>> e : Main.SUBCOMMANDS.entrySet()) {
      CommandLine.Command c = e.getValue().getAnnotation(CommandLine.Command.class);
      assertThat(c).as(e.getValue().getName()).isNotNull();
      assertThat(c.name()).isEqualTo(e.getKey());
    }
    // every command class of this package is reachable from the command line
    assertThat(Main.SUBCOMMANDS.values())
        .contains(PlanCommand.class, RunCommand.class, RulesCommand.class, TestCommand.class);
  }

  @Test
  void theUsageListsEveryCommandInOrder() {
    Run r = run("--help");
    assertThat(r.code()).isZero();
    List<Integer> at = new ArrayList<>();
    for (String name : Main.SUBCOMMANDS.keySet()) {
      int i = r.out().indexOf("\n  " + name + " ");
      assertThat(i).as("%s in the usage:\n%s", name, r.out()).isPositive();
      at.add(i);
    }
    assertThat(at).isSorted();
  }

  @Test
  void noCommandIsAUsageErrorNotTheUsageAndExitZero() {
    // nothing was done: it printed the usage and exited 0
    Run none = run();
    assertThat(none.code()).isEqualTo(Main.BAD_INPUT);
    assertThat(none.out()).isEmpty();
    assertThat(none.err())
        .isEqualTo(
            "evictd: no command given (one of: "
                + String.join(", ", Main.SUBCOMMANDS.keySet())
                + "); see 'evictd --help'\n");
    Run rules = run("rules");
    assertThat(rules.code()).isEqualTo(Main.BAD_INPUT);
    assertThat(rules.out()).isEmpty();
    assertThat(rules.err())
        .isEqualTo("evictd: rules: no command given (one of: check); see 'evictd rules --help'\n");
    // the usage is still there when asked for
    assertThat(run("rules", "--help").code()).isZero();
  }

  @Test
  void aCommandsOwnFlagsFromItsModelTransformerAreThere() {
    // run's flags of every configuration key come from RunCommand.Flags
    Run r = run("run", "--help");
    assertThat(r.code()).isZero();
    assertThat(r.out()).contains("--interval").contains("--kubelet-url");
    assertThat(run("help", "run").out()).isEqualTo(r.out());
  }

  @Test
  void aNamedCommandRunsAloneAndHelpAndMistakesStillSeeThemAll() {
    Run plan = run("plan", "--help");
    assertThat(plan.code()).isZero();
    assertThat(plan.out()).startsWith("Usage: evictd plan ").contains("--summary");
    Run help = run("help", "plan");
    assertThat(help.code()).isZero();
    assertThat(help.out()).isEqualTo(plan.out());
    Run typo = run("pln");
    assertThat(typo.code()).isEqualTo(Main.BAD_INPUT);
    assertThat(typo.err())
        .isEqualTo(
            "evictd: unknown command 'pln' (one of: "
                + String.join(", ", Main.SUBCOMMANDS.keySet())
                + "); see 'evictd --help'\n");
    Run missing = run("plan");
    assertThat(missing.code()).isEqualTo(Main.BAD_INPUT);
    assertThat(missing.err())
        .isEqualTo(
            "evictd: plan: missing required options --config FILE, --pods FILE, --summary FILE;"
                + " see 'evictd plan --help'\n");
  }

  @Test
  void slf4jIsToldItsProviderAndSaysNothingAboutIt() throws Exception {
    assertThat(Main.SUBCOMMANDS).isNotEmpty(); // Main initialised
    Class<?> provider = Class.forName(System.getProperty("slf4j.provider"));
    assertThat(org.slf4j.spi.SLF4JServiceProvider.class).isAssignableFrom(provider);
    // a fresh JVM: the provider is found without a class path search, and slf4j prints nothing
    Process p =
        new ProcessBuilder(
                java.nio.file.Path.of(System.getProperty("java.home"), "bin", "java").toString(),
                "-cp",
                System.getProperty("java.class.path"),
                Main.class.getName(),
                "rules",
                "check",
                "rules")
            .redirectErrorStream(true)
            .start();
    String out =
        new String(p.getInputStream().readAllBytes(), java.nio.charset.StandardCharsets.UTF_8);
    assertThat(p.waitFor()).as(out).isZero();
    assertThat(out).doesNotContain("SLF4J");
  }
}
