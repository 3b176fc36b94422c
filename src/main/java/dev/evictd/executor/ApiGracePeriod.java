package dev.evictd.executor;

/** The grace period sent to the API server for a decision. */
final class ApiGracePeriod {
  private ApiGracePeriod() {}

  /**
   * The decision's grace period, but at least 1 second: through the API, 0 means force deletion,
   * which removes the pod object at once while its containers may still run (kubectl likewise turns
   * 0 into 1 unless forced). The kubelet itself never kills faster than its own minimum either.
   */
  static long of(long decisionSeconds) {
    return Math.max(1, decisionSeconds);
  }
}
