package dev.evictd.api;

import java.util.Collections;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;

/**
 * A decision of the rules to evict one pod.
 *
 * @param pod the pod
 * @param kind pressure (a threshold was met) or local storage (a pod exceeded a storage limit)
 * @param signal the signal acted on, or the local-storage limit ({@code emptydirfs.limit}, {@code
 *     ephemeralpodfs.limit}, {@code ephemeralcontainerfs.limit})
 * @param gracePeriodSeconds the termination grace period to use
 * @param message the kubelet-format message recorded on the pod and in its Evicted event
 * @param annotations the Evicted event's annotations (offending_containers,
 *     offending_containers_usage, starved_resource), empty when the kubelet sets none
 * @param method how to carry it out ({@link EvictionMethod#DEFAULT}: the agent's configured method)
 * @param rules the rules whose firing produced the decision, the deciding rule first
 */
public record EvictionDecision(
    PodRef pod,
    Kind kind,
    String signal,
    long gracePeriodSeconds,
    String message,
    Map<String, String> annotations,
    EvictionMethod method,
    List<String> rules)
    implements PerSyncFact {

  /** Why a pod is evicted. */
  public enum Kind {
    PRESSURE,
    LOCAL_STORAGE
  }

  public EvictionDecision {
    // in key order: plan -o json, explain and the Evicted event print them the same way every run
    // (Map.copyOf's order changes from one JVM to the next); Map.copyOf still refuses null keys and
    // values
    annotations =
        annotations == null || annotations.isEmpty()
            ? Map.of()
            : Collections.unmodifiableSortedMap(new TreeMap<>(Map.copyOf(annotations)));
    method = method == null ? EvictionMethod.DEFAULT : method;
    rules = rules == null ? List.of() : List.copyOf(rules);
  }

  // Written out as the implicit one prints: that one is linked through ObjectMethods at its first
  // call, which spins method-handle classes at every start (RecordMethodsTest compares the two).
  @Override
  public String toString() {
    return "EvictionDecision[pod="
        + pod
        + ", kind="
        + kind
        + ", signal="
        + signal
        + ", gracePeriodSeconds="
        + gracePeriodSeconds
        + ", message="
        + message
        + ", annotations="
        + annotations
        + ", method="
        + method
        + ", rules="
        + rules
        + "]";
  }
}
