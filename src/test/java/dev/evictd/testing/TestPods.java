package dev.evictd.testing;

import dev.evictd.api.EvictionDecision;
import dev.evictd.api.EvictionMethod;
import dev.evictd.api.PodRef;
import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.PodBuilder;
import java.util.List;
import java.util.Map;

/** Pods and decisions for tests. */
public final class TestPods {
  private TestPods() {}

  /** A running pod {@code namespace/name} bound to {@code node}. */
  public static Pod pod(String namespace, String name, String node) {
    return new PodBuilder()
        .withNewMetadata()
        .withNamespace(namespace)
        .withName(name)
        .withUid("uid-" + namespace + "-" + name)
        .endMetadata()
        .withNewSpec()
        .withNodeName(node)
        .addNewContainer()
        .withName("main")
        .withImage("busybox")
        .endContainer()
        .endSpec()
        .withNewStatus()
        .withPhase("Running")
        .endStatus()
        .build();
  }

  /** A memory-pressure decision for {@code pod} with {@code method}. */
  public static EvictionDecision decision(Pod pod, long grace, EvictionMethod method) {
    return decision(
        new PodRef(
            pod.getMetadata().getNamespace(),
            pod.getMetadata().getName(),
            pod.getMetadata().getUid()),
        grace,
        method);
  }

  /** A memory-pressure decision for {@code pod} with {@code method}. */
  public static EvictionDecision decision(PodRef pod, long grace, EvictionMethod method) {
    return new EvictionDecision(
        pod,
        EvictionDecision.Kind.PRESSURE,
        "memory.available",
        grace,
        "The node was low on resource: memory. Threshold quantity: 100Mi, available: 50Mi. Container main was "
            + "using 600Mi, request is 0, has larger consumption of memory. ",
        Map.of(
            "offending_containers", "main",
            "offending_containers_usage", "600Mi",
            "starved_resource", "memory"),
        method,
        List.of("evict the first pod in rank order that is not exempt"));
  }
}
