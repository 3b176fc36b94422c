package dev.evictd.hostile;

import static org.assertj.core.api.Assertions.assertThat;

import dev.evictd.api.EvictionConfig;
import dev.evictd.api.EvictionDecision;
import dev.evictd.api.EvictionPlan;
import dev.evictd.api.FsLayout;
import dev.evictd.config.KubeletEvictionConfig;
import dev.evictd.config.YamlNode;
import dev.evictd.engine.Planner;
import dev.evictd.engine.PlannerHooks;
import dev.evictd.engine.SyncBudget;
import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.PodBuilder;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * A grace period past the node's bound (issue 48, class 4): rules give a pod whose own
 * terminationGracePeriodSeconds is 999999999 that much, Long.MAX_VALUE, -1 and 31 s against an
 * evictionMaxPodGracePeriod of 30 s, before and after a failed sync rebuilt the facts and after the
 * rules were swapped again (a reload): each is refused by the decision guard; 0 and 30 s pass.
 */
class GracePeriodHostileTest {
  static EvictionConfig config() {
    String yaml =
        "evictionHard: {memory.available: 1Gi}\n"
            + "evictionMaxPodGracePeriod: 30\n"
            + "enforceNodeAllocatable: []\n";
    return KubeletEvictionConfig.from(
        YamlNode.parse("k.yaml", yaml.getBytes(StandardCharsets.UTF_8)), "n", FsLayout.SHARED);
  }

  /** What became of the decision for pod "slow" in a plan: accepted with its grace, or refused. */
  private static List<String> verdicts(EvictionPlan p) {
    List<String> out = new ArrayList<>();
    for (EvictionDecision d : p.decisions()) {
      if (d.pod().name().equals("slow")) {
        out.add("accepted " + d.gracePeriodSeconds());
      }
    }
    for (EvictionPlan.RefusedDecision r : p.refused()) {
      if (r.pod().name().equals("slow")) {
        out.add(r.reason() + " " + r.detail());
      }
    }
    return out;
  }

  @Test
  void gracePeriodsPastEvictionMaxPodGracePeriodAreRefusedAfterRebuildsAndReloads()
      throws Exception {
    Pod slow =
        new PodBuilder(RuleSandboxTest.pod("slow", 1000))
            .editSpec()
            .withTerminationGracePeriodSeconds(999_999_999L)
            .endSpec()
            .build();
    List<Pod> pods = List.of(slow, RuleSandboxTest.pod("b", 0));
    List<String> seen = new ArrayList<>();
    try (Planner planner =
        new Planner(
            RuleSandboxTest.withDefaults("grace-past-the-bound.drl"),
            config(),
            // a loaded machine must not fail a sync on time: what is checked is the guard
            SyncBudget.DEFAULT.withTime(Duration.ofMinutes(2)))) {
      for (int i = 1; i <= 9; i++) {
        if (i == 9) {
          planner.swapRules(RuleSandboxTest.withDefaults("grace-past-the-bound.drl"));
        }
        EvictionPlan p =
            planner.sync(
                RuleSandboxTest.T0.plusSeconds(10L * i),
                RuleSandboxTest.pressure(pods),
                pods,
                PlannerHooks.noReclaim(null));
        if (i == 2) {
          assertThat(p.failed()).as("the failing sync").isTrue();
          continue;
        }
        assertThat(p.failed()).as("sync %d: %s", i, p.failure()).isFalse();
        List<String> v = verdicts(p);
        assertThat(v).as("sync %d", i).hasSize(1);
        seen.add(v.get(0));
      }
    }
    String refused = "GRACE_PERIOD grace period %ss is outside 0..30s for pod default/slow";
    assertThat(seen)
        .containsExactly(
            refused.formatted(999_999_999L),
            refused.formatted(999_999_999L), // after the facts were rebuilt
            refused.formatted(-1),
            refused.formatted(Long.MAX_VALUE),
            "accepted 0",
            "accepted 30",
            refused.formatted(31),
            refused.formatted(999_999_999L)); // after a reload
  }
}
