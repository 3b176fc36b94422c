package dev.evictd.executor;

import dev.evictd.api.EvictionDecision;
import dev.evictd.api.EvictionOutcome;
import dev.evictd.ports.PodEvictor;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The {@code dry-run} method: logs the decision and does nothing else; the attempt is recorded as
 * DRY_RUN.
 */
public final class DryRunEvictor implements PodEvictor {
  private static final Logger LOG = LoggerFactory.getLogger(DryRunEvictor.class);

  @Override
  public EvictionOutcome evict(EvictionDecision decision) {
    LOG.info(
        "dry run: would evict {} for {} (grace period {} s, rules {}): {}",
        decision.pod(),
        decision.signal(),
        decision.gracePeriodSeconds(),
        decision.rules(),
        decision.message());
    return EvictionOutcome.DRY_RUN;
  }
}
