package dev.evictd.api;

import java.util.List;
import java.util.Map;

/**
 * An active pod of the node, with what eviction needs from its spec computed as Kubernetes computes
 * it. A value: every field is immutable data, so that no rule can change what the agent read. The
 * pod object is available to rules as {@code pod} ({@link PodObject}) for anything else
 * (annotations, node name, containers), without what could hold secrets.
 *
 * @param uid the pod's uid (stats are matched by it)
 * @param namespace the namespace
 * @param name the name
 * @param position the pod's index in the active pod list: equal rank keys keep this order
 * @param priority spec.priority, 0 when unset
 * @param staticPod whether the pod comes from a file or URL source (annotation
 *     kubernetes.io/config.source != api)
 * @param mirrorPod whether the pod is the mirror of a static pod (annotation
 *     kubernetes.io/config.mirror)
 * @param critical static, mirror, or priority of at least 2000000000 (system critical)
 * @param qosClass Guaranteed, Burstable or BestEffort
 * @param memoryRequest the pod's effective memory request (0 when none)
 * @param ephemeralStorageRequest the pod's effective ephemeral-storage request (0 when none)
 * @param inodesRequest the pod's effective request of the resource named "inodes" (0 when none)
 * @param terminationGracePeriodSeconds spec.terminationGracePeriodSeconds, null when unset
 * @param localVolumes the names of the pod's volumes that use local node storage (hostPath,
 *     emptyDir on disk...)
 * @param emptyDirLimits emptyDir volumes with a positive size limit, in spec order
 * @param podEphemeralStorageLimit the pod's effective ephemeral-storage limit, null when no
 *     container sets one
 * @param containerEphemeralStorageLimits non-zero ephemeral-storage limits of regular containers by
 *     name, spec order
 * @param labels metadata.labels
 * @param owners metadata.ownerReferences
 * @param controllerUid the uid of the owner reference marked as controller (e.g. the ReplicaSet),
 *     or null
 * @param pod a copy of the pod object, without env, command, args, probes, lifecycle hooks, managed
 *     fields and the last-applied-configuration annotation
 * @param deletionTimestamp metadata.deletionTimestamp: set by the API server when the pod's
 *     deletion was requested, to the time by which it should be gone (request time plus its grace
 *     period); null while the pod is not being deleted. A pod being deleted stays active until it
 *     ends.
 * @param deletionGracePeriodSeconds metadata.deletionGracePeriodSeconds: the grace period of the
 *     requested deletion, null when none
 */
public record PodFact(
    String uid,
    String namespace,
    String name,
    int position,
    int priority,
    boolean staticPod,
    boolean mirrorPod,
    boolean critical,
    String qosClass,
    Quantity memoryRequest,
    Quantity ephemeralStorageRequest,
    Quantity inodesRequest,
    Long terminationGracePeriodSeconds,
    List<String> localVolumes,
    List<VolumeLimit> emptyDirLimits,
    Quantity podEphemeralStorageLimit,
    Map<String, Quantity> containerEphemeralStorageLimits,
    Map<String, String> labels,
    List<PodOwner> owners,
    String controllerUid,
    PodObject pod,
    java.time.Instant deletionTimestamp,
    Long deletionGracePeriodSeconds) {

  /** {@code namespace/name}. */
  public String key() {
    return namespace + "/" + name;
  }

  /** The pod's reference. */
  public PodRef ref() {
    return new PodRef(namespace, name, uid);
  }

  /** The pod with another position in the active list. */
  public PodFact withPosition(int newPosition) {
    return new PodFact(
        uid,
        namespace,
        name,
        newPosition,
        priority,
        staticPod,
        mirrorPod,
        critical,
        qosClass,
        memoryRequest,
        ephemeralStorageRequest,
        inodesRequest,
        terminationGracePeriodSeconds,
        localVolumes,
        emptyDirLimits,
        podEphemeralStorageLimit,
        containerEphemeralStorageLimits,
        labels,
        owners,
        controllerUid,
        pod,
        deletionTimestamp,
        deletionGracePeriodSeconds);
  }

  /**
   * When the pod's deletion was requested: its deletionTimestamp less its grace period (the pod's
   * own terminationGracePeriodSeconds, else 30 s, when the API server did not say); null while the
   * pod is not being deleted.
   */
  public java.time.Instant deletionRequestedAt() {
    if (deletionTimestamp == null) {
      return null;
    }
    return deletionTimestamp.minusSeconds(deletionGracePeriod());
  }

  /**
   * The grace period of the pod's deletion: deletionGracePeriodSeconds, else the pod's own
   * terminationGracePeriodSeconds, else the API server's default of 30 s.
   */
  public long deletionGracePeriod() {
    if (deletionGracePeriodSeconds != null) {
      return deletionGracePeriodSeconds;
    }
    return terminationGracePeriodSeconds != null ? terminationGracePeriodSeconds : 30;
  }
}
