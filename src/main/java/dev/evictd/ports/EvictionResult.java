package dev.evictd.ports;

import dev.evictd.api.EvictionOutcome;

/**
 * What one eviction attempt came to, with what the server said about it.
 *
 * @param outcome the outcome
 * @param detail the server's explanation worth keeping (a disruption budget's message), "" when
 *     none
 */
public record EvictionResult(EvictionOutcome outcome, String detail) {
  public EvictionResult {
    if (outcome == null) {
      outcome = EvictionOutcome.FAILED;
    }
    detail = detail == null ? "" : detail;
  }

  /** A result without detail. */
  public static EvictionResult of(EvictionOutcome outcome) {
    return new EvictionResult(outcome, "");
  }
}
