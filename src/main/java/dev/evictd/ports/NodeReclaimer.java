package dev.evictd.ports;

import dev.evictd.api.ReclaimAction;

/**
 * Runs node-level reclaim (container and image garbage collection) before pods are evicted for disk
 * pressure.
 */
public interface NodeReclaimer {
  /**
   * Runs one reclaim action; returns true when it completed, false when it failed (the failure is
   * logged).
   */
  boolean reclaim(ReclaimAction action);
}
