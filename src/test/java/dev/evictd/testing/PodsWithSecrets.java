package dev.evictd.testing;

import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.PodBuilder;
import java.util.List;

/** A pod with a planted secret in every field evictd hides from rules, and the planted values. */
public final class PodsWithSecrets {
  private PodsWithSecrets() {}

  /** Each planted value is a secret a pod spec can carry; none may reach the rules. */
  public static final List<String> SECRETS =
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
  public static Pod pod(String namespace, String name, String node) {
    return new PodBuilder()
        .withNewMetadata()
        .withNamespace(namespace)
        .withName(name)
        .addToLabels("app", name)
        .addToAnnotations(
            dev.evictd.engine.PodFacts.LAST_APPLIED,
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
}
