package dev.evictd.kube;

import io.fabric8.kubernetes.api.model.Pod;
import java.util.ArrayList;
import java.util.List;

/**
 * The pods of a capture that the kubelet of one node counts as active, as the agent's informer
 * keeps them: a capture of every node's pods ({@code kubectl get pods -A}) or one with finished
 * pods is narrowed to those. A pod without spec.nodeName (as in a hand-written file) is kept.
 *
 * @param nodeName the node narrowed to
 * @param active the pods kept, in the capture's order
 * @param total how many pods the capture held
 * @param onOtherNodes how many were left out as bound to another node
 * @param finished how many were left out as finished (Succeeded or Failed)
 */
public record NodePods(
    String nodeName, List<Pod> active, int total, int onOtherNodes, int finished) {
  public NodePods {
    active = List.copyOf(active);
  }

  /** The pods of {@code pods} that the kubelet of {@code nodeName} counts as active. */
  public static NodePods of(List<Pod> pods, String nodeName) {
    List<Pod> kept = new ArrayList<>(pods.size());
    int elsewhere = 0;
    int finished = 0;
    for (Pod p : pods) {
      String on = p.getSpec() == null ? null : p.getSpec().getNodeName();
      if (on != null && !on.isEmpty() && !on.equals(nodeName)) {
        elsewhere++;
      } else if (!NodePodInformer.isActive(p)) {
        finished++;
      } else {
        kept.add(p);
      }
    }
    return new NodePods(nodeName, kept, pods.size(), elsewhere, finished);
  }

  /** How many pods were left out. */
  public int leftOut() {
    return onOtherNodes + finished;
  }

  /**
   * What was left out and why, one line per reason ({@code source: ...}), none when nothing was;
   * {@code nodeOption} is how the user names the node (a flag), said beside the other nodes' count.
   */
  public List<String> reasons(String source, String nodeOption) {
    List<String> out = new ArrayList<>(2);
    if (onOtherNodes > 0) {
      out.add(
          source
              + ": "
              + onOtherNodes
              + " of "
              + total
              + " pods run on other nodes than "
              + nodeName
              + " and are left out (capture with --field-selector spec.nodeName="
              + nodeName
              + ", or name the node with "
              + nodeOption
              + ")");
    }
    if (finished > 0) {
      out.add(
          source
              + ": "
              + finished
              + " finished pods (Succeeded or Failed) are left out, as the kubelet leaves them out");
    }
    return out;
  }
}
