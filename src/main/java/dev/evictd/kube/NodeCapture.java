package dev.evictd.kube;

import dev.evictd.api.StatsException;
import dev.evictd.stats.Summary;
import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.client.KubernetesClient;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;

/**
 * Snapshots a live node for a fixture: the kubelet's running configuration ({@code /configz}
 * through the node proxy), the node's active pods, and its stats Summary.
 *
 * @param kubeletConfig the {@code kubeletconfig} object of /configz, as a map
 * @param pods the node's active pods, in the informer's order
 * @param summary the stats summary
 */
public record NodeCapture(Map<String, Object> kubeletConfig, List<Pod> pods, Summary summary) {

  /** Reads the three documents; a failed read is an error naming what could not be read. */
  @SuppressWarnings("unchecked")
  public static NodeCapture of(KubernetesClient client, KubeApi api, String node) {
    ApiResponse cz = api.get("/api/v1/nodes/" + KubeApi.segment(node) + "/proxy/configz");
    if (!cz.isSuccess()) {
      throw new StatsException(
          "node " + node + ": cannot read the kubelet configuration (/configz): " + cz.describe());
    }
    Map<String, Object> root = api.parse(cz.body(), Map.class);
    Object kc = root == null ? null : root.get("kubeletconfig");
    if (!(kc instanceof Map<?, ?>)) {
      throw new StatsException("node " + node + ": /configz has no kubeletconfig object");
    }
    // a capture keeps whatever the kubelet reports, however old
    Summary summary =
        KubeletSummaryProvider.viaApiServer(
                client,
                node,
                java.time.Duration.ofSeconds(30),
                java.time.Duration.ofDays(3650),
                java.time.Clock.systemUTC())
            .summary();
    List<Pod> pods = new ArrayList<>();
    for (Pod p :
        client
            .pods()
            .inAnyNamespace()
            .withField(NodePodInformer.NODE_NAME_FIELD, node)
            .list()
            .getItems()) {
      if (p.getSpec() != null
          && node.equals(p.getSpec().getNodeName())
          && NodePodInformer.isActive(p)) {
        pods.add(p);
      }
    }
    pods.sort(NodePodInformer.ORDER);
    return new NodeCapture((Map<String, Object>) kc, pods, summary);
  }

  /** The captured pods without what a fixture does not need (status, managed fields). */
  public List<Pod> trimmedPods() {
    List<Pod> out = new ArrayList<>();
    for (Pod p : pods) {
      Pod copy = new io.fabric8.kubernetes.api.model.PodBuilder(p).withStatus(null).build();
      if (copy.getMetadata() != null) {
        copy.getMetadata().setManagedFields(null);
        copy.getMetadata().setResourceVersion(null);
      }
      out.add(copy);
    }
    return out;
  }
}
