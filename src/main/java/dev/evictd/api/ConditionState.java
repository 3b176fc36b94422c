package dev.evictd.api;

import java.time.Instant;

/**
 * Planner state kept across syncs: the last time a node condition's thresholds were observed
 * active.
 */
public final class ConditionState {
  private final NodeConditionType type;
  private Instant lastObservedAt;

  public ConditionState(NodeConditionType type, Instant lastObservedAt) {
    this.type = type;
    this.lastObservedAt = lastObservedAt;
  }

  public NodeConditionType getType() {
    return type;
  }

  public Instant getLastObservedAt() {
    return lastObservedAt;
  }

  public void setLastObservedAt(Instant lastObservedAt) {
    this.lastObservedAt = lastObservedAt;
  }

  @Override
  public String toString() {
    return "ConditionState[" + type + ", lastObservedAt=" + lastObservedAt + "]";
  }
}
