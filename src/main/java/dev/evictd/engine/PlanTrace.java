package dev.evictd.engine;

import dev.evictd.api.EvictionConfig;
import dev.evictd.api.EvictionPlan;
import dev.evictd.api.PodFact;
import dev.evictd.api.PodStats;
import dev.evictd.api.Ranking;
import dev.evictd.api.Threshold;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Collection;
import java.util.Collections;
import java.util.HashMap;
import java.util.HashSet;
import java.util.IdentityHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.stream.Collectors;

/**
 * The trace of one sync as the plan shows it: the rules that fired, in order, with what they
 * matched and produced (a rule that fired more than {@value #TRACE_LIMIT_PER_RULE} times is shown
 * once, with its count), and the provenance of a fact: the firings that led to it.
 */
final class PlanTrace {
  /** Firings of one rule shown one by one; more are summarized. */
  static final int TRACE_LIMIT_PER_RULE = 20;

  private final SessionRecord record;

  PlanTrace(SessionRecord record) {
    this.record = record;
  }

  /** The firings of the sync, for the plan. */
  List<EvictionPlan.RuleFiring> firings() {
    Map<String, Integer> counts = new HashMap<>();
    for (Firing f : record.firings) {
      counts.merge(f.rule(), 1, Integer::sum);
    }
    List<EvictionPlan.RuleFiring> out = new ArrayList<>();
    Set<String> summarized = new HashSet<>();
    for (Firing f : record.firings) {
      int n = counts.get(f.rule());
      if (n > TRACE_LIMIT_PER_RULE) {
        if (summarized.add(f.rule())) {
          out.add(
              new EvictionPlan.RuleFiring(
                  f.phase(), f.rule(), List.of("fired " + n + " times"), List.of()));
        }
        continue;
      }
      out.add(describe(f));
    }
    return out;
  }

  /**
   * The firings that produced a fact: the one that inserted it, then those behind the facts it
   * matched.
   */
  List<Firing> provenance(Object fact) {
    Set<Firing> out = new LinkedHashSet<>();
    ArrayDeque<Object> todo = new ArrayDeque<>();
    Set<Object> visited = Collections.newSetFromMap(new IdentityHashMap<>());
    todo.add(fact);
    while (!todo.isEmpty()) {
      Object o = todo.poll();
      if (!visited.add(o)) {
        continue;
      }
      Firing f = record.producedBy.get(o);
      if (f == null) {
        continue;
      }
      out.add(f);
      todo.addAll(f.matched());
    }
    return new ArrayList<>(out);
  }

  /** A firing as the plan shows it (rendered once per sync). */
  EvictionPlan.RuleFiring describe(Firing f) {
    if (f.rendered == null) {
      f.rendered =
          new EvictionPlan.RuleFiring(
              f.phase(),
              f.rule(),
              f.matched().stream().map(this::cachedDescription).toList(),
              f.produced().stream().map(this::cachedDescription).toList());
    }
    return f.rendered;
  }

  private String cachedDescription(Object o) {
    if (o == null) {
      return shortDescription(null);
    }
    return record.descriptions.computeIfAbsent(o, PlanTrace::shortDescription);
  }

  /** A one-line description of a fact for traces. */
  static String shortDescription(Object o) {
    if (o instanceof Collection<?> c) {
      return c.stream()
          .map(PlanTrace::shortDescription)
          .collect(Collectors.joining(", ", "[", "]"));
    }
    if (o != null && o.getClass().getName().startsWith("org.drools.")) {
      return "(initial fact)";
    }
    if (o instanceof PodFact p) {
      return "PodFact[" + p.key() + "]";
    }
    if (o instanceof PodStats s) {
      return "PodStats["
          + s.uid()
          + ", memory "
          + s.memoryWorkingSetBytes()
          + ", processes "
          + s.processCount()
          + "]";
    }
    if (o instanceof Threshold t) {
      return "Threshold[" + t.id() + "<" + t.value() + "]";
    }
    if (o instanceof Ranking r) {
      return "Ranking[" + r.signal() + ", " + r.order().size() + " pods]";
    }
    if (o instanceof EvictionConfig) {
      return "EvictionConfig";
    }
    String s = String.valueOf(o);
    return s.length() > 200 ? s.substring(0, 200) + "..." : s;
  }
}
