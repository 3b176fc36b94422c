package dev.evictd.testing;

import dev.evictd.api.EvictionDecision;
import dev.evictd.api.EvictionMethod;
import dev.evictd.api.PodRef;
import io.fabric8.kubernetes.api.model.NodeBuilder;
import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.PodBuilder;
import io.fabric8.kubernetes.client.KubernetesClient;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ThreadLocalRandom;

/**
 * What a test creates on the real API server, as the admin, removed again by {@link #close()}: one
 * namespace of its own (name with a random suffix), Nodes, and pods in kube-system (an agent's pod,
 * for a bound service-account token). Pods are bound to a node by spec.nodeName (no scheduler) and
 * their deletion is forced on close (no kubelet removes them).
 */
public final class TestBedCluster implements AutoCloseable {
  private final TestBed bed;
  private final KubernetesClient admin;
  private final String namespace;
  private final List<String> nodes = new ArrayList<>();
  private final List<String> systemPods = new ArrayList<>();

  /** A fresh namespace named {@code prefix}-RANDOM, with its default ServiceAccount (ns.sh). */
  public TestBedCluster(TestBed bed, KubernetesClient admin, String prefix) {
    this.bed = bed;
    this.admin = admin;
    this.namespace =
        prefix + "-" + Integer.toString(ThreadLocalRandom.current().nextInt(1 << 20, 1 << 24), 36);
    bed.script("ns.sh", namespace);
  }

  /** The test's namespace. */
  public String namespace() {
    return namespace;
  }

  /** Creates Node {@code name} (the API server adds its not-ready taint). */
  public String node(String name) {
    admin
        .nodes()
        .resource(
            new NodeBuilder()
                .withNewMetadata()
                .withName(name)
                .withLabels(Map.of("kubernetes.io/hostname", name))
                .endMetadata()
                .build())
        .create();
    nodes.add(name);
    return name;
  }

  /** A one-container pod {@code name} on {@code node} in the test's namespace. */
  public Pod pod(String name, String node, Map<String, String> labels) {
    return create(namespace, name, node, labels, null);
  }

  /** A pod of ServiceAccount kube-system/evictd on {@code node}: the agent a token is bound to. */
  public Pod agentPod(String name, String node) {
    systemPods.add(name);
    return create("kube-system", name, node, Map.of(), "evictd");
  }

  private Pod create(
      String ns, String name, String node, Map<String, String> labels, String serviceAccount) {
    return admin
        .pods()
        .inNamespace(ns)
        .resource(
            new PodBuilder()
                .withNewMetadata()
                .withName(name)
                .withNamespace(ns)
                .withLabels(labels)
                .endMetadata()
                .withNewSpec()
                .withNodeName(node)
                .withServiceAccountName(serviceAccount)
                .withAutomountServiceAccountToken(serviceAccount != null)
                .addNewContainer()
                .withName("c")
                .withImage("testbed.local/pause:1")
                .endContainer()
                .endSpec()
                .build())
        .create();
  }

  /** The pod as stored now, or null when gone. */
  public Pod get(String name) {
    return admin.pods().inNamespace(namespace).withName(name).get();
  }

  /**
   * A service-account token of kube-system/evictd bound to the agent pod {@code pod} (so it carries
   * the pod's node name), or unbound (no node name) when {@code pod} is null.
   */
  public String evictdToken(String pod) {
    List<String> args = new ArrayList<>(List.of("create", "token", "evictd", "-n", "kube-system"));
    if (pod != null) {
      args.addAll(List.of("--bound-object-kind", "Pod", "--bound-object-name", pod));
    }
    return bed.kubectl(null, args.toArray(String[]::new)).strip();
  }

  /** A pressure decision for {@code pod} as the planner makes it. */
  public static EvictionDecision decision(Pod pod, long graceSeconds, EvictionMethod method) {
    return new EvictionDecision(
        new PodRef(
            pod.getMetadata().getNamespace(),
            pod.getMetadata().getName(),
            pod.getMetadata().getUid()),
        EvictionDecision.Kind.PRESSURE,
        "memory.available",
        graceSeconds,
        "The node was low on resource: memory. ",
        Map.of(),
        method,
        List.of("test"));
  }

  /**
   * Forces every pod of the test away, then removes its Events, namespace (finalized by hand: no
   * namespace controller here), pods in kube-system, and Nodes with their Events.
   */
  @Override
  public void close() {
    admin.pods().inNamespace(namespace).withGracePeriod(0).delete();
    for (String p : systemPods) {
      admin.pods().inNamespace("kube-system").withName(p).withGracePeriod(0).delete();
    }
    admin.v1().events().inNamespace(namespace).delete();
    admin.namespaces().withName(namespace).delete();
    var api = new dev.evictd.kube.KubeApi(admin, java.time.Duration.ofSeconds(10));
    api.send(
        "PUT",
        "/api/v1/namespaces/" + namespace + "/finalize",
        dev.evictd.kube.KubeApi.JSON,
        "{\"apiVersion\":\"v1\",\"kind\":\"Namespace\",\"metadata\":{\"name\":\""
            + namespace
            + "\"},\"spec\":{\"finalizers\":[]}}");
    for (String n : nodes) {
      admin.v1().events().inNamespace("default").withField("involvedObject.name", n).delete();
      admin.nodes().withName(n).delete();
    }
  }
}
