package dev.evictd.ports;

import io.fabric8.kubernetes.api.model.Pod;
import java.util.List;

/** The node's active pods: an informer on the API server, a file, or nothing. */
public interface PodSource extends AutoCloseable {
  /** The active pods now, in a stable order (ties in ranking keep this order). */
  List<Pod> activePods();

  /** Whether the pod with this uid is gone from the node (no longer active). */
  default boolean isGone(String uid) {
    for (Pod p : activePods()) {
      if (p.getMetadata() != null && uid.equals(dev.evictd.engine.PodFacts.uid(p))) {
        return false;
      }
    }
    return true;
  }

  /** Whether the view is complete: false until a pod informer's first list arrived. */
  default boolean synced() {
    return true;
  }

  /**
   * How old the view of the pods may be (zero while it is known to be current, e.g. a fixed list or
   * a connected watch).
   */
  default java.time.Duration viewAge() {
    return java.time.Duration.ZERO;
  }

  @Override
  default void close() {}

  /** A fixed list of pods (standalone mode, tests). */
  static PodSource of(List<Pod> pods) {
    List<Pod> copy = List.copyOf(pods);
    return () -> copy;
  }
}
