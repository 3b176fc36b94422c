package dev.evictd.kube;

import dev.evictd.api.StatsException;
import dev.evictd.stats.Summary;
import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.client.KubernetesClient;
import java.time.Clock;
import java.time.Duration;
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
 * @param kubeletVersion the Node's {@code status.nodeInfo.kubeletVersion}, null when it reports
 *     none
 */
public record NodeCapture(
    Map<String, Object> kubeletConfig, List<Pod> pods, Summary summary, String kubeletVersion) {

  /** Reads the three documents; a failed read is an error naming what could not be read. */
  public static NodeCapture of(KubernetesClient client, KubeApi api, String node) {
    return of(client, api, node, null);
  }

  /**
   * Reads the three documents, /configz and the summary from {@code kubelet} directly when given
   * (else through the API server's node proxy); a failed read is an error naming what could not be
   * read.
   */
  @SuppressWarnings("unchecked")
  public static NodeCapture of(
      KubernetesClient client, KubeApi api, String node, KubeletEndpoint kubelet) {
    // a capture keeps whatever the kubelet reports, however old
    Duration timeout = Duration.ofSeconds(30);
    Duration anyAge = Duration.ofDays(3650);
    Summary summary;
    ApiResponse cz;
    String where;
    if (kubelet == null) {
      cz = api.get("/api/v1/nodes/" + KubeApi.segment(node) + "/proxy/configz");
      where = "";
      summary = null;
    } else {
      try (KubeletSummaryProvider direct =
          KubeletSummaryProvider.direct(kubelet, node, timeout, anyAge, Clock.systemUTC())) {
        cz = direct.get("/configz");
        where = " at " + kubelet.baseUri();
        summary = cz.isSuccess() ? direct.summary() : null;
      }
    }
    if (!cz.isSuccess()) {
      throw new StatsException(
          "node "
              + node
              + ": cannot read the kubelet configuration (/configz"
              + where
              + "): "
              + cz.describe());
    }
    Map<String, Object> root = api.parse(cz.body(), Map.class);
    Object kc = root == null ? null : root.get("kubeletconfig");
    if (!(kc instanceof Map<?, ?>)) {
      throw new StatsException("node " + node + ": /configz has no kubeletconfig object");
    }
    if (summary == null) {
      summary =
          KubeletSummaryProvider.viaApiServer(client, node, timeout, anyAge, Clock.systemUTC())
              .summary();
    }
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
    String version;
    try {
      version = kubeletVersion(client, node);
    } catch (io.fabric8.kubernetes.client.KubernetesClientException e) {
      // the version is for the fixture's kubelet key; without it the capture still stands
      version = null;
    }
    return new NodeCapture((Map<String, Object>) kc, pods, summary, version);
  }

  /**
   * The Node's {@code status.nodeInfo.kubeletVersion}, null when the Node reports none.
   *
   * @throws RuntimeException when the Node cannot be read
   */
  public static String kubeletVersion(KubernetesClient client, String node) {
    io.fabric8.kubernetes.api.model.Node n = client.nodes().withName(node).get();
    String v =
        n == null || n.getStatus() == null || n.getStatus().getNodeInfo() == null
            ? null
            : n.getStatus().getNodeInfo().getKubeletVersion();
    return v == null || v.isBlank() ? null : v;
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
