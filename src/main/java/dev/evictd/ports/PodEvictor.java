package dev.evictd.ports;

import dev.evictd.api.EvictionDecision;
import dev.evictd.api.EvictionOutcome;

/**
 * Carries out eviction decisions. Implementations never throw for an expected failure: they return
 * an outcome.
 */
public interface PodEvictor {
  /**
   * Evicts the decision's pod with the decision's grace period and message; returns what happened.
   */
  EvictionOutcome evict(EvictionDecision decision);

  /**
   * The same, with what the server said about it (a disruption budget's explanation); by default
   * {@link #evict} without detail.
   */
  default EvictionResult attempt(EvictionDecision decision) {
    return EvictionResult.of(evict(decision));
  }
}
