package dev.evictd.cli;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.io.PrintWriter;
import java.io.StringWriter;
import java.nio.file.Files;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The command line: output and exit codes (0 ok, 1 failed, 2 bad input), one clear line per error.
 */
class CliTest {
  record Run(int code, String out, String err) {}

  static Run run(String... args) {
    StringWriter out = new StringWriter();
    StringWriter err = new StringWriter();
    int code = Main.execute(args, new PrintWriter(out, true), new PrintWriter(err, true));
    return new Run(code, out.toString(), err.toString());
  }

  static final String PASSING =
      "kubeletConfig: {evictionHard: {memory.available: 1Gi}}\n"
          + "pods:\n  - metadata: {name: a}\n"
          + "steps:\n"
          + "  - summary: {node: {memory: {availableBytes: 500Mi, workingSetBytes: 4Gi}},\n"
          + "              pods: [{podRef: {name: a, namespace: default, uid: default/a}, memory: {workingSetBytes: 1Gi}}]}\n"
          + "    expect: {conditions: [MemoryPressure], evicted: [{pod: default/a, gracePeriodSeconds: 1}]}\n";

  @Test
  void testPassesFailsAndReportsUnloadableFixtures(@TempDir Path dir) throws IOException {
    Files.writeString(dir.resolve("a-pass.yaml"), PASSING);
    Run ok = run("test", dir.toString());
    assertThat(ok.code()).isZero();
    assertThat(ok.out())
        .contains("PASS  " + dir.resolve("a-pass.yaml"))
        .endsWith("1 passed, 0 failed\n");

    Files.writeString(
        dir.resolve("b-fail.yaml"),
        PASSING.replace("gracePeriodSeconds: 1", "gracePeriodSeconds: 30"));
    Run failed = run("test", dir.toString());
    assertThat(failed.code()).isEqualTo(1);
    assertThat(failed.out())
        .contains(
            "FAIL  "
                + dir.resolve("b-fail.yaml")
                + " (b-fail.yaml): step 1: evicted[0].gracePeriodSeconds: expected 30, actual 1")
        .endsWith("1 passed, 1 failed\n");

    Files.writeString(dir.resolve("c-bad.yaml"), "steps: [\n");
    Run bad = run("test", dir.toString());
    assertThat(bad.code()).isEqualTo(2);
    assertThat(bad.out())
        .contains("ERROR " + dir.resolve("c-bad.yaml") + ":")
        .doesNotContain(dir.resolve("c-bad.yaml") + ": " + dir.resolve("c-bad.yaml"))
        .contains("not valid YAML");
    assertThat(bad.out()).endsWith("1 passed, 2 failed\n");
  }

  @Test
  void aTypoInASummaryIsAWarningOnStderrAndTheFixtureStillRuns(@TempDir Path dir)
      throws IOException {
    Path f = dir.resolve("typo.yaml");
    Files.writeString(f, PASSING.replace("workingSetBytes: 1Gi", "workingSetByte: 1Gi"));
    Run typo = run("test", f.toString());
    assertThat(typo.code()).isZero();
    assertThat(typo.out()).contains("PASS  " + f).endsWith("1 passed, 0 failed\n");
    assertThat(typo.err())
        .isEqualTo(
            "evictd: warning: "
                + f
                + ":6: steps[0].summary.pods[0].memory.workingSetByte: \"workingSetByte\" is not a"
                + " stats summary field (did you mean \"workingSetBytes\"?); it is ignored, as if"
                + " not observed\n");
    Run check = run("rules", "check", "--run", f.toString());
    assertThat(check.err()).contains(f + ":6: steps[0].summary.pods[0].memory.workingSetByte:");

    Files.writeString(f, PASSING);
    assertThat(run("test", f.toString()).err()).isEmpty();
  }

