package dev.evictd.ports;

import dev.evictd.api.EvictionDecision;

/**
 * Records Kubernetes events about evictions; a no-op sink is used in dry-run and standalone mode.
 */
public interface EventSink {
  /** Records the Evicted event on the pod, with the decision's message and annotations. */
  void podEvicted(EvictionDecision decision);

  /** Records EvictionThresholdMet ("Attempting to reclaim RESOURCE") on the node. */
  void thresholdMet(String resource);

  /** A sink that records nothing. */
  EventSink NONE =
      new EventSink() {
        @Override
        public void podEvicted(EvictionDecision decision) {}

        @Override
        public void thresholdMet(String resource) {}
      };
}
