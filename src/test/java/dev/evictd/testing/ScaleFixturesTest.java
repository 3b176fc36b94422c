package dev.evictd.testing;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * The committed scale fixtures are exactly what the generator writes (the suite runs them with the
 * others).
 */
class ScaleFixturesTest {
  @Test
  void committedScaleFixturesAreUpToDate() throws IOException {
    assertThat(Files.readString(Path.of("fixtures/scale/memory-5000-pods.yaml")))
        .isEqualTo(ScaleFixtures.memory(5000));
    assertThat(Files.readString(Path.of("fixtures/scale/disk-5000-pods.yaml")))
        .isEqualTo(ScaleFixtures.disk(5000));
  }

  @Test
  void memoryRankingFollowsTheKubeletOrder() {
    List<ScaleFixtures.GenPod> pods =
        List.of(
            new ScaleFixtures.GenPod(0, "within", 0, 100, 50, 0),
            new ScaleFixtures.GenPod(1, "exceeds-high", 1000, 10, 500, 0),
            new ScaleFixtures.GenPod(2, "exceeds-low-small", 0, 10, 20, 0),
            new ScaleFixtures.GenPod(3, "exceeds-low-big", 0, 10, 400, 0));
    assertThat(ScaleFixtures.memoryRanking(pods))
        .extracting(ScaleFixtures.GenPod::name)
        .containsExactly("exceeds-low-big", "exceeds-low-small", "exceeds-high", "within");
  }
}
