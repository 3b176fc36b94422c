package dev.evictd.engine;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.evictd.testing.PodsWithSecrets;
import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.client.utils.KubernetesSerialization;
import java.util.List;
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

  @Test
  void theStoresPodIsFrozenSoTheRulesReadItInsteadOfACopy() {
    String json = JSON.asJson(PodsWithSecrets.pod("apps", "web", "node-1"));
    Pod stored = PodCompaction.forStore(parse(json));
    Pod other = PodCompaction.forStore(parse(json.replace("\"web\"", "\"api\"")));

    assertThat(PodCompaction.isFrozen(stored)).isTrue();
    assertThat(PodFacts.visibleToRules(stored)).isSameAs(stored);
    // the fact carries a value copied from it (api.PodObject), sharing its frozen maps
    assertThat(PodFacts.of(stored, 0).pod().metadata().labels())
        .isSameAs(stored.getMetadata().getLabels());
    assertThat(PodFacts.of(stored, 0).labels()).isSameAs(stored.getMetadata().getLabels());
    // its small maps in one array each (FrozenMap), its larger ones behind an unmodifiable view
    assertThat(stored.getMetadata().getLabels()).isInstanceOf(FrozenMap.class);
    assertThat(stored.getSpec().getContainers().get(0).getResources().getRequests())
        .isInstanceOf(FrozenMap.class);
    // nothing in it can be changed through a getter
    assertThatThrownBy(() -> stored.getMetadata().getLabels().put("app", "x"))
        .isInstanceOf(UnsupportedOperationException.class);
    assertThatThrownBy(() -> stored.getSpec().getContainers().clear())
        .isInstanceOf(UnsupportedOperationException.class);
    assertThatThrownBy(
            () -> stored.getSpec().getContainers().get(0).getResources().getRequests().clear())
        .isInstanceOf(UnsupportedOperationException.class);
    // repeated strings of two pods parsed apart are one object; a pod's own name is not interned
    assertThat(other.getMetadata().getNamespace()).isSameAs(stored.getMetadata().getNamespace());
    assertThat(other.getSpec().getContainers().get(0).getImage())
        .isSameAs(stored.getSpec().getContainers().get(0).getImage());
    assertThat(other.getMetadata().getAnnotations().keySet().iterator().next())
        .isSameAs(stored.getMetadata().getAnnotations().keySet().iterator().next());
    // and it still reads, compares and serializes as the rules' copy of the full pod
    Pod rules = PodFacts.visibleToRules(parse(json));
    assertThat(rules).isNotSameAs(stored).isEqualTo(stored).hasSameHashCodeAs(stored);
    assertThat(JSON.asJson(stored)).isEqualTo(JSON.asJson(rules));
  }

  @Test
  void aPodThatStillHoldsWhatRulesMustNotReadOrAChangeableListIsCopiedForTheRules() {
    Pod full = parse(JSON.asJson(PodsWithSecrets.pod("apps", "web", "node-1")));
    assertThat(PodCompaction.isFrozen(full)).isFalse();
    Pod copy = PodFacts.visibleToRules(full);
    assertThat(copy).isNotSameAs(full);
    assertThat(copy.getSpec().getContainers().get(0).getEnv()).isEmpty();

    // frozen, then given a list that can be changed: no longer shared
    Pod stored = PodCompaction.forStore(parse(JSON.asJson(full)));
    stored.getMetadata().setFinalizers(new java.util.ArrayList<>(List.of("x")));
    assertThat(PodCompaction.isFrozen(stored)).isFalse();
    assertThat(PodFacts.visibleToRules(stored)).isNotSameAs(stored).isEqualTo(stored);
  }
}
