package dev.evictd.api;

import java.util.Map;

/**
 * The kubelet evictd runs beside, as a fact the rules read: its minor version and its effective
 * feature gates (the KubeletConfiguration's {@code featureGates} over that version's defaults).
 * Rules ask it what differs between kubelets; evictd follows the newest kubelet it knows when the
 * reported one is newer ({@code beyondRange}).
 *
 * @param minor the Kubernetes minor version evictd follows (1.{@code minor}), within the supported
 *     range
 * @param reported the version as reported (e.g. {@code v1.34.2}), or the one followed when none was
 * @param beyondRange whether the reported kubelet is newer than the newest evictd knows
 * @param gates every feature gate registered in that kubelet, with its effective value
 */
public record Kubelet(int minor, String reported, boolean beyondRange, Map<String, Boolean> gates) {

  /** Gate: soft evictions give {@code evictionMaxPodGracePeriod} alone (deprecated 1.32). */
  public static final String ALLOW_OVERWRITE_TERMINATION_GRACE_PERIOD_SECONDS =
      "AllowOverwriteTerminationGracePeriodSeconds";

  /** Gate: pod-level {@code spec.resources} (alpha 1.32, beta on 1.34). */
  public static final String POD_LEVEL_RESOURCES = "PodLevelResources";

  /** Gate: image and container filesystems garbage-collected apart (split filesystem). */
  public static final String KUBELET_SEPARATE_DISK_GC = "KubeletSeparateDiskGC";

  public Kubelet {
    gates = Map.copyOf(gates);
  }

  /** {@code 1.minor}. */
  public String version() {
    return "1." + minor;
  }

  /** Whether the kubelet is 1.{@code atLeastMinor} or newer. */
  public boolean atLeast(int atLeastMinor) {
    return minor >= atLeastMinor;
  }

  /** The gate's effective value; false for a gate this kubelet does not register. */
  public boolean gate(String name) {
    return Boolean.TRUE.equals(gates.get(name));
  }

  /**
   * Whether ranking requests follow {@code resourcehelper.PodRequests} (sidecar containers added to
   * the containers' sum, pod-level requests used): {@code pkg/api/v1/resource/helpers.go} {@code
   * GetResourceRequestQuantity} since 1.34; before, containers summed and init containers (sidecars
   * too) taken at their maximum.
   */
  public boolean podRequestsHelper() {
    return atLeast(34);
  }

  /**
   * Whether {@code PodLevelResources} is on in a kubelet that reads it for eviction (1.34+): then a
   * pod with pod-level resources ranks by them alone (its containers' requests skipped) and its
   * memory eviction message says what the pod used ({@code pkg/kubelet/eviction/helpers.go
   * evictionMessage}).
   */
  public boolean podLevelResources() {
    return atLeast(34) && gate(POD_LEVEL_RESOURCES);
  }

  /**
   * Whether the eviction manager builds its ranking and node-level reclaim functions on a node of
   * {@code layout}: not on a split filesystem with {@code KubeletSeparateDiskGC} off, where {@code
   * eviction_manager.go} {@code synchronize} returns an error on its first sync before building
   * them and never tries again (1.32 to 1.37). Without them no threshold reclaims or evicts.
   */
  public boolean buildsEvictionFunctions(FsLayout layout) {
    return layout != FsLayout.SPLIT || gate(KUBELET_SEPARATE_DISK_GC);
  }

  /**
   * The error of the kubelet's first sync on a node of {@code layout} (it then observes nothing,
   * reports no condition and evicts nothing), or null when that sync runs.
   */
  public String firstSyncError(FsLayout layout) {
    return buildsEvictionFunctions(layout)
        ? null
        : "KubeletSeparateDiskGC is turned off but we still have a split filesystem";
  }

  /** One line for logs, {@code doctor} and {@code explain}. */
  public String describe() {
    String s = "kubelet " + reported + ": following " + version();
    return beyondRange ? s + " (newer than the newest evictd knows)" : s;
  }
}
