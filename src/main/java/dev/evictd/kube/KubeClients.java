package dev.evictd.kube;

import dev.evictd.api.ConfigException;
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
  private static final org.slf4j.Logger LOG = org.slf4j.LoggerFactory.getLogger(KubeClients.class);

  private KubeClients() {}

  /**
   * A client for the cluster evictd runs in: the in-cluster service account, else the kubeconfig.
   */
  public static KubernetesClient create(KubeSettings settings) {
    return create(autoConfigure(), settings);
  }

  /**
   * The in-cluster or kubeconfig configuration, with where it came from logged (so an unreachable
   * or wrong server can be traced to its source); a kubeconfig that cannot be read is one line
   * naming the file.
   */
  static Config autoConfigure() {
    String files = String.join(", ", Config.getKubeconfigFilenames());
    Config config;
    try {
      config = Config.autoConfigure(null);
    } catch (RuntimeException e) {
      throw new ConfigException("kubeconfig " + files + ": cannot be read: " + oneLine(e));
    }
    if (config.getFile() != null) {
      LOG.info("API server {} (from kubeconfig {})", config.getMasterUrl(), config.getFile());
    } else if (java.nio.file.Files.isReadable(
        java.nio.file.Path.of(Config.KUBERNETES_SERVICE_ACCOUNT_TOKEN_PATH))) {
      LOG.info("API server {} (in-cluster service account)", config.getMasterUrl());
    } else {
      LOG.warn(
          "no kubeconfig ({} not found) and no in-cluster service account: trying API server {}",
          files.isEmpty() ? "none named" : files,
          config.getMasterUrl());
    }
    return config;
  }

  private static String oneLine(Throwable e) {
    // the root cause says what is wrong (e.g. the YAML parser's complaint); first line only
    Throwable t = e;
    while (t.getCause() != null && t.getCause() != t) {
      t = t.getCause();
    }
    String m = t.getMessage() == null ? t.getClass().getSimpleName() : t.getMessage();
    return m.lines().findFirst().orElse(m).strip();
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
