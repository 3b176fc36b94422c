package dev.evictd.engine;

import dev.evictd.api.PodFact;
import dev.evictd.api.PodStats;
import dev.evictd.stats.Summary;
import io.fabric8.kubernetes.api.model.Pod;
import org.kie.api.runtime.rule.FactHandle;

/** What the planner holds for one active pod: its facts and their handles in the session. */
final class PodEntry {
  String uid;

  /** The sync that last listed the pod as active (duplicates and pods gone are found by it). */
  long seenAt = -1;

  /** The sync that last ranked the pod (a second rank key for it is ignored). */
  long rankedAt = -1;

  /**
   * During {@link SessionFacts#updatePods}: the pod object, its new fact (null when unchanged) and
   * its statistics.
   */
  Pod next;

  PodFact nextFact;
  Summary.PodStats nextRaw;
  Pod pod;
  PodFact fact;
  FactHandle factHandle;
  Summary.PodStats rawStats;
  PodStats stats;
  FactHandle statsHandle;
}
