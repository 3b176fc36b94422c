package dev.evictd.cli;

import dev.evictd.api.EvictionPlan;
import dev.evictd.api.NodeConditionType;
import dev.evictd.api.Signal;
import dev.evictd.cli.TimelineHtml.Input;
import dev.evictd.config.GoDuration;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.EnumSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * What a timeline page shows: the input, the steps of the rule set under test, and, with {@code
 * --against}, the steps where the second rule set decides differently.
 *
 * @param in what to draw
 * @param plans the plans of the rule set under test, one per step
 * @param diffs by step index (from 0), the differences {@code diff} reports, for the steps where
 *     the two rule sets decide differently; empty without a second rule set
 */
record Timeline(Input in, List<EvictionPlan> plans, Map<Integer, List<String>> diffs) {

  /** The timeline of {@code in}, compared step by step when it has a second rule set. */
  static Timeline of(Input in) {
    List<EvictionPlan> plans = in.a().plans();
    Map<Integer, List<String>> diffs = new LinkedHashMap<>();
    if (in.b() != null) {
      int n = Math.min(plans.size(), in.b().plans().size());
      for (int i = 0; i < n; i++) {
        List<String> d = new ArrayList<>();
        DiffCommand.compare(i + 1, plans.get(i), in.b().plans().get(i), d);
        if (!d.isEmpty()) {
          diffs.put(i, d);
        }
      }
    }
    return new Timeline(in, plans, diffs);
  }

  /** A time as the offset from the start, e.g. {@code 1m30s} or {@code -10s}. */
  String t(Instant i) {
    Duration d = Duration.between(in.start(), i);
    return d.isNegative() ? "-" + GoDuration.format(d.negated()) : GoDuration.format(d);
  }

  /** Seconds from the start. */
  double seconds(Instant i) {
    return Duration.between(in.start(), i).toMillis() / 1000.0;
  }

  /** The signals observed in any step, in the order the eviction manager handles them. */
  List<Signal> signals() {
    Set<Signal> seen = EnumSet.noneOf(Signal.class);
    for (EvictionPlan p : plans) {
      p.observations().forEach(o -> seen.add(o.signal()));
    }
    return new ArrayList<>(seen);
  }

  List<NodeConditionType> conditionRows(List<Signal> signals) {
    Set<NodeConditionType> rows = EnumSet.noneOf(NodeConditionType.class);
    signals.forEach(s -> rows.add(s.condition()));
    for (EvictionPlan p : allPlans()) {
      rows.addAll(p.conditions());
    }
    if (rows.isEmpty()) {
      rows.add(NodeConditionType.MemoryPressure);
    }
    return new ArrayList<>(rows);
  }

  List<EvictionPlan> allPlans() {
    List<EvictionPlan> all = new ArrayList<>(plans);
    if (in.b() != null) {
      all.addAll(in.b().plans());
    }
    return all;
  }
}
