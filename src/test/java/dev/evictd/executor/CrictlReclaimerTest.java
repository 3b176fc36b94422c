package dev.evictd.executor;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.evictd.api.ConfigException;
import dev.evictd.api.ReclaimAction;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.time.Duration;
import java.util.List;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class CrictlReclaimerTest {
  private static final Duration TIMEOUT = Duration.ofSeconds(20);

  // A stand-in for crictl: records its arguments; "ps" prints the ids in ./exited;
  // ./fail-SUBCOMMAND holds an exit
  // code to fail with; ./sleep-SUBCOMMAND holds seconds to hang for.
  private static final String FAKE_CRICTL =
      """
      #!/bin/sh
      dir=$(dirname "$0")
      echo "$*" >> "$dir/calls"
      if [ -f "$dir/sleep-$1" ]; then sleep "$(cat "$dir/sleep-$1")"; fi
      if [ -f "$dir/fail-$1" ]; then echo "crictl: $1 went wrong" >&2; exit "$(cat "$dir/fail-$1")"; fi
      if [ "$1" = ps ] && [ -f "$dir/exited" ]; then cat "$dir/exited"; fi
      exit 0
      """;

  @TempDir Path dir;
  private Path crictl;

  @BeforeEach
  void setUp() throws IOException {
    crictl = dir.resolve("crictl");
    Files.writeString(crictl, FAKE_CRICTL);
    Files.setPosixFilePermissions(crictl, PosixFilePermissions.fromString("rwxr-xr-x"));
  }

  private List<String> calls() throws IOException {
    Path calls = dir.resolve("calls");
    return Files.exists(calls) ? Files.readAllLines(calls) : List.of();
  }

  private CrictlReclaimer reclaimer(Duration timeout) {
    return new CrictlReclaimer(crictl.toString(), List.of(), timeout);
  }

  @Test
  void removesExitedContainers() throws IOException {
    Files.writeString(dir.resolve("exited"), "aaa111\nbbb222\n\n");
    assertThat(reclaimer(TIMEOUT).reclaim(ReclaimAction.CONTAINERS)).isTrue();
    assertThat(calls()).containsExactly("ps -a --state exited -q", "rm aaa111 bbb222");
  }

  @Test
  void noExitedContainersIsSuccessWithoutRm() throws IOException {
    assertThat(reclaimer(TIMEOUT).reclaim(ReclaimAction.CONTAINERS)).isTrue();
    assertThat(calls()).containsExactly("ps -a --state exited -q");
  }

  @Test
  void prunesUnusedImages() throws IOException {
    assertThat(reclaimer(TIMEOUT).reclaim(ReclaimAction.IMAGES)).isTrue();
    assertThat(calls()).containsExactly("rmi --prune");
  }

  @Test
  void passesGlobalArguments() throws IOException {
    var r =
        new CrictlReclaimer(
            crictl.toString(), List.of("--runtime-endpoint", "unix:///run/x.sock"), TIMEOUT);
    assertThat(r.reclaim(ReclaimAction.IMAGES)).isTrue();
    assertThat(calls()).containsExactly("--runtime-endpoint unix:///run/x.sock rmi --prune");
  }

  @Test
  void aFailingCommandIsFalse() throws IOException {
    Files.writeString(dir.resolve("fail-rmi"), "3");
    assertThat(reclaimer(TIMEOUT).reclaim(ReclaimAction.IMAGES)).isFalse();

    Files.writeString(dir.resolve("exited"), "aaa111\n");
    Files.writeString(dir.resolve("fail-rm"), "1");
    assertThat(reclaimer(TIMEOUT).reclaim(ReclaimAction.CONTAINERS)).isFalse();

    Files.writeString(dir.resolve("fail-ps"), "1");
    assertThat(reclaimer(TIMEOUT).reclaim(ReclaimAction.CONTAINERS)).isFalse();
    // a failed listing removes nothing
    assertThat(calls()).endsWith("ps -a --state exited -q");
  }

  @Test
  void aHangingCommandIsKilledAfterTheTimeout() throws IOException {
    Files.writeString(dir.resolve("sleep-rmi"), "30");
    long t0 = System.nanoTime();
    assertThat(reclaimer(Duration.ofMillis(300)).reclaim(ReclaimAction.IMAGES)).isFalse();
    assertThat(Duration.ofNanos(System.nanoTime() - t0)).isLessThan(Duration.ofSeconds(10));
  }

  @Test
  void aMissingCommandIsFalse() {
    var r = new CrictlReclaimer(dir.resolve("no-such-crictl").toString(), List.of(), TIMEOUT);
    assertThat(r.reclaim(ReclaimAction.IMAGES)).isFalse();
  }

  @Test
  void refusesBadSettings() {
    assertThatThrownBy(() -> new CrictlReclaimer(" ", List.of(), TIMEOUT))
        .isInstanceOf(ConfigException.class);
    assertThatThrownBy(() -> new CrictlReclaimer("crictl", List.of(), Duration.ZERO))
        .isInstanceOf(ConfigException.class);
  }
}
