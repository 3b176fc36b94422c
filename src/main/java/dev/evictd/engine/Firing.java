package dev.evictd.engine;

import dev.evictd.api.EvictionPlan;
import java.util.ArrayList;
import java.util.List;

/**
 * One firing of a rule in the current sync. Equal only to itself: firings are collected in sets,
 * and hashing what they matched (a Ranking holds every pod's key) would cost more than the sync.
 */
final class Firing {
  private final String phase;
  private final String rule;
  private final List<Object> matched;
  private final List<Object> produced = new ArrayList<>(1);

  /**
   * The firing as the plan shows it, rendered once (the trace and the decisions' provenance share
   * it).
   */
  EvictionPlan.RuleFiring rendered;

  Firing(String phase, String rule, List<Object> matched) {
    this.phase = phase;
    this.rule = rule;
    this.matched = matched;
  }

  String phase() {
    return phase;
  }

  String rule() {
    return rule;
  }

  List<Object> matched() {
    return matched;
  }

  List<Object> produced() {
    return produced;
  }
}
