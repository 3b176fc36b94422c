package dev.evictd.engine;

import static org.assertj.core.api.Assertions.assertThat;

import dev.evictd.api.PodFact;
import dev.evictd.api.PodObject;
import dev.evictd.api.PodStats;
import dev.evictd.stats.Summary;
import dev.evictd.testing.PodsWithSecrets;
import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.client.utils.KubernetesSerialization;
import java.math.BigInteger;
import java.util.List;
import org.junit.jupiter.api.Test;

/** What rules can read of a pod: nothing that holds secrets. */
class PodFactsTest {
  @Test
  void thePodRulesReadHasNoEnvCommandArgsProbesHooksManagedFieldsOrLastAppliedConfiguration() {
    Pod original = PodsWithSecrets.pod("apps", "web", "node-1");
    String before = new KubernetesSerialization().asJson(original);
    for (String s : PodsWithSecrets.SECRETS) {
      assertThat(before).as("the test pod carries %s", s).contains(s);
    }
    PodFact fact = PodFacts.of(original, 0);
    String seen = new KubernetesSerialization().asJson(fact.pod());
    for (String s : PodsWithSecrets.SECRETS) {
      assertThat(seen).as("rules cannot read %s", s).doesNotContain(s);
    }
    var c = fact.pod().spec().containers().get(0);
    // env, command, args, probes and hooks are no fields of the rules' container at all
    assertThat(PodObject.ContainerSpec.class.getRecordComponents())
        .extracting(java.lang.reflect.RecordComponent::getName)
        .containsExactly("name", "image", "restartPolicy", "resources");
    // what eviction policies use stays: names, labels, other annotations, resources, node
    assertThat(c.name()).isEqualTo("app");
    assertThat(c.image()).isEqualTo("busybox");
    assertThat(c.resources().requests()).containsKey("memory");
    assertThat(fact.pod().metadata().labels()).containsEntry("app", "web");
    assertThat(fact.pod().metadata().annotations())
        .containsEntry("team", "payments")
        .doesNotContainKey(PodFacts.LAST_APPLIED);
    assertThat(fact.pod().spec().nodeName()).isEqualTo("node-1");
    assertThat(fact.memoryRequest().value()).isEqualTo(64L << 20);
    // the agent's own copy is untouched
    assertThat(new KubernetesSerialization().asJson(original)).isEqualTo(before);
  }

  @Test
  void statisticsSumsPastALongStayExactAndTheLongFieldsSaturate() {
    PodFact fact = PodFacts.of(PodsWithSecrets.pod("apps", "web", "node-1"), 0);
    long max = Long.MAX_VALUE;
    Summary.FsStats huge = new Summary.FsStats(null, null, null, max, null, null, 7L);
    Summary.FsStats small = new Summary.FsStats(null, null, null, 5L, null, null, 3L);
    List<Summary.ContainerStats> containers =
        List.of(
            new Summary.ContainerStats("a", null, huge, small),
            new Summary.ContainerStats("b", null, huge, small),
            new Summary.ContainerStats("c", null, small, small));
    PodStats s =
        PodFacts.stats(
            fact,
            new Summary.PodStats(
                new Summary.PodReference("web", "apps", fact.uid()),
                containers,
                null,
                null,
                null,
                null));
    BigInteger twoMaxPlusFive = BigInteger.valueOf(max).shiftLeft(1).add(BigInteger.valueOf(5));
    assertThat(s.totals().rootfsBytes()).isEqualTo(twoMaxPlusFive);
    assertThat(s.rootfsBytes()).isEqualTo(max);
    assertThat(s.totals().rootfsInodes()).isEqualTo(BigInteger.valueOf(17));
    assertThat(s.rootfsInodes()).isEqualTo(17);
    assertThat(s.totals().logsBytes()).isEqualTo(BigInteger.valueOf(15));
    assertThat(s.logsInodes()).isEqualTo(9);
  }

  @Test
  void statisticsSumsWithinALongAreMadeFromTheLongFieldsAndReadTheSame() {
    PodFact fact = PodFacts.of(PodsWithSecrets.pod("apps", "web", "node-1"), 0);
    Summary.FsStats rootfs = new Summary.FsStats(null, null, null, 3_000_000_000L, null, null, 40L);
    Summary.FsStats logs = new Summary.FsStats(null, null, null, 1_000_000L, null, null, 2L);
    PodStats s =
        PodFacts.stats(
            fact,
            new Summary.PodStats(
                new Summary.PodReference("web", "apps", fact.uid()),
                List.of(
                    new Summary.ContainerStats("a", null, rootfs, logs),
                    new Summary.ContainerStats("b", null, rootfs, logs)),
                null,
                null,
                null,
                null));
    // no exact copy kept: the fact makes it from its long fields, equal each time
    assertThat(s)
        .extracting(PodStats::totals)
        .isEqualTo(
            new PodStats.Totals(
                BigInteger.valueOf(6_000_000_000L),
                BigInteger.valueOf(80),
                BigInteger.valueOf(2_000_000L),
                BigInteger.valueOf(4),
                BigInteger.ZERO,
                BigInteger.ZERO));
    assertThat(s.totals().usage(true, true, true, false))
        .isEqualTo(BigInteger.valueOf(6_002_000_000L));
    assertThat(s.rootfsBytes()).isEqualTo(6_000_000_000L);
  }
}
