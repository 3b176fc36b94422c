package dev.evictd.cli;

import static org.assertj.core.api.Assertions.assertThat;

import dev.evictd.testing.Fixtures;
import dev.evictd.testing.TestCgroup;
import java.io.PrintWriter;
import java.io.StringWriter;
import java.nio.file.Files;
import java.nio.file.Path;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import tools.jackson.databind.JsonNode;
import tools.jackson.databind.json.JsonMapper;

class HostCommandsTest {
  private record Run(int code, String out, String err) {}

  private static Run run(String... args) {
    StringWriter out = new StringWriter();
    StringWriter err = new StringWriter();
    int code = Main.execute(args, new PrintWriter(out, true), new PrintWriter(err, true));
    return new Run(code, out.toString(), err.toString());
  }

  private static String[] fixtureArgs(String host, String... more) {
    Path root = Fixtures.resource("hosts/" + host);
    String[] base = {
      "--cgroup-root", root.resolve("cgroup").toString(),
      "--proc-root", root.resolve("proc").toString(),
      "--kubelet-root-dir", root.toString(),
      "--runtime-root", root.toString()
    };
    String[] all = new String[more.length + base.length];
    System.arraycopy(more, 0, all, 0, more.length);
    System.arraycopy(base, 0, all, more.length, base.length);
    return all;
  }

  @Test
  void statsPrintsTheHostSummaryAsJson() {
    Run r = run(fixtureArgs("v1", "stats", "-o", "json"));
    assertThat(r.code()).as(r.err()).isZero();
    JsonNode n = JsonMapper.builder().build().readTree(r.out());
    assertThat(n.at("/node/nodeName").asString()).isEqualTo("fixture-v1");
    assertThat(n.at("/node/memory/availableBytes").asLong()).isEqualTo(10L << 30);
    assertThat(n.at("/node/memory/workingSetBytes").asLong()).isEqualTo(6L << 30);
    assertThat(n.at("/node/systemContainers/0/name").asString()).isEqualTo("pods");
    assertThat(n.at("/node/rlimit/maxpid").asLong()).isEqualTo(4194304);
    assertThat(n.at("/node/fs/capacityBytes").asLong()).isPositive();
    assertThat(n.at("/pods").size()).isEqualTo(3);
  }

  @Test
  void statsTablePrintsOneLinePerObservedSignal() {
    Run r = run(fixtureArgs("v2", "stats"));
    assertThat(r.code()).as(r.err()).isZero();
    assertThat(r.out())
        .contains("node     fixture-v2")
        .containsPattern("(?m)^memory.available +available 4Gi +of 8Gi$")
        .containsPattern("(?m)^allocatableMemory.available +available 6656Mi +of 8192Mi$")
        .containsPattern("(?m)^pid.available +available 32518 +of 32768$");
    // one unit per line: never a quantity beside a plain byte count
    assertThat(r.out().lines().filter(l -> l.contains(" available ")))
        .allMatch(l -> l.matches("\\S+ +available (\\d+)(\\w*) +of \\d+\\2"), "one unit per line");
  }

  @Test
  void anUnknownOutputFormatIsBadInput() {
    Run r = run("stats", "-o", "yaml");
    assertThat(r.code()).isEqualTo(Main.BAD_INPUT);
    assertThat(r.err().trim())
        .isEqualTo("evictd: --output: unknown output format \"yaml\" (table or json)");
  }

  @Test
  void doctorOnACgroupV2TreeReportsTheV2EventSourcesInsteadOfAMemcgWarning() {
    Path cg = Fixtures.resource("hosts/v2/cgroup");
    Run r = run(fixtureArgs("v2", "doctor"));
    assertThat(r.out()).doesNotContain("memcg-notifier");
    // a fixture tree is no kernel: the PSI triggers are refused there, the rest is found
    assertThat(check(r, "event-sources"))
        .startsWith("warn")
        .contains("cgroup v2 (no memcg thresholds): ")
        .contains(
            "PSI trigger refused on "
                + cg.resolve("memory.pressure")
                + ": "
                + cg.resolve("memory.pressure")
                + " is not a kernel pressure file")
        .contains("PSI trigger refused on " + cg.resolve("kubepods.slice/memory.pressure"))
        .contains(cg.resolve("kubepods.slice/memory.events") + " readable (high 7, max 0, oom 0)")
        .contains(
            "adaptive poll on (default): reads "
                + cg.resolve("memory.stat")
                + " and "
                + cg.resolve("kubepods.slice/memory.current"));
  }