  @Test
  void testOnAMissingPathIsBadInput() {
    Run r = run("test", "no/such/fixtures");
    assertThat(r.code()).isEqualTo(2);
    // the path once: the message names it already
    assertThat(r.out()).contains("ERROR no/such/fixtures: no such file or directory\n");
    assertThat(r.out()).doesNotContain("no/such/fixtures: no/such/fixtures");
  }

  @Test
  void aFixtureThatCannotBeLoadedIsNamedOnceByEveryCommandThatRunsFixtures(@TempDir Path dir)
      throws IOException {
    Path bad = dir.resolve("bad.yaml");
    Files.writeString(bad, "steps: [\n");
    for (String[] args :
        new String[][] {
          {"test", dir.toString()},
          {"diff", "--rules", "default", "--against", "default", dir.toString()},
          {"rules", "check", "--run", dir.toString()}
        }) {
      Run r = run(args);
      assertThat(r.code()).as(String.join(" ", args)).isEqualTo(Main.BAD_INPUT);
      assertThat(r.out())
          .as(String.join(" ", args))
          .contains("ERROR " + bad + ":")
          .doesNotContain(bad + ": " + bad);
    }
  }

  @Test
  void testWithAFilterThatMatchesNoFixtureIsAnError(@TempDir Path dir) {
    Path xml = dir.resolve("junit.xml");
    Run r = run("test", "--filter", "nomatchxyz", "--junit-xml", xml.toString(), "fixtures/pid");
    assertThat(r.code()).isEqualTo(Main.BAD_INPUT);
    assertThat(r.err())
        .isEqualTo(
            "evictd: --filter 'nomatchxyz' matches none of the 2 fixtures (by path or name)\n");
    assertThat(r.out()).doesNotContain("0 passed");
    assertThat(xml).as("no report of nothing, which CI would read as a pass").doesNotExist();
    Run one = run("test", "--filter", "nomatchxyz", "fixtures/pid/pid-pressure.yaml");
    assertThat(one.code()).isEqualTo(Main.BAD_INPUT);
    assertThat(one.err())
        .isEqualTo(
            "evictd: --filter 'nomatchxyz' matches neither the path nor the name of the one"
                + " fixture\n");
    // a filter that selects one of them runs that one
    Run some = run("test", "--filter", "verify", "fixtures/pid");
    assertThat(some.code()).isZero();
    assertThat(some.out()).endsWith("1 passed, 0 failed\n");
  }

  @Test
  void replayPrintsTheTimeline() {
    Run r = run("replay", "fixtures/memory/soft-memory-pressure.yaml");
    assertThat(r.code()).isZero();
    assertThat(r.out())
        .contains(
            "step 1  t=0s",
            "step 3  t=40s",
            "conditions  MemoryPressure",
            "acting on   memory.available")
        .contains("1. jobs/batch", "evicted     jobs/batch  grace 20s")
        .contains("result   PASS");
  }

  @Test
  void replayJsonIsMachineReadable() {
    Run r = run("replay", "-o", "json", "fixtures/memory/soft-memory-pressure.yaml");
    assertThat(r.code()).isZero();
    assertThat(r.out())
        .contains(
            "\"result\" : \"PASSED\"", "\"pod\" : \"jobs/batch\"", "\"gracePeriodSeconds\" : 20");
  }

  @Test
  void rulesCheckAcceptsTheDefaultsAndNamesTheLineOfABrokenRule() {
    Run ok = run("rules", "check", "rules");
    assertThat(ok.code()).isZero();
    assertThat(ok.out()).startsWith("ok: rules: 14 files");
    Run bad = run("rules", "check", "src/test/resources/rulesets/syntax-error");
    assertThat(bad.code()).isEqualTo(2);
    assertThat(bad.err())
        .startsWith("evictd: src/test/resources/rulesets/syntax-error/broken.drl:8:4: ");
    assertThat(bad.err().lines()).hasSize(1);
  }

