package dev.evictd.bench;

import dev.evictd.api.EvictionPlan;
import dev.evictd.engine.Planner;
import dev.evictd.engine.PlannerHooks;
import dev.evictd.reference.KubeletReference;
import java.time.Instant;

/**
 * A long-lived planner on a scenario, as in the agent: created once, then one sync per call,
 * alternating the scenario's two summaries (every call changes the statistics) with the clock
 * moving 10 s per sync.
 */
public final class PlannerRun implements AutoCloseable {
  final Scenario scenario;
  final Planner planner;
  private final PlannerHooks[] hooks;
  private Instant now = Instant.parse("2026-01-01T00:00:00Z");
  private int i;
  EvictionPlan last;

  PlannerRun(String kind, int size) {
    scenario = Scenario.of(kind, size);
    planner = new Planner(Rules.defaults(), scenario.config);
    hooks = new PlannerHooks[] {scenario.hooks(0), scenario.hooks(1)};
    EvictionPlan first =
        planner.sync(
            now, scenario.initial, scenario.pods, PlannerHooks.noReclaim(scenario.initial));
    Checks.quiet(first, "first sync of " + kind + " " + size);
    // the reference on the same inputs: the planner must decide what it decides, sync after sync
    // (skipped with
    // -Devictd.bench.reference=false, to profile the planner of an older commit)
    boolean withReference = !"false".equals(System.getProperty("evictd.bench.reference"));
    KubeletReference ref = withReference ? new KubeletReference(scenario.config) : null;
    if (ref != null) {
      ref.sync(now, scenario.initial, scenario.pods, null);
    }
    for (int k = 0; k < 4; k++) {
      EvictionPlan p = sync();
      Checks.check(scenario, p, "sync " + (k + 2) + " of " + kind + " " + size);
      if (ref != null) {
        KubeletReference.Result r =
            ref.sync(now, scenario.summaries[i], scenario.pods, scenario.afterReclaim[i]);
        Checks.sameDecision(p, r, "sync " + (k + 2) + " of " + kind + " " + size);
      }
    }
  }

  /** One sync on the other summary. */
  EvictionPlan sync() {
    i ^= 1;
    now = now.plusSeconds(10);
    last = planner.sync(now, scenario.summaries[i], scenario.pods, hooks[i]);
    return last;
  }

  /** Checks the last sync decided what the scenario expects (called at tear-down). */
  void checkLast() {
    Checks.check(scenario, last, "last sync of " + scenario.kind + " " + scenario.size);
  }

  @Override
  public void close() {
    planner.close();
  }
}
