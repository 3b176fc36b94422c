package dev.evictd.engine;

import static org.assertj.core.api.Assertions.assertThat;

import dev.evictd.api.PodFact;
import dev.evictd.testing.PodsWithSecrets;
import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.client.utils.KubernetesSerialization;
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
    var c = fact.pod().getSpec().getContainers().get(0);
    assertThat(c.getEnv()).isEmpty();
    assertThat(c.getCommand()).isEmpty();
    assertThat(c.getArgs()).isEmpty();
    // what eviction policies use stays: names, labels, other annotations, resources, node
    assertThat(c.getName()).isEqualTo("app");
    assertThat(c.getImage()).isEqualTo("busybox");
    assertThat(c.getResources().getRequests()).containsKey("memory");
    assertThat(fact.pod().getMetadata().getLabels()).containsEntry("app", "web");
    assertThat(fact.pod().getMetadata().getAnnotations())
        .containsEntry("team", "payments")
        .doesNotContainKey(PodFacts.LAST_APPLIED);
    assertThat(fact.pod().getSpec().getNodeName()).isEqualTo("node-1");
    assertThat(fact.memoryRequest().value()).isEqualTo(64L << 20);
    // the agent's own copy is untouched
    assertThat(new KubernetesSerialization().asJson(original)).isEqualTo(before);
  }
}
