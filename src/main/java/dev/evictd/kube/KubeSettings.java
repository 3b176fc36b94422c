package dev.evictd.kube;

import dev.evictd.api.ConfigException;
import java.time.Duration;

/**
 * How evictd talks to the API server.
 *
 * @param requestTimeout how long one request may take before it counts as failed
 * @param connectTimeout how long connecting may take
 * @param retry how failed requests of the executor are retried (the client itself never retries)
 */
public record KubeSettings(Duration requestTimeout, Duration connectTimeout, RetryPolicy retry) {

  /** Defaults: 10 s per request, 5 s to connect, 3 attempts with 200 ms to 2 s backoff. */
  public static final KubeSettings DEFAULTS =
      new KubeSettings(Duration.ofSeconds(10), Duration.ofSeconds(5), RetryPolicy.DEFAULT);

  public KubeSettings {
    if (requestTimeout == null || requestTimeout.isNegative() || requestTimeout.isZero()) {
      throw new ConfigException("kube request timeout must be positive, got " + requestTimeout);
    }
    if (connectTimeout == null || connectTimeout.isNegative() || connectTimeout.isZero()) {
      throw new ConfigException("kube connect timeout must be positive, got " + connectTimeout);
    }
    if (retry == null) {
      throw new ConfigException("kube retry policy is required");
    }
  }
}
