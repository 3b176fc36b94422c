package dev.evictd.engine;

import static org.assertj.core.api.Assertions.assertThat;

import dev.evictd.testing.PodsWithSecrets;
import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.client.utils.KubernetesSerialization;
import org.junit.jupiter.api.Test;

/** Smaller long-lived pod copies that read, compare and serialize as the originals. */
class PodCompactionTest {
  private static final KubernetesSerialization JSON = new KubernetesSerialization();

  private static Pod parse(String json) {
    return JSON.unmarshal(json, Pod.class);
  }

  @Test
  void aCompactedPodIsEqualToAndSerializesAsTheOriginalWithItsEmptyCollectionsShared() {
    String json = JSON.asJson(PodsWithSecrets.pod("apps", "web", "node-1"));
    Pod original = parse(json);
    Pod a = PodCompaction.shareEmpty(parse(json));
    Pod b = PodCompaction.shareEmpty(parse(json));

    assertThat(a).isEqualTo(original).hasSameHashCodeAs(original);
    assertThat(JSON.asJson(a)).isEqualTo(json);
    // the empty lists and maps of two pods are one shared object, at every depth
    assertThat(a.getSpec().getVolumes()).isEmpty();
    assertThat(a.getSpec().getVolumes()).isSameAs(b.getSpec().getVolumes());
    assertThat(a.getSpec().getNodeSelector()).isSameAs(b.getSpec().getNodeSelector());
    assertThat(a.getSpec().getContainers().get(0).getPorts())
        .isSameAs(b.getSpec().getContainers().get(0).getPorts());
    assertThat(a.getMetadata().getFinalizers()).isSameAs(b.getMetadata().getFinalizers());
    // filled ones are kept as they are
    assertThat(a.getMetadata().getLabels()).containsEntry("app", "web");
    assertThat(a.getSpec().getContainers().get(0).getResources().getRequests())
        .containsKey("memory");
  }

  @Test
  void theStoresPodHasNothingRulesMustNotReadAndReadsAsTheRulesCopy() {
    Pod original = PodsWithSecrets.pod("apps", "web", "node-1");
    Pod rules = PodFacts.visibleToRules(original);
    Pod stored = PodCompaction.forStore(parse(JSON.asJson(original)));

    String seen = JSON.asJson(stored);
    for (String s : PodsWithSecrets.SECRETS) {
      assertThat(seen).as("the store keeps no %s", s).doesNotContain(s);
    }
    assertThat(stored).isEqualTo(rules);
    assertThat(stored.getMetadata().getAnnotations())
        .containsEntry("team", "payments")
        .doesNotContainKey(PodFacts.LAST_APPLIED);
    // a rules copy made from the stored pod is the same as one made from the full pod
    assertThat(PodFacts.visibleToRules(stored)).isEqualTo(rules);
  }
}
