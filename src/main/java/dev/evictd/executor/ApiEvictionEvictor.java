package dev.evictd.executor;

import dev.evictd.api.EvictionDecision;
import dev.evictd.api.EvictionOutcome;
import dev.evictd.api.PodRef;
import dev.evictd.kube.ApiResponse;
import dev.evictd.kube.KubeApi;
import dev.evictd.kube.RetryPolicy;
import dev.evictd.ports.EvictionResult;
import dev.evictd.ports.PodEvictor;
import io.fabric8.kubernetes.api.model.policy.v1.Eviction;
import io.fabric8.kubernetes.api.model.policy.v1.EvictionBuilder;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The {@code evict} method: posts a policy/v1 Eviction for the pod, which the API server refuses
 * with 429 when a PodDisruptionBudget does not allow it. The Eviction carries the decision's grace
 * period and the pod's uid as a precondition; the API server itself sets the pod's DisruptionTarget
 * condition. A decision whose pod has no uid writes nothing (FAILED).
 *
 * <p>Outcomes: EVICTED (accepted); PDB_BLOCKED at once on a 429 whose cause is {@code
 * DisruptionBudget}, after one request, with the budget's message as the detail, so the rules can
 * pick another pod or escalate; NOT_FOUND (404, or 409 on the uid precondition); UNKNOWN when the
 * request was sent and no answer came and one GET of the pod cannot tell (see {@link
 * UnansweredEviction}); FAILED when the API server kept failing after the retry policy's attempts
 * (5xx, connection refused, throttling 429s - retried after their {@code Retry-After}) or refused
 * (e.g. 403).
 */
public final class ApiEvictionEvictor implements PodEvictor {
  private static final Logger LOG = LoggerFactory.getLogger(ApiEvictionEvictor.class);

  private final KubeApi api;
  private final RetryPolicy retry;

  /** Evicts through {@code api}, retrying 5xx answers and lost requests with {@code retry}. */
  public ApiEvictionEvictor(KubeApi api, RetryPolicy retry) {
    this.api = api;
    this.retry = retry;
  }

  @Override
  public EvictionOutcome evict(EvictionDecision decision) {
    return attempt(decision).outcome();
  }

  @Override
  public EvictionResult attempt(EvictionDecision decision) {
    PodRef pod = decision.pod();
    if (!KubeApi.isUid(pod.uid())) {
      LOG.warn("evict {}: the pod has no uid; nothing is written without a uid precondition", pod);
      return new EvictionResult(EvictionOutcome.FAILED, "the pod has no uid");
    }
    long grace = ApiGracePeriod.of(decision.gracePeriodSeconds());
    String body = api.json(eviction(pod, grace));
    String path = KubeApi.podPath(pod.namespace(), pod.name()) + "/eviction";
    // a budget's 429 is final; a throttling 429 is retried after its Retry-After; a request that
    // got no answer is checked, never repeated
    ApiResponse r =
        retry.run("evict " + pod, () -> api.post(path, body), x -> x.isRetryableWrite());
    if (r.isSuccess()) {
      LOG.info("evicted {} (grace period {} s): {}", pod, grace, decision.message());
      return EvictionResult.of(EvictionOutcome.EVICTED);
    }
    String budget = r.disruptionBudgetCause();
    if (budget != null) {
      LOG.info("evict {}: refused by a disruption budget: {}", pod, r.describe());
      return new EvictionResult(EvictionOutcome.PDB_BLOCKED, budget);
    }
    if (r.code() == 404) {
      LOG.info("evict {}: pod already gone", pod);
      return EvictionResult.of(EvictionOutcome.NOT_FOUND);
    }
    if (r.code() == 409) {
      LOG.info("evict {}: pod already gone, another pod has its name now ({})", pod, r.describe());
      return EvictionResult.of(EvictionOutcome.NOT_FOUND);
    }
    if (r.code() == 0 && r.maybeCarriedOut()) {
      return EvictionResult.of(UnansweredEviction.check(api, pod, "evict", r));
    }
    LOG.warn(
        "evict {}: failed{}: {}",
        pod,
        r.isThrottled() ? " (throttled by the API server)" : "",
        r.describe());
    return new EvictionResult(EvictionOutcome.FAILED, r.describe());
  }

  static Eviction eviction(PodRef pod, long graceSeconds) {
    return new EvictionBuilder()
        .withNewMetadata()
        .withName(pod.name())
        .withNamespace(pod.namespace())
        .endMetadata()
        .withDeleteOptions(ApiDeleteEvictor.deleteOptions(pod, graceSeconds))
        .build();
  }
}
