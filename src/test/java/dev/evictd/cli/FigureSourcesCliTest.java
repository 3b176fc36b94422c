package dev.evictd.cli;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@code explain}, {@code replay} and {@code --output json} say where each figure the decision used
 * came from and how old it was at the sync: a fixture's figures are its Summary's, their age the
 * step's time minus the stat's {@code time}.
 */
class FigureSourcesCliTest {
  // the fixture clock starts at 2026-01-01T00:00:00Z; the step syncs at 00:00:10
  static final String FIXTURE =
      "kubeletConfig: {evictionHard: {memory.available: 1Gi}}\n"
          + "pods:\n  - metadata: {name: a}\n  - metadata: {name: b}\n"
          + "steps:\n"
          + "  - advance: 10s\n"
          + "    summary:\n"
          + "      node:\n"
          + "        memory: {time: '2026-01-01T00:00:01.8Z', availableBytes: 500Mi,"
          + " workingSetBytes: 4Gi}\n"
          + "        fs: {time: '2026-01-01T00:00:09.997Z', availableBytes: 40Gi,"
          + " capacityBytes: 100Gi}\n"
          + "      pods:\n"
          + "        - {podRef: {name: a, namespace: default, uid: default/a},"
          + " memory: {workingSetBytes: 1Gi}}\n"
          + "        - {podRef: {name: b, namespace: default, uid: default/b},"
          + " memory: {workingSetBytes: 2Gi}}\n"
          + "    expect: {evicted: [{pod: default/b}]}\n";

  @Test
  void explainAndThePlanSayTheSourceAndAgeOfEachFigure(@TempDir Path dir) throws IOException {
    Path f = dir.resolve("ages.yaml");
    Files.writeString(f, FIXTURE);
    CliTest.Run explain = CliTest.run("explain", f.toString());
    assertThat(explain.code()).as(explain.err()).isZero();
    assertThat(explain.out())
        .contains("  figures (source, age at the sync):")
        .contains("    memory.available 500Mi (summary, 8.2 s old)")
        .contains("    nodefs.available 40Gi (summary, 3 ms old)")
        .contains("ranking for memory.available (2 pods, their figures from summary;");
    CliTest.Run replay = CliTest.run("replay", f.toString());
    assertThat(replay.code()).as(replay.err()).isZero();
    assertThat(replay.out())
        .contains("memory.available 500Mi of 4596Mi (summary, 8.2 s old)")
        .contains("nodefs.available 40Gi of 100Gi (summary, 3 ms old)");
    CliTest.Run json = CliTest.run("explain", "--output", "json", f.toString());
    assertThat(json.code()).as(json.err()).isZero();
    assertThat(json.out().replaceAll("\\s", ""))
        .contains("\"signal\":\"memory.available\"")
        .contains("\"ageMillis\":8200,\"source\":\"summary\"")
        .contains("\"ageMillis\":3,\"source\":\"summary\"");
  }
}
