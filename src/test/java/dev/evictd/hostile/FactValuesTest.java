package dev.evictd.hostile;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.assertj.core.api.Assertions.fail;

import dev.evictd.api.PodFact;
import dev.evictd.api.PodStats;
import dev.evictd.api.Quantity;
import dev.evictd.engine.PodCompaction;
import dev.evictd.engine.PodFacts;
import dev.evictd.stats.Summary;
import dev.evictd.testing.PodsWithSecrets;
import io.fabric8.kubernetes.api.model.Pod;
import java.lang.reflect.RecordComponent;
import java.math.BigInteger;
import java.time.Instant;
import java.util.IdentityHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.junit.jupiter.api.Test;

/**
 * What rules see of a pod is a value by construction (issue 48, class 1: rules mutating the objects
 * behind their facts): every field of a pod's facts, followed to the end, is a string, number,
 * boolean, enum, time, Quantity, record of these or an unmodifiable list or map of them. No fabric8
 * object, nothing with a setter: the pod the agent read cannot be changed through a fact.
 */
class FactValuesTest {
  private static final Set<Class<?>> LEAVES =
      Set.of(
          String.class,
          Boolean.class,
          Integer.class,
          Long.class,
          Double.class,
          Instant.class,
          BigInteger.class,
          Quantity.class);

  static void assertValue(Object o, String path, IdentityHashMap<Object, Boolean> seen) {
    if (o == null || LEAVES.contains(o.getClass()) || o.getClass().isEnum()) {
      return;
    }
    if (seen.put(o, Boolean.TRUE) != null) {
      return;
    }
    if (o instanceof Record r) {
      for (RecordComponent c : r.getClass().getRecordComponents()) {
        try {
          assertValue(c.getAccessor().invoke(r), path + "." + c.getName(), seen);
        } catch (ReflectiveOperationException e) {
          fail(path + "." + c.getName() + ": " + e);
        }
      }
    } else if (o instanceof List<?> l) {
      assertThatThrownBy(() -> l.add(null))
          .as(path)
          .isInstanceOf(UnsupportedOperationException.class);
      assertThatThrownBy(() -> l.clear())
          .as(path)
          .isInstanceOf(UnsupportedOperationException.class);
      for (int i = 0; i < l.size(); i++) {
        assertValue(l.get(i), path + "[" + i + "]", seen);
      }
    } else if (o instanceof Map<?, ?> m) {
      assertThatThrownBy(() -> m.clear())
          .as(path)
          .isInstanceOf(UnsupportedOperationException.class);
      assertThatThrownBy(() -> m.put(null, null))
          .as(path)
          .isInstanceOfAny(UnsupportedOperationException.class, NullPointerException.class);
      for (var e : m.entrySet()) {
        assertValue(e.getKey(), path + ".key", seen);
        assertValue(e.getValue(), path + "[" + e.getKey() + "]", seen);
      }
    } else {
      fail(path + " is a " + o.getClass().getName() + ", not a value rules cannot change");
    }
  }

  private static void assertValues(Pod pod) {
    PodFact fact = PodFacts.of(pod, 0);
    assertValue(fact, "PodFact", new IdentityHashMap<>());
    Summary.PodStats raw =
        new Summary.PodStats(
            new Summary.PodReference("web", "apps", fact.uid()),
            List.of(new Summary.ContainerStats("app", null, null, null)),
            new Summary.MemoryStats(null, null, null, 100L, null),
            List.of(new Summary.VolumeStats("data", null, null, null, 5L, null, null, 1L)),
            null,
            null);
    assertValue(PodFacts.stats(fact, raw), "PodStats", new IdentityHashMap<>());
    assertThat(PodStats.class.getRecordComponents())
        .extracting(RecordComponent::getName)
        .doesNotContain("raw");
  }

  @Test
  void aPodAsTheApiServerSentItGivesFactsThatAreValuesThroughout() {
    Pod pod = PodsWithSecrets.pod("apps", "web", "node-1");
    assertValues(pod);
    // and the object the fact was built from is not what the fact carries
    PodFact fact = PodFacts.of(pod, 0);
    assertThat((Object) fact.pod()).isNotSameAs(pod);
  }

  @Test
  void thePodStoresFrozenPodGivesFactsThatAreValuesThroughout() {
    Pod stored = PodCompaction.forStore(PodsWithSecrets.pod("apps", "web", "node-1"));
    assertValues(stored);
  }

  @Test
  void aRuleThatTriesToChangeThePodBehindItsFactFailsItsSyncAndChangesNothing() throws Exception {
    Pod target = RuleSandboxTest.pod("target", 0);
    target.getMetadata().setAnnotations(new java.util.HashMap<>(Map.of("team", "payments")));
    String before = new io.fabric8.kubernetes.client.utils.KubernetesSerialization().asJson(target);
    List<Pod> pods = List.of(target, RuleSandboxTest.pod("a", 10));
    try (dev.evictd.engine.Planner planner =
        new dev.evictd.engine.Planner(
            RuleSandboxTest.withDefaults("mutates-pod-facts.drl"), RuleSandboxTest.config())) {
      var plan =
          planner.sync(
              RuleSandboxTest.T0,
              RuleSandboxTest.pressure(pods),
              pods,
              dev.evictd.engine.PlannerHooks.noReclaim(null));
      assertThat(plan.failed()).isTrue();
      assertThat(plan.failure()).contains("UnsupportedOperationException");
      assertThat(plan.decisions()).isEmpty();
    }
    assertThat(new io.fabric8.kubernetes.client.utils.KubernetesSerialization().asJson(target))
        .isEqualTo(before);
  }
}
