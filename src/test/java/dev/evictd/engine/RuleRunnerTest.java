package dev.evictd.engine;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import org.junit.jupiter.api.Test;

class RuleRunnerTest {
  private static long in(long millis) {
    return System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(millis);
  }

  @Test
  void runsOnOneDedicatedThreadAndReturnsResultsAndFailures() throws Exception {
    try (RuleRunner r = new RuleRunner()) {
      String first = r.run(() -> Thread.currentThread().getName(), in(5000), () -> {});
      assertThat(first).startsWith("evictd-rules-").isNotEqualTo(Thread.currentThread().getName());
      for (int i = 0; i < 1000; i++) { // many short hand-overs, as the syncs of a quiet node
        int k = i;
        assertThat(r.run(() -> k * 2, in(5000), () -> {})).isEqualTo(2 * i);
      }
      assertThat(r.run(() -> Thread.currentThread().getName(), in(5000), () -> {}))
          .isEqualTo(first);
      assertThatThrownBy(
              () ->
                  r.run(
                      () -> {
                        throw new IllegalArgumentException("bad rule");
                      },
                      in(5000),
                      () -> {}))
          .isInstanceOf(IllegalArgumentException.class)
          .hasMessage("bad rule");
      assertThatThrownBy(
              () ->
                  r.run(
                      () -> {
                        throw new StackOverflowError();
                      },
                      in(5000),
                      () -> {}))
          .isInstanceOf(StackOverflowError.class);
      assertThatThrownBy(
              () ->
                  r.run(
                      () -> {
                        throw new java.io.IOException("checked");
                      },
                      in(5000),
                      () -> {}))
          .isInstanceOf(IllegalStateException.class)
          .hasRootCauseMessage("checked");
      assertThat(r.abandoned()).isZero();
    }
  }

  @Test
  void betweenHandOversTheRuleThreadParksWithinItsLinger() throws Exception {
    try (RuleRunner r = new RuleRunner()) {
      for (int round = 0; round < 3; round++) {
        Thread ruleThread = null;
        for (int i = 0; i < 200; i++) { // a burst of hand-overs, as a sync's: it may linger after
          ruleThread = r.run(Thread::currentThread, in(5000), () -> {});
        }
        // an agent that syncs every 10 s must not spin between syncs: the rule thread parks
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(5);
        while (ruleThread.getState() != Thread.State.WAITING && System.nanoTime() < deadline) {
          Thread.sleep(1);
        }
        assertThat(ruleThread.getState()).isEqualTo(Thread.State.WAITING);
        for (int i = 0; i < 20; i++) { // and stays parked while no work comes
          Thread.sleep(5);
          assertThat(ruleThread.getState()).isEqualTo(Thread.State.WAITING);
        }
      }
    }
  }

  @Test
  void workThatStopsWhenAskedIsNotAbandoned() throws Exception {
    try (RuleRunner r = new RuleRunner()) {
      AtomicBoolean stop = new AtomicBoolean();
      String thread = r.run(() -> Thread.currentThread().getName(), in(5000), () -> {});
      assertThatThrownBy(
              () ->
                  r.run(
                      () -> {
                        while (!stop.get()) {
                          Thread.onSpinWait();
                        }
                        return null;
                      },
                      in(50),
                      () -> stop.set(true)))
          .isInstanceOfSatisfying(RuleRunner.Overrun.class, o -> assertThat(o.stuck()).isFalse());
      assertThat(r.abandoned()).isZero();
      assertThat(r.run(() -> Thread.currentThread().getName(), in(5000), () -> {}))
          .as("the same thread carries on")
          .isEqualTo(thread);
    }
  }

  @Test
  void workThatDoesNotStopIsAbandonedAndANewThreadTakesOver() throws Exception {
    CountDownLatch release = new CountDownLatch(1);
    try (RuleRunner r = new RuleRunner()) {
      String thread = r.run(() -> Thread.currentThread().getName(), in(5000), () -> {});
      long t0 = System.nanoTime();
      assertThatThrownBy(
              () ->
                  r.run(
                      () -> {
                        while (release.getCount() > 0) { // ignores interrupts, as a stuck rule does
                          Thread.onSpinWait();
                        }
                        return null;
                      },
                      in(50),
                      () -> {}))
          .isInstanceOfSatisfying(RuleRunner.Overrun.class, o -> assertThat(o.stuck()).isTrue());
      long tookMillis = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - t0);
      assertThat(tookMillis).isLessThan(50 + RuleRunner.GRACE_MILLIS + 2000);
      assertThat(r.abandoned()).isEqualTo(1);
      String next = r.run(() -> Thread.currentThread().getName(), in(5000), () -> {});
      assertThat(next).startsWith("evictd-rules-").isNotEqualTo(thread);
    } finally {
      release.countDown();
    }
  }

  @Test
  void anInterruptedCallerAbandonsTheWorkAndKeepsItsInterrupt() throws Exception {
    CountDownLatch release = new CountDownLatch(1);
    try (RuleRunner r = new RuleRunner()) {
      Thread.currentThread().interrupt();
      try {
        assertThatThrownBy(
                () ->
                    r.run(
                        () -> {
                          release.await();
                          return null;
                        },
                        in(5000),
                        () -> {}))
            .isInstanceOfSatisfying(RuleRunner.Overrun.class, o -> assertThat(o.stuck()).isTrue());
        assertThat(Thread.currentThread().isInterrupted()).isTrue();
      } finally {
        Thread.interrupted();
      }
      assertThat(r.abandoned()).isEqualTo(1);
      assertThat(r.run(() -> 42, in(5000), () -> {})).isEqualTo(42);
    } finally {
      release.countDown();
    }
  }
}
