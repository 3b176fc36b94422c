package dev.evictd.reference;

import dev.evictd.api.EvictionDecision;
import dev.evictd.api.EvictionPlan;
import dev.evictd.api.RankKey;
import dev.evictd.api.ReclaimAction;
import dev.evictd.api.Threshold;
import dev.evictd.engine.Planner;
import dev.evictd.engine.PlannerHooks;
import dev.evictd.engine.PodFacts;
import dev.evictd.engine.RuleSet;
import dev.evictd.fixture.Fixture;
import dev.evictd.fixture.FixtureLoader;
import dev.evictd.fixture.FixtureRunner;
import dev.evictd.fixture.FixtureStep;
import dev.evictd.k8s.PodResources;
import dev.evictd.ruleset.RuleCompiler;
import dev.evictd.stats.Summary;
import io.fabric8.kubernetes.api.model.Pod;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Instant;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Set;

/**
 * Runs a scenario through the planner with the default rules and through {@link KubeletReference},
 * step by step, and reports the first disagreement or broken invariant. A second planner runs in
 * lockstep to check determinism.
 */
final class Differential {
  private static RuleSet defaults;

  private Differential() {}

  /** The packaged rules, compiled once per JVM. */
  static synchronized RuleSet rules() {
    if (defaults == null) {
      defaults = RuleCompiler.compileDefault();
    }
    return defaults;
  }

  /** Loads a scenario exactly as its fixture file would be loaded. */
  static Fixture load(Scenario s) {
    return FixtureLoader.parse(
        Path.of(s.name() + ".yaml"), s.toYaml(null).getBytes(StandardCharsets.UTF_8));
  }

  /** The reference's result for every step of a loaded fixture. */
  static List<KubeletReference.Result> reference(Fixture f) {
    KubeletReference ref = new KubeletReference(f.config());
    List<KubeletReference.Result> out = new ArrayList<>();
    Instant now = FixtureRunner.START;
    List<Pod> pods = f.pods();
    for (FixtureStep step : f.steps()) {
      now = now.plus(step.advance());
      if (step.pods() != null) {
        pods = step.pods();
      }
      out.add(ref.sync(now, step.summary(), pods, step.afterReclaim()));
    }
    return out;
  }

  /**
   * The scenario as a fixture whose expectations are the reference's: ready to save in fixtures/.
   */
  static String fixtureText(Scenario s) {
    try {
      return s.toYaml(reference(load(s)));
    } catch (RuntimeException e) {
      return "# cannot compute expectations: " + e + "\n" + s.toYaml(null);
    }
  }

  /**
   * The first disagreement between the planner and the reference, or broken invariant; null when
   * none.
   */
  static String check(Scenario s) {
    Fixture f = load(s);
    KubeletReference ref = new KubeletReference(f.config());
    try (Planner planner = new Planner(rules(), f.config());
        Planner twin = new Planner(rules(), f.config())) {
      Instant now = FixtureRunner.START;
      List<Pod> pods = f.pods();
      for (FixtureStep step : f.steps()) {
        now = now.plus(step.advance());
        if (step.pods() != null) {
          pods = step.pods();
        }
        KubeletReference.Result expected = ref.sync(now, step.summary(), pods, step.afterReclaim());
        EvictionPlan plan = planner.sync(now, step.summary(), pods, hooks(step));
        EvictionPlan again = twin.sync(now, step.summary(), pods, hooks(step));
        String where = "step " + step.index() + ": ";
        if (plan.failed()) {
          return where + "the sync failed: " + plan.failure();
        }
        String d = disagreement(expected, plan);
        if (d != null) {
          return where + d;
        }
        String inv = brokenInvariant(f, ref, plan, pods, step.summary());
        if (inv != null) {
          return where + "invariant: " + inv;
        }
        if (!projection(plan).equals(projection(again))) {
          return where
              + "invariant: not deterministic: "
              + projection(plan)
              + " then "
              + projection(again);
        }
      }
    }
    return null;
  }

  /** The fixture's stand-ins for node-level reclaim, as {@code FixtureRunner} has them. */
  static PlannerHooks hooks(FixtureStep step) {
    return new PlannerHooks() {
      @Override
      public boolean reclaim(ReclaimAction action) {
        return true;
      }

      @Override
      public Summary summaryAfterReclaim() {
        return step.afterReclaim() != null ? step.afterReclaim() : step.summary();
      }
    };
  }

  /** What a fixture can expect of a plan: conditions, signal, reclaim, ranking, evictions. */
  static List<Object> projection(EvictionPlan p) {
    return List.of(
        p.conditions(),
        Objects.toString(p.signal()),
        p.reclaimed(),
        p.ranking().stream().map(r -> r.pod().key()).toList(),
        p.decisions().stream()
            .map(d -> List.of(d.pod().key(), d.gracePeriodSeconds(), d.message()))
            .toList());
  }

