package dev.evictd.engine;

import java.time.Duration;

/**
 * What one sync may spend on rules: rule firings (a base plus an allowance per pod) and wall-clock
 * time. A sync past either fails, naming the rule.
 *
 * @param firings rule firings allowed per sync on top of the per-pod allowance
 * @param firingsPerPod rule firings allowed per active pod
 * @param time wall-clock time the rules may run in one sync (also the limit when facts are loaded
 *     into a session)
 */
public record SyncBudget(long firings, long firingsPerPod, Duration time) {
  /**
   * The default: 200000 firings plus 50 per pod, 10 seconds (the kubelet's housekeeping interval).
   */
  public static final SyncBudget DEFAULT = new SyncBudget(200_000, 50, Duration.ofSeconds(10));

  public SyncBudget {
    if (firings < 0 || firingsPerPod < 0) {
      throw new IllegalArgumentException("firing budgets must not be negative");
    }
    if (time.isNegative() || time.isZero()) {
      throw new IllegalArgumentException("the time budget must be positive");
    }
  }

  /** The firings allowed for a sync of {@code pods} pods. */
  public long firingsFor(int pods) {
    return firings + firingsPerPod * pods;
  }

  /** This budget with another firing base. */
  public SyncBudget withFirings(long base) {
    return new SyncBudget(base, firingsPerPod, time);
  }

  /** This budget with another time limit. */
  public SyncBudget withTime(Duration limit) {
    return new SyncBudget(firings, firingsPerPod, limit);
  }
}
