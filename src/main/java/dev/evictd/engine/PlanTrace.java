package dev.evictd.engine;

import dev.evictd.api.ActionableThreshold;
import dev.evictd.api.ConditionState;
import dev.evictd.api.EvictionConfig;
import dev.evictd.api.EvictionDecision;
import dev.evictd.api.EvictionPlan;
import dev.evictd.api.GracePeriodMet;
import dev.evictd.api.NodeCondition;
import dev.evictd.api.Observation;
import dev.evictd.api.PodFact;
import dev.evictd.api.PodStats;
import dev.evictd.api.Ranking;
import dev.evictd.api.ReclaimResolved;
import dev.evictd.api.ReclaimTarget;
import dev.evictd.api.SignalLastObserved;
import dev.evictd.api.SyncClock;
import dev.evictd.api.Threshold;
import dev.evictd.api.ThresholdActive;
import dev.evictd.api.ThresholdMet;
import dev.evictd.api.ThresholdState;
import dev.evictd.api.ThresholdUnresolved;
import java.util.AbstractList;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collection;
import java.util.Collections;
import java.util.HashMap;
import java.util.HashSet;
import java.util.IdentityHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.RandomAccess;
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
              f.phase(), f.rule(), descriptions(f.matched()), descriptions(f.produced()));
    }
    return f.rendered;
  }

  /**
   * The descriptions of {@code facts}: an immutable record of the API, or a copy of one of its
   * mutable session facts as it is now, is rendered when first read; the text of any other fact (a
   * type the rules declared) is taken now. The agent reads a plan's trace only for {@code evictd
   * explain} and {@code plan -o json}, so a pressure sync no longer renders it.
   */
  private List<String> descriptions(List<Object> facts) {
    Object[] parts = new Object[facts.size()];
    for (int i = 0; i < parts.length; i++) {
      Object o = facts.get(i);
      Object still = snapshot(o);
      parts[i] = still != null ? still : cachedDescription(o);
    }
    return new Descriptions(parts);
  }

  /**
   * A fact that describes itself as {@code o} does now and always will: {@code o} itself when
   * immutable, a copy of one of the API's mutable session facts, or a list of such; null when there
   * is none (a type the rules declared, a null).
   */
  private static Object snapshot(Object o) {
    if (o == null) {
      return null;
    }
    if (IMMUTABLE.contains(o.getClass())) {
      return o;
    }
    if (o instanceof ThresholdState ts) {
      ThresholdState copy = new ThresholdState(ts.getThreshold(), ts.getFirstObservedAt());
      copy.setActedOn(ts.isActedOn());
      return copy;
    }
    if (o instanceof ConditionState cs) {
      return new ConditionState(cs.getType(), cs.getLastObservedAt());
    }
    if (o instanceof SignalLastObserved so) {
      return new SignalLastObserved(so.getSignal(), so.getTime());
    }
    if (o instanceof Collection<?> c) {
      Object[] still = new Object[c.size()];
      int i = 0;
      for (Object e : c) {
        if (i == still.length || (still[i++] = snapshot(e)) == null) {
          return null;
        }
      }
      return i == still.length ? Collections.unmodifiableList(Arrays.asList(still)) : null;
    }
    return null;
  }

  /**
   * Records whose description cannot change once made: it reads only components that are
   * primitives, strings, enums, {@link java.time.Instant}s, {@link dev.evictd.api.Quantity}s,
   * collections the record's constructor copied, or records of this set. A class added here must be
   * as immutable as they are, or a lazily rendered trace would show a later state.
   */
  private static final Set<Class<?>> IMMUTABLE =
      Set.of(
          SyncClock.class,
          Observation.class,
          Threshold.class,
          ThresholdMet.class,
          ThresholdActive.class,
          ThresholdUnresolved.class,
          ActionableThreshold.class,
          GracePeriodMet.class,
          ReclaimTarget.class,
          ReclaimResolved.class,
          NodeCondition.class,
          PodFact.class,
          Ranking.class,
          EvictionDecision.class,
          PodStats.class);

  /**
   * A trace line's descriptions, each either its text or an immutable fact rendered (once) by
   * {@link #shortDescription} when read. Two threads reading at once may both render one; they
   * store equal strings, and a string is safe to publish without a lock.
   */
  static final class Descriptions extends AbstractList<String> implements RandomAccess {
    private final Object[] parts;

    Descriptions(Object[] parts) {
      this.parts = parts;
    }

    @Override
    public String get(int i) {
      Object p = parts[i];
      if (p instanceof String s) {
        return s;
      }
      String s = shortDescription(p);
      parts[i] = s;
      return s;
    }

    @Override
    public int size() {
      return parts.length;
    }
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
