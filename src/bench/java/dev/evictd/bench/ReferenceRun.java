package dev.evictd.bench;

import dev.evictd.reference.KubeletReference;
import java.time.Instant;

/** The plain-Java kubelet reference on a scenario, long-lived like {@link PlannerRun}. */
public final class ReferenceRun {
  final Scenario scenario;
  final KubeletReference reference;
  private Instant now = Instant.parse("2026-01-01T00:00:00Z");
  private int i;
  KubeletReference.Result last;

  ReferenceRun(String kind, int size) {
    scenario = Scenario.of(kind, size);
    reference = new KubeletReference(scenario.config);
    reference.sync(now, scenario.initial, scenario.pods, null);
    for (int k = 0; k < 4; k++) {
      Checks.check(scenario, sync(), "reference sync " + (k + 2) + " of " + kind + " " + size);
    }
  }

  KubeletReference.Result sync() {
    i ^= 1;
    now = now.plusSeconds(10);
    last = reference.sync(now, scenario.summaries[i], scenario.pods, scenario.afterReclaim[i]);
    return last;
  }

  void checkLast() {
    Checks.check(scenario, last, "last reference sync of " + scenario.kind + " " + scenario.size);
  }
}
