package dev.evictd.ruleset;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The model-build child shares the agent's container and its memory limit: it must be the process
 * the kernel kills first when that limit is reached, not the agent.
 */
class ModelBuildOomScoreTest {

  @Test
  void theRealChildRaisesItsOwnOutOfMemoryScoreBeforeReadingItsRequest(@TempDir Path work)
      throws Exception {
    // the request is a FIFO nobody writes yet: the child blocks on it, alive, after its first step
    Process mkfifo =
        new ProcessBuilder("mkfifo", work.resolve(ModelBuild.REQUEST).toString()).start();
    assertThat(mkfifo.waitFor(10, TimeUnit.SECONDS)).isTrue();
    assertThat(mkfifo.exitValue()).isZero();
    Path parentScore = Path.of("/proc/self/oom_score_adj");
    assertThat(Files.readString(parentScore).strip()).isNotEqualTo("1000");

    Process child =
        new ProcessBuilder(ModelBuildChild.childCommand(work))
            .redirectErrorStream(true)
            .redirectOutput(work.resolve("log").toFile())
            .start();
    try {
      Path score = Path.of("/proc", Long.toString(child.pid()), "oom_score_adj");
      String seen = "";
      long until = System.nanoTime() + TimeUnit.SECONDS.toNanos(60);
      while (child.isAlive() && System.nanoTime() < until) {
        seen = Files.readString(score, StandardCharsets.US_ASCII).strip();
        if (seen.equals("1000")) {
          break;
        }
        Thread.sleep(20);
      }
      assertThat(seen)
          .as("the child's oom_score_adj (its log: %s)", Files.readString(work.resolve("log")))
          .isEqualTo("1000");
      // the parent's own score is untouched
      assertThat(Files.readString(parentScore).strip()).isNotEqualTo("1000");
    } finally {
      child.destroyForcibly();
      assertThat(child.waitFor(10, TimeUnit.SECONDS)).isTrue();
    }
  }

  @Test
  void whereTheScoreCannotBeWrittenTheChildCarriesOn(@TempDir Path dir) throws Exception {
    assertThat(ModelBuild.volunteerForOomKill(dir.resolve("no/such/oom_score_adj"))).isFalse();
    Path file = dir.resolve("oom_score_adj");
    assertThat(ModelBuild.volunteerForOomKill(file)).isTrue();
    assertThat(Files.readString(file)).isEqualTo("1000");
  }
}
