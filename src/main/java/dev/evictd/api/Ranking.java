package dev.evictd.api;

import java.util.List;
import java.util.Set;

/**
 * The active pods in rank order for the signal acted on (inserted by the planner after sorting the
 * rank keys), with the pods the rules exempted from eviction.
 */
public record Ranking(Signal signal, List<RankKey> order, Set<String> exempt)
    implements PerSyncFact {

  public Ranking {
    order = List.copyOf(order);
    exempt = Set.copyOf(exempt);
  }

  /** The first pod in rank order that is not exempt, or null. */
  public RankKey getFirstCandidate() {
    // by index: rule conditions call this once per pod they join, and an iterator each time was
    // most of what a pressure sync's decide phase allocated
    for (int i = 0, n = order.size(); i < n; i++) {
      RankKey k = order.get(i);
      if (!exempt.contains(k.uid())) {
        return k;
      }
    }
    return null;
  }

  /** The pods in rank order that are not exempt. */
  public List<RankKey> candidates() {
    return order.stream().filter(k -> !exempt.contains(k.uid())).toList();
  }
}
