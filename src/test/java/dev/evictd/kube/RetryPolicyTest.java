package dev.evictd.kube;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.evictd.api.ConfigException;
import java.time.Duration;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;

class RetryPolicyTest {
  @Test
  void backoffDoublesUpToTheMaximum() {
    var p = new RetryPolicy(5, Duration.ofMillis(100), Duration.ofMillis(350));
    assertThat(p.backoff(1)).isEqualTo(Duration.ofMillis(100));
    assertThat(p.backoff(2)).isEqualTo(Duration.ofMillis(200));
    assertThat(p.backoff(3)).isEqualTo(Duration.ofMillis(350));
    assertThat(p.backoff(30)).isEqualTo(Duration.ofMillis(350));
  }

  @Test
  void retriesOnlyWhatIsRetryableAndAtMostMaxAttempts() {
    var p = new RetryPolicy(3, Duration.ofMillis(1), Duration.ofMillis(1));
    AtomicInteger calls = new AtomicInteger();
    ApiResponse last =
        p.run(
            "x",
            () -> new ApiResponse(500 + calls.incrementAndGet(), "", null),
            ApiResponse::isTransient);
    assertThat(calls).hasValue(3);
    assertThat(last.code()).isEqualTo(503);

    calls.set(0);
    ApiResponse notFound = p.run("x", () -> respond(calls, 404), ApiResponse::isTransient);
    assertThat(notFound.code()).isEqualTo(404);
    assertThat(calls).hasValue(1);
  }

  @Test
  void stopsRetryingWhenInterrupted() {
    var p = new RetryPolicy(5, Duration.ofSeconds(10), Duration.ofSeconds(10));
    AtomicInteger calls = new AtomicInteger();
    Thread.currentThread().interrupt();
    try {
      p.run("x", () -> respond(calls, 500), ApiResponse::isTransient);
      assertThat(Thread.currentThread().isInterrupted()).isTrue();
    } finally {
      Thread.interrupted();
    }
    assertThat(calls).hasValue(1);
  }

  private static ApiResponse respond(AtomicInteger calls, int code) {
    calls.incrementAndGet();
    return new ApiResponse(code, "", null);
  }

  @Test
  void refusesNonsense() {
    assertThatThrownBy(() -> new RetryPolicy(0, Duration.ZERO, Duration.ZERO))
        .isInstanceOf(ConfigException.class);
    assertThatThrownBy(() -> new RetryPolicy(1, Duration.ofMillis(-1), Duration.ZERO))
        .isInstanceOf(ConfigException.class);
  }
}
