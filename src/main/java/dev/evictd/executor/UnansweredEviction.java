package dev.evictd.executor;

import dev.evictd.api.EvictionOutcome;
import dev.evictd.api.PodRef;
import dev.evictd.kube.ApiResponse;
import dev.evictd.kube.KubeApi;
import io.fabric8.kubernetes.api.model.Pod;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Finds out what became of a delete or Eviction that got no answer (a timeout, a connection dropped
 * after sending): the server may have carried it out, so it is neither retried nor counted as
 * failed. One GET of the pod tells: gone (404, or another pod under the name) is NOT_FOUND; a
 * deletionTimestamp on the same pod is EVICTED; anything else (still there without one, or no
 * answer again) is UNKNOWN, and the agent keeps watching the pod before it acts again.
 */
final class UnansweredEviction {
  private static final Logger LOG = LoggerFactory.getLogger(UnansweredEviction.class);

  private UnansweredEviction() {}

  static EvictionOutcome check(KubeApi api, PodRef pod, String what, ApiResponse unanswered) {
    ApiResponse r = api.get(KubeApi.podPath(pod.namespace(), pod.name()));
    if (r.code() == 404) {
      LOG.info("{} {}: {}; the pod is gone now", what, pod, unanswered.describe());
      return EvictionOutcome.NOT_FOUND;
    }
    if (r.isSuccess()) {
      Pod current;
      try {
        current = api.parse(r.body(), Pod.class);
      } catch (RuntimeException e) {
        current = null;
      }
      if (current != null && current.getMetadata() != null) {
        String uid = current.getMetadata().getUid();
        if (KubeApi.isUid(pod.uid()) && uid != null && !uid.equals(pod.uid())) {
          LOG.info("{} {}: {}; another pod has its name now", what, pod, unanswered.describe());
          return EvictionOutcome.NOT_FOUND;
        }
        if (current.getMetadata().getDeletionTimestamp() != null) {
          LOG.info(
              "{} {}: {}; carried out (deletionTimestamp {})",
              what,
              pod,
              unanswered.describe(),
              current.getMetadata().getDeletionTimestamp());
          return EvictionOutcome.EVICTED;
        }
      }
    }
    LOG.warn(
        "{} {}: {}; outcome UNKNOWN ({}): the pod is watched before anything else is evicted",
        what,
        pod,
        unanswered.describe(),
        r.isSuccess() ? "not being deleted yet" : "checking it: " + r.describe());
    return EvictionOutcome.UNKNOWN;
  }
}