  /** The first difference between the reference's result and the plan, or null. */
  static String disagreement(KubeletReference.Result r, EvictionPlan p) {
    if (!r.conditions().equals(p.conditions())) {
      return "conditions: reference " + r.conditions() + ", planner " + p.conditions();
    }
    if (r.signal() != p.signal()) {
      return "signal: reference " + r.signal() + ", planner " + p.signal();
    }
    if (!r.reclaimed().equals(p.reclaimed())) {
      return "reclaimed: reference " + r.reclaimed() + ", planner " + p.reclaimed();
    }
    List<String> ranking = p.ranking().stream().map(x -> x.pod().key()).toList();
    if (!r.ranking().equals(ranking)) {
      return "ranking: reference " + r.ranking() + ", planner " + ranking;
    }
    List<String> expected = r.evictions().stream().map(e -> e.pod()).toList();
    List<String> actual = p.decisions().stream().map(d -> d.pod().key()).toList();
    if (!expected.equals(actual)) {
      return "evicted: reference " + expected + ", planner " + actual;
    }
    for (int i = 0; i < expected.size(); i++) {
      KubeletReference.Eviction e = r.evictions().get(i);
      EvictionDecision d = p.decisions().get(i);
      if (e.gracePeriodSeconds() != d.gracePeriodSeconds()) {
        return "evicted["
            + i
            + "].gracePeriodSeconds: reference "
            + e.gracePeriodSeconds()
            + ", planner "
            + d.gracePeriodSeconds();
      }
      if (!e.message().equals(d.message())) {
        return "evicted["
            + i
            + "].message: reference \""
            + e.message()
            + "\", planner \""
            + d.message()
            + "\"";
      }
      boolean local = d.kind() == EvictionDecision.Kind.LOCAL_STORAGE;
      if (local != r.localStorage()) {
        return "evicted["
            + i
            + "].kind: reference "
            + (r.localStorage() ? "local storage" : "pressure")
            + ", planner "
            + d.kind();
      }
    }
    return null;
  }

  /**
   * The invariants every plan keeps, checked independently of the reference's ranking: no critical
   * pod is evicted; at most one pressure eviction; a pressure eviction has a threshold on its
   * signal met (with minimum reclaim) and a local-storage eviction a violated limit; the ranking
   * holds every active pod once, sorted by its keys, equal keys in pod list order.
   */
  static String brokenInvariant(
      Fixture f, KubeletReference ref, EvictionPlan p, List<Pod> pods, Summary summary) {
    Map<String, Pod> byKey = new HashMap<>();
    Map<String, Integer> position = new HashMap<>();
    for (Pod pod : pods) {
      String key = PodFacts.namespace(pod) + "/" + PodFacts.name(pod);
      byKey.put(key, pod);
      position.putIfAbsent(key, position.size());
    }
    Map<String, Summary.PodStats> stats = KubeletReference.cachedStats(summary);
    int pressure = 0;
    for (EvictionDecision d : p.decisions()) {
      Pod pod = byKey.get(d.pod().key());
      if (pod == null) {
        return "evicted " + d.pod() + ", which is not an active pod";
      }
      if (PodResources.isCritical(pod)) {
        return "evicted critical pod " + d.pod();
      }
      if (d.kind() == EvictionDecision.Kind.PRESSURE) {
        pressure++;
        if (p.signal() == null) {
          return "pressure eviction of " + d.pod() + " without a signal";
        }
        List<Threshold> onSignal =
            f.config().thresholds().stream().filter(t -> t.signal() == p.signal()).toList();
        if (KubeletReference.thresholdsMet(
                onSignal, KubeletReference.makeSignalObservations(summary), true)
            .isEmpty()) {
          return "pressure eviction of "
              + d.pod()
              + " while no "
              + p.signal()
              + " threshold is met";
        }
      } else {
        if (!f.config().localStorageCapacityIsolation()) {
          return "local-storage eviction of " + d.pod() + " with localStorageCapacityIsolation off";
        }
        if (ref.localStorageViolation(pod, stats.get(PodFacts.uid(pod))) == null) {
          return "local-storage eviction of " + d.pod() + " that exceeds no limit";
        }
      }
    }
    if (pressure > 1) {
      return pressure + " pressure evictions in one sync";
    }
    if (!p.ranking().isEmpty()) {
      Set<String> ranked = new HashSet<>();
      for (EvictionPlan.RankedPod r : p.ranking()) {
        if (!ranked.add(r.pod().key())) {
          return "ranking lists " + r.pod() + " twice";
        }
      }
      if (!ranked.equals(position.keySet())) {
        return "ranking " + ranked + " is not the active pods " + position.keySet();
      }
      for (int i = 1; i < p.ranking().size(); i++) {
        EvictionPlan.RankedPod a = p.ranking().get(i - 1);
        EvictionPlan.RankedPod b = p.ranking().get(i);
        int c = compareKeys(a.key(), b.key());
        if (c > 0) {
          return "ranking not sorted by its keys: " + a + " before " + b;
        }
        if (c == 0 && position.get(a.pod().key()) > position.get(b.pod().key())) {
          return "ranking not stable: " + a.pod() + " before " + b.pod() + " with equal keys";
        }
      }
    }
    return null;
  }

  private static int compareKeys(List<RankKey.Component> a, List<RankKey.Component> b) {
    for (int i = 0; i < Math.min(a.size(), b.size()); i++) {
      int c = a.get(i).exact().compareTo(b.get(i).exact());
      if (c != 0) {
        return a.get(i).descending() ? -c : c;
      }
    }
    return Integer.compare(a.size(), b.size());
  }
}
