package dev.evictd.executor;

import dev.evictd.api.EvictionDecision;
import dev.evictd.api.EvictionOutcome;
import dev.evictd.api.PodRef;
import dev.evictd.kube.ApiResponse;
import dev.evictd.kube.KubeApi;
import dev.evictd.kube.RetryPolicy;
import dev.evictd.ports.PodEvictor;
import io.fabric8.kubernetes.api.model.DeleteOptions;
import io.fabric8.kubernetes.api.model.DeleteOptionsBuilder;
import java.time.Clock;
import java.time.temporal.ChronoUnit;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The {@code delete} method: marks the pod with the condition {@code DisruptionTarget} (status
 * True, reason {@value #REASON}, the decision's message), as the kubelet and the taint manager mark
 * their terminations, then deletes it with the decision's grace period. Both requests carry the
 * pod's uid (in the patch's metadata and as a delete precondition), so a pod recreated under the
 * same name is never touched; a decision whose pod has no uid writes nothing (FAILED). Paths are
 * built from percent-encoded segments ({@link KubeApi#podPath}).
 *
 * <p>Outcomes: EVICTED when the delete was accepted; NOT_FOUND when the pod is gone (404) or is
 * another pod now (409 on the uid precondition, or 422 on the status patch: the API server refuses
 * a patch whose metadata.uid is not the pod's - the pod was replaced); UNKNOWN when the delete was
 * sent and no answer came and one GET of the pod cannot tell ({@link UnansweredEviction}); FAILED
 * when the API server kept failing after the retry policy's attempts, or refused (e.g. 403). A
 * failed condition patch is logged and the delete still goes ahead: freeing the node matters more
 * than the condition. Requests that got no answer are not repeated, so one eviction costs at most
 * three request timeouts (patch, delete, the GET that checks).
 */
public final class ApiDeleteEvictor implements PodEvictor {
  private static final Logger LOG = LoggerFactory.getLogger(ApiDeleteEvictor.class);

  /** The pod condition type set before deleting. */
  public static final String CONDITION = "DisruptionTarget";

  /** The condition's reason. */
  public static final String REASON = "TerminationByEvictd";

  private final KubeApi api;
  private final RetryPolicy retry;
  private final Clock clock;

  /** Deletes through {@code api}, retrying transient failures with {@code retry}. */
  public ApiDeleteEvictor(KubeApi api, RetryPolicy retry, Clock clock) {
    this.api = api;
    this.retry = retry;
    this.clock = clock;
  }

  @Override
  public EvictionOutcome evict(EvictionDecision decision) {
    PodRef pod = decision.pod();
    if (!KubeApi.isUid(pod.uid())) {
      // without the uid precondition a pod recreated under the name would be hit
      LOG.warn("delete {}: the pod has no uid; nothing is written without a uid precondition", pod);
      return EvictionOutcome.FAILED;
    }
    String path = KubeApi.podPath(pod.namespace(), pod.name());

    String patch = api.json(conditionPatch(decision));
    ApiResponse patched =
        retry.run(
            "patch status of " + pod,
            () -> api.patch(path + "/status", KubeApi.STRATEGIC_MERGE_PATCH, patch),
            ApiResponse::isRetryableWrite);
    if (patched.code() == 404) {
      LOG.info("delete {}: pod already gone", pod);
      return EvictionOutcome.NOT_FOUND;
    }
    if (patched.code() == 422 && KubeApi.isUid(pod.uid())) {
      // the uid in the patch is not the stored pod's: a new pod has the name now
      LOG.info(
          "delete {}: pod replaced, another pod has its name now ({}); not deleted",
          pod,
          patched.describe());
      return EvictionOutcome.NOT_FOUND;
    }
    if (!patched.isSuccess()) {
      LOG.warn(
          "delete {}: condition {} not set ({}); deleting anyway",
          pod,
          CONDITION,
          patched.describe());
    }

    long grace = ApiGracePeriod.of(decision.gracePeriodSeconds());
    String options = api.json(deleteOptions(pod, grace));
    ApiResponse deleted =
        retry.run("delete " + pod, () -> api.delete(path, options), ApiResponse::isRetryableWrite);
    if (deleted.isSuccess()) {
      LOG.info("deleted {} (grace period {} s): {}", pod, grace, decision.message());
      return EvictionOutcome.EVICTED;
    }
    if (deleted.code() == 404) {
      LOG.info("delete {}: pod already gone", pod);
      return EvictionOutcome.NOT_FOUND;
    }
    if (deleted.code() == 409) {
      LOG.info(
          "delete {}: pod already gone, another pod has its name now ({})",
          pod,
          deleted.describe());
      return EvictionOutcome.NOT_FOUND;
    }
    if (deleted.code() == 0 && deleted.maybeCarriedOut()) {
      return UnansweredEviction.check(api, pod, "delete", deleted);
    }
    LOG.warn("delete {}: failed: {}", pod, deleted.describe());
    return EvictionOutcome.FAILED;
  }

  /**
   * The strategic merge patch of the pod's status: conditions merge by type, the uid guards against
   * a new pod.
   */
  Map<String, Object> conditionPatch(EvictionDecision decision) {
    Map<String, Object> condition = new LinkedHashMap<>();
    condition.put("type", CONDITION);
    condition.put("status", "True");
    condition.put("reason", REASON);
    condition.put("message", decision.message());
    condition.put("lastTransitionTime", clock.instant().truncatedTo(ChronoUnit.SECONDS).toString());
    Map<String, Object> patch = new LinkedHashMap<>();
    patch.put("metadata", Map.of("uid", decision.pod().uid()));
    patch.put("status", Map.of("conditions", List.of(condition)));
    return patch;
  }

  static DeleteOptions deleteOptions(PodRef pod, long graceSeconds) {
    return new DeleteOptionsBuilder()
        .withGracePeriodSeconds(graceSeconds)
        .withNewPreconditions()
        .withUid(pod.uid())
        .endPreconditions()
        .build();
  }
}
