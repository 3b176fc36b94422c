package dev.evictd.api;

import java.util.Set;

/**
 * This agent can stop a pod's containers on the node and record the eviction through the API
 * ({@link EvictionMethod#KILL_AND_DELETE}) for the pods in {@code podUids}: those with a pod cgroup
 * on this node. Inserted every sync by an agent whose executor is {@code delete} and whose {@code
 * allowedMethods} has {@code kill} (so {@code kill-and-delete} is allowed too); fixtures and {@code
 * evictd plan} have none.
 */
public record KillAndDeleteAvailable(Set<String> podUids) {
  public KillAndDeleteAvailable {
    podUids = Set.copyOf(podUids);
  }

  /** Whether the pod with {@code uid} has a cgroup on this node. */
  public boolean forPod(String uid) {
    return podUids.contains(uid);
  }
}
