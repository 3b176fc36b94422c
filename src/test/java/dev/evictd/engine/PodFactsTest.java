package dev.evictd.engine;

import static org.assertj.core.api.Assertions.assertThat;

import dev.evictd.api.PodFact;
import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.PodBuilder;
import io.fabric8.kubernetes.client.utils.KubernetesSerialization;
import java.util.List;
import org.junit.jupiter.api.Test;

/** What rules can read of a pod: nothing that holds secrets. */
class PodFactsTest {
  /** Each planted value is a secret a pod spec can carry; none may reach the rules. */
  static final List<String> SECRETS =
      List.of(
          "env-value-secret",
          "secret-ref-name",
          "configmap-ref-name",
          "envfrom-secret-name",
          "command-secret",
          "args-secret",
          "probe-secret",
          "probe-header-secret",
          "hook-secret",
          "init-env-secret",
          "init-command-secret",
          "ephemeral-env-secret",
          "last-applied-secret",
          "managed-fields-secret");

  /** A pod with a secret in every place evictd hides from rules. */
  public static Pod podWithSecrets(String namespace, String name, String node) {
    return new PodBuilder()
        .withNewMetadata()
        .withNamespace(namespace)
        .withName(name)
        .addToLabels("app", name)
        .addToAnnotations(
            PodFacts.LAST_APPLIED,
            "{\"spec\":{\"containers\":[{\"env\":[{\"value\":\"last-applied-secret\"}]}]}}")
        .addToAnnotations("team", "payments")
        .addNewManagedField()
        .withManager("kubectl")
        .withNewFieldsV1()
        .addToAdditionalProperties("f:managed-fields-secret", "{}")
        .endFieldsV1()
        .endManagedField()
        .endMetadata()
        .withNewSpec()
        .withNodeName(node)
        .addNewContainer()
        .withName("app")
        .withImage("busybox")
        .addNewEnv()
        .withName("DB_PASSWORD")
        .withValue("env-value-secret")
        .endEnv()
        .addNewEnv()
        .withName("API_TOKEN")
        .withNewValueFrom()
        .withNewSecretKeyRef("token", "secret-ref-name", false)
        .endValueFrom()
        .endEnv()
        .addNewEnv()
        .withName("CONFIG")
        .withNewValueFrom()
        .withNewConfigMapKeyRef("cfg", "configmap-ref-name", false)
        .endValueFrom()
        .endEnv()
        .addNewEnvFrom()
        .withNewSecretRef("envfrom-secret-name", false)
        .endEnvFrom()
        .withCommand("sh", "-c", "serve --token=command-secret")
        .withArgs("--password=args-secret")
        .withNewLivenessProbe()
        .withNewExec()
        .withCommand("check", "probe-secret")
        .endExec()
        .endLivenessProbe()
        .withNewReadinessProbe()
        .withNewHttpGet()
        .withPath("/ready")
        .addNewHttpHeader("Authorization", "Bearer probe-header-secret")
        .endHttpGet()
        .endReadinessProbe()
        .withNewLifecycle()
        .withNewPreStop()
        .withNewExec()
        .withCommand("drain", "hook-secret")
        .endExec()
        .endPreStop()
        .endLifecycle()
        .withNewResources()
        .addToRequests("memory", new io.fabric8.kubernetes.api.model.Quantity("64Mi"))
        .endResources()
        .endContainer()
        .addNewInitContainer()
        .withName("init")
        .addNewEnv()
        .withName("INIT")
        .withValue("init-env-secret")
        .endEnv()
        .withCommand("init-command-secret")
        .endInitContainer()
        .addNewEphemeralContainer()
        .withName("debug")
        .addNewEnv()
        .withName("DEBUG")
        .withValue("ephemeral-env-secret")
        .endEnv()
        .endEphemeralContainer()
        .endSpec()
        .build();
  }

  @Test
  void thePodRulesReadHasNoEnvCommandArgsProbesHooksManagedFieldsOrLastAppliedConfiguration() {
    Pod original = podWithSecrets("apps", "web", "node-1");
    String before = new KubernetesSerialization().asJson(original);
    for (String s : SECRETS) {
      assertThat(before).as("the test pod carries %s", s).contains(s);
    }
    PodFact fact = PodFacts.of(original, 0);
    String seen = new KubernetesSerialization().asJson(fact.pod());
    for (String s : SECRETS) {
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
