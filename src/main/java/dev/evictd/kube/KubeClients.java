package dev.evictd.kube;

import io.fabric8.kubernetes.client.Config;
import io.fabric8.kubernetes.client.ConfigBuilder;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.KubernetesClientBuilder;
import io.fabric8.kubernetes.client.jdkhttp.JdkHttpClientFactory;

/**
 * Builds the fabric8 client evictd uses: the JDK HTTP client, evictd's timeouts, and no client-side
 * retries. The client would otherwise retry 5xx and 429 answers for about 20 seconds on its own,
 * which would hide a PodDisruptionBudget refusal (429) and stall the eviction loop; evictd retries
 * where it means to ({@link RetryPolicy}).
 */
public final class KubeClients {
  private KubeClients() {}

  /**
   * A client for the cluster evictd runs in: the in-cluster service account, else the kubeconfig.
   */
  public static KubernetesClient create(KubeSettings settings) {
    return create(Config.autoConfigure(null), settings);
  }

  /** A client for the API server of {@code base} (e.g. a test server), with evictd's settings. */
  public static KubernetesClient create(Config base, KubeSettings settings) {
    return new KubernetesClientBuilder()
        .withHttpClientFactory(new JdkHttpClientFactory())
        .withConfig(configure(base, settings))
        .build();
  }

  /** {@code base} with evictd's timeouts and client-side retries switched off. */
  static Config configure(Config base, KubeSettings settings) {
    return new ConfigBuilder(base)
        .withRequestRetryBackoffLimit(0)
        .withRequestTimeout(Math.toIntExact(settings.requestTimeout().toMillis()))
        .withConnectionTimeout(Math.toIntExact(settings.connectTimeout().toMillis()))
        .build();
  }
}
