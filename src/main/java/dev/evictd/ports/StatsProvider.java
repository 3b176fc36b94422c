package dev.evictd.ports;

import dev.evictd.stats.Summary;

/** A source of node statistics: the kubelet Summary API, this host, or a fixture. */
public interface StatsProvider {
  /**
   * Reads the current summary. Fields that could not be read are null (no observation), never zero.
   *
   * @throws dev.evictd.api.StatsException when no summary can be produced at all
   */
  Summary summary();
}