  @Test
  @Tag("cgroup-v1")
  void doctorOnThisHostReportsTheMemcgNotifierAndPsiOk() {
    TestCgroup.assumeRootWithCgroupV1();
    Run r = run("doctor");
    assertThat(r.code()).as(r.out() + r.err()).isZero();
    assertThat(r.out())
        .containsPattern("(?m)^ok +cgroup +cgroup v1, memory controller at /sys/fs/cgroup/memory$");
    assertThat(r.out())
        .containsPattern("(?m)^ok +memcg-notifier +threshold on evictd-doctor-\\S+ crossed up");
    assertThat(r.out()).containsPattern("(?m)^ok +psi +/proc/pressure/memory readable");
    assertThat(r.out().lines()).allMatch(l -> l.matches("^(ok|warn|fail) +\\S.*"));
  }

  private static String check(Run r, String name) {
    return r.out()
        .lines()
        .filter(l -> l.matches("^(ok|warn|fail) +" + java.util.regex.Pattern.quote(name) + " .*"))
        .findFirst()
        .orElseThrow(() -> new AssertionError("no " + name + " line in:\n" + r.out()));
  }

  @Test
  void statsAndDoctorFindEveryPodWithPodsCgroupKubepodsSliceOnASystemdDriverTree() {
    Run stats = run(fixtureArgs("v2", "stats", "-o", "json", "--pods-cgroup", "kubepods.slice"));
    assertThat(stats.code()).as(stats.err()).isZero();
    JsonNode n = JsonMapper.builder().build().readTree(stats.out());
    assertThat(n.at("/pods").size()).isEqualTo(3);
    Run doctor = run(fixtureArgs("v2", "doctor", "--pods-cgroup", "kubepods.slice"));
    assertThat(check(doctor, "pods-cgroup"))
        .matches("^ok +pods-cgroup +\\S+kubepods\\.slice \\(systemd driver, 3 pod cgroups\\)$");
  }

  @Test
  void aPodsCgroupThatCannotBeOneIsRefusedInOneLine() {
    Run r = run(fixtureArgs("v2", "stats", "--pods-cgroup", "../kubepods"));
    assertThat(r.code()).isEqualTo(Main.BAD_INPUT);
    assertThat(r.err().trim())
        .isEqualTo("evictd: --pods-cgroup ../kubepods: \"..\" is not a cgroup name");
    Run d = run(fixtureArgs("v2", "doctor", "--pods-cgroup", "../kubepods"));
    assertThat(d.code()).isEqualTo(Main.FAILED);
    assertThat(check(d, "pods-cgroup")).startsWith("fail");
  }

  @Test
  void doctorWarnsAboutRunningPodsTheListHasWithoutACgroup(@TempDir Path tmp) throws Exception {
    Path pods = tmp.resolve("pods.yaml");
    StringBuilder y = new StringBuilder("kind: PodList\nitems:\n");
    String[][] list = {
      {"web", "dddddddd-1111-2222-3333-444444444444", "Running"},
      {"api", "eeeeeeee-5555-6666-7777-888888888888", "Running"},
      {"batch", "ffffffff-9999-aaaa-bbbb-cccccccccccc", "Running"},
      {"ghost", "99999999-0000-0000-0000-000000000000", "Running"},
      {"done", "88888888-0000-0000-0000-000000000000", "Succeeded"}
    };
    for (String[] p : list) {
      y.append("- metadata: {namespace: default, name: ")
          .append(p[0])
          .append(", uid: ")
          .append(p[1])
          .append("}\n  status: {phase: ")
          .append(p[2])
          .append("}\n");
    }
    Files.writeString(pods, y);
    Run r = run(fixtureArgs("v2", "doctor", "--pods", pods.toString()));
    assertThat(check(r, "pod-cgroups"))
        .startsWith("warn")
        .contains("1 of 4 running pods listed have no cgroup under")
        .contains("default/ghost (uid 99999999-0000-0000-0000-000000000000)")
        .doesNotContain("done");
    Files.writeString(
        pods, y.toString().replace("99999999-0000-0000-0000-000000000000", list[0][1]));
    Run ok = run(fixtureArgs("v2", "doctor", "--pods", pods.toString()));
    assertThat(check(ok, "pod-cgroups")).startsWith("ok");
  }
}
