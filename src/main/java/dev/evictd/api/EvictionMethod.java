package dev.evictd.api;

/** How the executor carries out an eviction decision; rules may choose one per decision. */
public enum EvictionMethod {
  /** The agent's configured default method. */
  DEFAULT,
  /**
   * Mark the pod with a DisruptionTarget condition, then delete it with the decision's grace
   * period.
   */
  DELETE,
  /** Post a policy/v1 Eviction, which honours PodDisruptionBudgets. */
  EVICT,
  /**
   * Signal the pod's processes through its cgroup: the local last resort when the API is
   * unreachable.
   */
  KILL,
  /**
   * Stop the pod's containers on the node at once (signal its cgroup, as {@link #KILL}), then mark
   * and delete it through the API (as {@link #DELETE}): memory is freed as fast as the kubelet's
   * own hard eviction frees it, and the eviction is recorded where the cluster sees it.
   */
  KILL_AND_DELETE,
  /** Record and log only. */
  DRY_RUN
}
