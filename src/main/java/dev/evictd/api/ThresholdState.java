package dev.evictd.api;

import java.time.Instant;

/**
 * Planner state kept across syncs for an active threshold: when it was first observed, and whether
 * it was acted on (grace period met) in the last sync, which keeps it in effect until its minimum
 * reclaim is satisfied.
 */
public final class ThresholdState {
  private final Threshold threshold;
  private Instant firstObservedAt;
  private boolean actedOn;

  public ThresholdState(Threshold threshold, Instant firstObservedAt) {
    this.threshold = threshold;
    this.firstObservedAt = firstObservedAt;
  }

  public Threshold getThreshold() {
    return threshold;
  }

  public Instant getFirstObservedAt() {
    return firstObservedAt;
  }

  public void setFirstObservedAt(Instant firstObservedAt) {
    this.firstObservedAt = firstObservedAt;
  }

  public boolean isActedOn() {
    return actedOn;
  }

  public void setActedOn(boolean actedOn) {
    this.actedOn = actedOn;
  }

  @Override
  public String toString() {
    return "ThresholdState["
        + threshold.id()
        + ", firstObservedAt="
        + firstObservedAt
        + ", actedOn="
        + actedOn
        + "]";
  }
}