  @Test
  void unknownOptionIsBadInput() {
    Run r = run("test", "--nope", "x");
    assertThat(r.code()).isEqualTo(2);
    assertThat(r.err())
        .isEqualTo("evictd: test: unknown option '--nope'; see 'evictd test --help'\n");
  }

  @Test
  void planRunsOneSyncOnCapturedData(@TempDir Path dir) throws IOException {
    Path kc = dir.resolve("kubelet.yaml");
    Files.writeString(
        kc,
        "apiVersion: kubelet.config.k8s.io/v1beta1\nkind: KubeletConfiguration\nevictionHard: {memory.available: 1Gi}\n");
    Path pods = dir.resolve("pods.yaml");
    Files.writeString(
        pods,
        "apiVersion: v1\nkind: PodList\nitems:\n"
            + "  - metadata: {name: web, namespace: prod, uid: u-web}\n    spec: {priority: 100, containers: [{name: c}]}\n"
            + "  - metadata: {name: batch, namespace: jobs, uid: u-batch}\n    spec: {containers: [{name: c}]}\n");
    Path summary = dir.resolve("summary.json");
    Files.writeString(
        summary,
        "{\"node\": {\"nodeName\": \"worker-7\", \"memory\": {\"availableBytes\": 536870912, \"workingSetBytes\": 7516192768}},"
            + " \"pods\": [{\"podRef\": {\"name\": \"web\", \"namespace\": \"prod\", \"uid\": \"u-web\"}, \"memory\": {\"workingSetBytes\": 104857600}},"
            + " {\"podRef\": {\"name\": \"batch\", \"namespace\": \"jobs\", \"uid\": \"u-batch\"}, \"memory\": {\"workingSetBytes\": 2147483648}}]}");
    Run table =
        run(
            "plan",
            "--config",
            kc.toString(),
            "--pods",
            pods.toString(),
            "--summary",
            summary.toString());
    assertThat(table.code()).as(table.err()).isZero();
    assertThat(table.out())
        .contains("node worker-7", "1. jobs/batch", "evicted     jobs/batch  grace 1s");
    Run json =
        run(
            "plan",
            "-o",
            "json",
            "--config",
            kc.toString(),
            "--pods",
            pods.toString(),
            "--summary",
            summary.toString());
    assertThat(json.out())
        .contains("\"signal\" : \"memory.available\"", "\"pod\" : \"jobs/batch\"");
    Run bad =
        run(
            "plan",
            "--config",
            kc.toString(),
            "--pods",
            summary.toString(),
            "--summary",
            summary.toString());
    assertThat(bad.code()).isEqualTo(2);
    assertThat(bad.err()).startsWith("evictd: " + summary + ":").doesNotContain("Exception");
  }

  @Test
  void explainNamesTheKeysTheRulesAndTheGracePeriod() {
    Run r = run("explain", "fixtures/memory/soft-memory-pressure.yaml");
    assertThat(r.code()).isZero();
    assertThat(r.out())
        .contains("step 3 (t=40s)", "acting on memory.available: soft memory.available < 500Mi")
        .contains("1. jobs/batch  noStats=0 exceedsRequest=1 priority=0 usageAboveRequest=2950Mi")
        .contains(
            "grace period 20s: soft threshold: evictionMaxPodGracePeriod 20s, capped by the pod's terminationGracePeriodSeconds 60s")
        .contains(
            "[decide] \"evict the first pod in rank order that is not exempt\"",
            "matched: ReclaimTarget[");
    Run step1 = run("explain", "--step", "1", "fixtures/memory/soft-memory-pressure.yaml");
    assertThat(step1.out()).contains("no threshold is met: nothing to act on");
    Run bad = run("explain", "--step", "9", "fixtures/memory/soft-memory-pressure.yaml");
    assertThat(bad.code()).isEqualTo(2);
    assertThat(bad.err()).isEqualTo("evictd: --step 9: the fixture has 3 steps\n");
    Run json = run("explain", "-o", "json", "fixtures/memory/soft-memory-pressure.yaml");
    assertThat(json.out()).contains("\"step\" : 3", "\"decisions\"");
  }

