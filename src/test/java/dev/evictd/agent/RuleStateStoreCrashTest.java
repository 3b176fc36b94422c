package dev.evictd.agent;

import static org.assertj.core.api.Assertions.assertThat;

import dev.evictd.engine.RuleSource;
import dev.evictd.ruleset.RuleCompiler;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * A rule set that was running when the process ended without stopping is not trusted again after
 * the restart (issue 48): bad when it was on probation, on probation again when it was trusted.
 */
class RuleStateStoreCrashTest {
  private static final List<RuleSource> SOURCES =
      List.of(new RuleSource("a.drl", "a.drl", "package dev.evictd.rules;\n"));
  private static final String SHA = RuleCompiler.sha256(SOURCES);

  @Test
  void aSetOnProbationWhenTheProcessDiedIsBadAfterTheRestart(@TempDir Path dir) {
    new RuleStateStore(dir).running(SHA, true);
    // no clean stop: the process died
    RuleStateStore restarted = new RuleStateStore(dir);
    assertThat(restarted.bad(SHA)).isNotNull();
    assertThat(restarted.bad(SHA).reason()).contains("ended without stopping");
    assertThat(dir.resolve(RuleStateStore.RUNNING_FILE)).doesNotExist();
  }

  @Test
  void aTrustedSetRunningWhenTheProcessDiedIsNoLongerTrusted(@TempDir Path dir) {
    RuleStateStore store = new RuleStateStore(dir);
    store.saveLastGood(SHA, SOURCES);
    store.running(SHA, false);
    RuleStateStore restarted = new RuleStateStore(dir);
    assertThat(restarted.lastGood()).isNull();
    assertThat(restarted.bad(SHA)).isNull();
    // on probation again: dying once more makes it bad
    restarted.running(SHA, true);
    assertThat(new RuleStateStore(dir).bad(SHA)).isNotNull();
  }

  @Test
  void aCleanStopLeavesNothingBehind(@TempDir Path dir) {
    RuleStateStore store = new RuleStateStore(dir);
    store.saveLastGood(SHA, SOURCES);
    store.running(SHA, false);
    assertThat(Files.exists(dir.resolve(RuleStateStore.RUNNING_FILE))).isTrue();
    store.stoppedCleanly();
    RuleStateStore restarted = new RuleStateStore(dir);
    assertThat(restarted.lastGood()).isNotNull();
    assertThat(restarted.bad(SHA)).isNull();
  }
}
