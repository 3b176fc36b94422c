package dev.evictd.engine;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.Test;

/**
 * Rule work inline on sync threads under a {@link Watchdog}: no wake-up per job, the allocation
 * budget and the deadline still enforced, a stuck thread abandoned and its loop carried on by a new
 * thread, and an abandoned thread that comes back doing nothing more.
 */
class SyncThreadTest {
  private static final long HOUR = TimeUnit.HOURS.toNanos(1);

  private static long in(long millis) {
    return System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(millis);
  }

  /** Runs {@code body} once on a sync thread of its own loop, and waits for what it returns. */
  private static <T> T onSyncThread(Watchdog w, java.util.concurrent.Callable<T> body)
      throws Exception {
    CompletableFuture<T> f = new CompletableFuture<>();
    SyncThread.startLoop(
        "test-sync",
        () -> {
          try {
            f.complete(body.call());
          } catch (Throwable t) {
            f.completeExceptionally(t);
          }
        },
        w);
    return f.get(60, TimeUnit.SECONDS);
  }

  @Test
  void steadyJobsRunInlineAndNeverWakeTheWatchdog() throws Exception {
    Watchdog w = new Watchdog(HOUR); // looks only when woken: any wake-up would show
    RuleRunner r = new RuleRunner();
    String caller =
        onSyncThread(
            w,
            () -> {
              String me = Thread.currentThread().getName();
              for (int i = 0; i < 1000; i++) {
                String ran =
                    r.run(
                        () -> Thread.currentThread().getName(),
                        in(HOUR / 1_000_000),
                        0,
                        () -> {},
                        o -> {});
                assertThat(ran).isEqualTo(me);
              }
              return me;
            });
    assertThat(caller).startsWith("test-sync-");
    assertThat(w.unparks()).as("syncs never unpark the watchdog").isZero();
    assertThat(w.wakeUps()).as("nor does anything else wake it").isZero();
    assertThat(r.abandoned()).isZero();
    w.close();
  }

  @Test
  void theAllocationBudgetIsEnforcedInline() throws Exception {
    Watchdog w = new Watchdog(TimeUnit.MILLISECONDS.toNanos(1));
    RuleRunner r = new RuleRunner();
    AtomicBoolean stopped = new AtomicBoolean();
    long limit = 4L << 20;
    Throwable thrown =
        onSyncThread(
            w,
            () -> {
              try {
                r.run(
                    () -> {
                      List<byte[]> kept = new ArrayList<>();
                      while (!stopped.get()) { // allocates until the watchdog stops it
                        kept.add(new byte[1024]);
                        if (kept.size() > 1024) {
                          kept.clear();
                        }
                      }
                      return null;
                    },
                    in(60_000),
                    limit,
                    () -> stopped.set(true),
                    o -> {});
                return null;
              } catch (RuleRunner.Overrun o) {
                return o;
              }
            });
    assertThat(thrown).isInstanceOf(RuleRunner.Overrun.class);
    RuleRunner.Overrun o = (RuleRunner.Overrun) thrown;
    assertThat(o.stuck()).isFalse();
    assertThat(o.allocated()).isGreaterThan(limit);
    assertThat(r.lastAllocated()).isGreaterThan(limit);
    assertThat(r.abandoned()).isZero();
    w.close();
  }

  @Test
  void workPastItsDeadlineIsStoppedAndComesBack() throws Exception {
    Watchdog w = new Watchdog(TimeUnit.MILLISECONDS.toNanos(1));
    RuleRunner r = new RuleRunner();
    AtomicBoolean stopped = new AtomicBoolean();
    Object outcome =
        onSyncThread(
            w,
            () -> {
              try {
                return r.run(
                    () -> {
                      while (!stopped.get()) {
                        Thread.onSpinWait();
                      }
                      return "finished";
                    },
                    in(20),
                    0,
                    () -> stopped.set(true),
                    o -> {});
              } catch (RuleRunner.Overrun o) {
                return o;
              }
            });
    assertThat(outcome).isInstanceOf(RuleRunner.Overrun.class);
    assertThat(((RuleRunner.Overrun) outcome).stuck()).isFalse();
    assertThat(r.abandoned()).isZero();
    w.close();
  }

  @Test
  void aStuckThreadIsAbandonedANewOneCarriesOnAndTheOldOneNeverActs() throws Exception {
    Watchdog w = new Watchdog(TimeUnit.MILLISECONDS.toNanos(1));
    RuleRunner r = new RuleRunner();
    SyncLock lock = new SyncLock();
    CountDownLatch release = new CountDownLatch(1);
    AtomicInteger runs = new AtomicInteger();
    AtomicBoolean oldActed = new AtomicBoolean();
    AtomicReference<RuleRunner.Overrun> reported = new AtomicReference<>();
    AtomicReference<Thread> stuckThread = new AtomicReference<>();
    CompletableFuture<String> next = new CompletableFuture<>();
    SyncThread.Loop loop =
        SyncThread.startLoop(
            "test-sync",
            () ->
                lock.run(
                    () -> {
                      try {
                        if (runs.incrementAndGet() == 1) {
                          stuckThread.set(Thread.currentThread());
                          r.run(
                              () -> {
                                while (release.getCount() > 0) { // ignores stop and interrupts
                                  Thread.onSpinWait();
                                }
                                return null;
                              },
                              in(20),
                              0,
                              () -> {},
                              reported::set);
                          oldActed.set(true); // what a plan's evictions would be
                        } else {
                          // the loop again, on a new thread that took the lock over
                          next.complete(r.run(() -> "decided", in(60_000), 0, () -> {}, o -> {}));
                        }
                      } catch (RuleRunner.Overrun o) {
                        oldActed.set(true); // the abandoned thread must not see an overrun
                      }
                    }),
            w);
    assertThat(next.get(60, TimeUnit.SECONDS)).isEqualTo("decided");
    assertThat(loop.replacements()).isEqualTo(1);
    assertThat(loop.current()).isNotSameAs(stuckThread.get());
    assertThat(reported.get()).isNotNull();
    assertThat(reported.get().stuck()).isTrue();
    assertThat(r.abandoned()).isEqualTo(1);
    assertThat(r.aliveAbandoned()).isEqualTo(1);

    release.countDown(); // the stuck work comes back
    stuckThread.get().join(TimeUnit.SECONDS.toMillis(60));
    assertThat(stuckThread.get().isAlive()).isFalse();
    assertThat(oldActed.get()).as("the abandoned thread did nothing more").isFalse();
    assertThat(r.aliveAbandoned()).isZero();
    assertThat(runs.get()).isEqualTo(2);
    w.close();
  }
}