  @Test
  void explainShowsWhyExemptPodsWereSkipped() {
    Run r = run("explain", "fixtures/memory/edge-critical-pods-skipped.yaml", "--top", "0");
    assertThat(r.code()).isZero();
    assertThat(r.out()).contains("skipped: static pod", "skipped: mirror pod");
  }

  @Test
  void diffListsWherePoliciesDisagree() {
    Run r =
        run(
            "diff",
            "--rules",
            "fixtures/examples/qos-ranking/rules",
            "--against",
            "default",
            "fixtures/examples/qos-ranking");
    assertThat(r.code()).isEqualTo(1);
    assertThat(r.out())
        .contains(
            "step 1: evicted: [apps/besteffort-small grace 1s] | [apps/burstable-hog grace 1s]")
        .endsWith(
            "2 fixtures compared, 2 differ (fixtures/examples/qos-ranking/rules vs default)\n");
    Run same = run("diff", "--rules", "rules", "--against", "default", "fixtures/pid");
    assertThat(same.code()).isZero();
    assertThat(same.out()).contains("0 differ");
  }

  @Test
  void aChangedEvictionMethodShowsInDiffExplainAndReplay() {
    // the PDB example only changes how pods are evicted in this fixture: without the method it
    // would look the same
    String fixture =
        "fixtures/examples/pdb-aware-soft-evictions/hard-thresholds-and-storage-limits-delete.yaml";
    Run diff =
        run(
            "diff",
            "--rules",
            "fixtures/examples/pdb-aware-soft-evictions/rules",
            "--against",
            "default",
            fixture);
    assertThat(diff.code()).isEqualTo(1);
    assertThat(diff.out())
        .contains(
            "step 2: evicted: [shop/checkout-7b9f4-aaaaa grace 30s method evict] | [shop/checkout-7b9f4-aaaaa grace 30s]")
        .contains(
            "step 3: evicted: [shop/checkout-7b9f4-aaaaa grace 1s method delete] | [shop/checkout-7b9f4-aaaaa grace 1s]")
        .doesNotContain("step 4:");
    Run explain = run("explain", fixture, "--step", "2");
    assertThat(explain.out())
        .contains("evict shop/checkout-7b9f4-aaaaa (pressure, memory.available, method evict)");
    Run explainDefaults = run("explain", "--rules", "rules", fixture, "--step", "2");
    assertThat(explainDefaults.out())
        .contains("evict shop/checkout-7b9f4-aaaaa (pressure, memory.available)\n");
    Run replay = run("replay", fixture);
    assertThat(replay.out())
        .contains("shop/checkout-7b9f4-aaaaa  grace 1s method delete  (memory.available)");
  }

  @Test
  void testWritesJunitXmlAndFilters(@TempDir Path dir) throws IOException {
    Path xml = dir.resolve("report/junit.xml");
    Run r =
        run(
            "test",
            "--filter",
            "pid-pressure\\.yaml$",
            "--junit-xml",
            xml.toString(),
            "fixtures/pid");
    assertThat(r.code()).isZero();
    assertThat(r.out()).endsWith("1 passed, 0 failed\n");
    String report = Files.readString(xml);
    assertThat(report)
        .contains("<testsuite name=\"evictd fixtures\" tests=\"1\" failures=\"0\" errors=\"0\"");
    assertThat(report).contains("<testcase classname=\"fixtures/pid/pid-pressure.yaml\"");
    Files.writeString(
        dir.resolve("f.yaml"), PASSING.replace("gracePeriodSeconds: 1", "gracePeriodSeconds: 30"));
    run("test", "--junit-xml", xml.toString(), dir.toString());
    assertThat(Files.readString(xml))
        .contains(
            "failures=\"1\"",
            "<failure message=\"step 1: evicted[0].gracePeriodSeconds: expected 30, actual 1\">");
  }
}
