package dev.evictd.testing;

import dev.evictd.api.EvictionDecision;
import dev.evictd.api.EvictionOutcome;
import dev.evictd.ports.PodEvictor;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;

/** Records decisions and answers with a chosen outcome. */
public final class RecordingEvictor implements PodEvictor {
  private final List<EvictionDecision> decisions = new CopyOnWriteArrayList<>();
  private volatile EvictionOutcome outcome = EvictionOutcome.EVICTED;

  public void answer(EvictionOutcome o) {
    outcome = o;
  }

  public List<EvictionDecision> decisions() {
    return decisions;
  }

  @Override
  public EvictionOutcome evict(EvictionDecision decision) {
    decisions.add(decision);
    return outcome;
  }
}
