package dev.evictd.agent;

import dev.evictd.api.EvictionOutcome;
import dev.evictd.ports.PodSource;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.function.BooleanSupplier;
import java.util.function.Consumer;
import java.util.stream.Collectors;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/** The sync loop's wait for evicted pods to leave the node after a sync that evicted. */
final class EvictedPodsWait {
  private static final Logger LOG = LoggerFactory.getLogger(EvictionManager.class);

  private EvictedPodsWait() {}

  /** The sync loop's next trigger. */
  @FunctionalInterface
  interface Next {
    /** The next trigger within {@code millis}, or null. */
    EvictionManager.Trigger within(long millis) throws InterruptedException;
  }

  /**
   * Waits (up to the pod cleanup timeout) for evicted pods to leave the node, as the kubelet does;
   * an urgent trigger ends the wait at once and is kept for the next sync.
   */
  static void waitFor(
      EvictionManager.SyncResult r,
      Next next,
      Consumer<EvictionManager.Trigger> putBack,
      PodSource pods,
      Clock clock,
      Duration timeout,
      BooleanSupplier running,
      Runnable beat)
      throws InterruptedException {
    // an eviction whose outcome is unknown is waited for like any other: it may free the node
    List<String> uids =
        r.attempts().stream()
            .filter(
                a ->
                    a.outcome() == EvictionOutcome.EVICTED
                        || a.outcome() == EvictionOutcome.UNKNOWN)
            .map(a -> a.pod().uid())
            .toList();
    if (uids.isEmpty()) {
      return;
    }
    Instant deadline = clock.instant().plus(timeout);
    // a trigger that does not end the wait (a rule swap, a downward crossing) is handed back when
    // the wait ends, so that its sync follows then instead of at the next interval
    EvictionManager.Trigger deferred = null;
    try {
      while (running.getAsBoolean() && clock.instant().isBefore(deadline)) {
        beat.run();
        boolean allGone = true;
        for (String uid : uids) {
          try {
            if (!pods.isGone(uid)) {
              allGone = false;
              break;
            }
          } catch (RuntimeException e) {
            allGone = false;
          }
        }
        if (allGone) {
          LOG.info(
              "evicted pods cleaned up: {}",
              r.attempts().stream().map(a -> a.pod().key()).collect(Collectors.joining(", ")));
          return;
        }
        EvictionManager.Trigger t = next.within(1000);
        if (t != null && t.urgent()) {
          putBack.accept(t);
          LOG.info("stopped waiting for evicted pods: {}", t.reason());
          return;
        }
        if (t != null && deferred == null) {
          deferred = t;
        }
      }
      LOG.info("timed out waiting for evicted pods to be cleaned up");
    } finally {
      if (deferred != null) {
        putBack.accept(deferred);
      }
    }
  }
}
