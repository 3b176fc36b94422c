package dev.evictd.kube;

import dev.evictd.api.ConfigException;
import io.fabric8.kubernetes.client.Config;
import io.fabric8.kubernetes.client.ConfigBuilder;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.KubernetesClientBuilder;
import io.fabric8.kubernetes.client.KubernetesClientException;
import io.fabric8.kubernetes.client.jdkhttp.JdkHttpClientFactory;
import java.io.File;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import tools.jackson.core.JacksonException;
import tools.jackson.databind.JsonNode;
import tools.jackson.dataformat.yaml.YAMLMapper;

/**
 * Builds the fabric8 client evictd uses: the JDK HTTP client over HTTP/1.1, evictd's timeouts, and
 * no client-side retries. The client would otherwise retry 5xx and 429 answers for about 20 seconds
 * on its own, which would hide a PodDisruptionBudget refusal (429) and stall the eviction loop;
 * evictd retries where it means to ({@link RetryPolicy}). HTTP/1.1 because the API server answers a
 * refused credential with 403 and closes an HTTP/2 connection with GOAWAY, which the JDK's HTTP/2
 * client reports instead of the 403 ("GOAWAY received", a network error); over HTTP/1.1 the 403
 * arrives.
 */
public final class KubeClients {
  private static final org.slf4j.Logger LOG = org.slf4j.LoggerFactory.getLogger(KubeClients.class);

  private KubeClients() {}

  /**
   * A client for the cluster evictd runs in: the in-cluster service account, else the kubeconfig
   * (whose user's {@code tokenFile}, which fabric8 ignores, evictd reads).
   */
  public static KubernetesClient create(KubeSettings settings) {
    return create(withKubeconfigTokenFile(autoConfigure()), settings);
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
    return dev.evictd.config.IoErrors.words(t);
  }

  /** A client for the API server of {@code base} (e.g. a test server), with evictd's settings. */
  public static KubernetesClient create(Config base, KubeSettings settings) {
    try {
      return new KubernetesClientBuilder()
          .withHttpClientFactory(new JdkHttpClientFactory())
          .withHttpClientBuilderConsumer(b -> b.preferHttp11())
          .withConfig(configure(base, settings))
          .build();
    } catch (KubernetesClientException e) {
      // e.g. a CA file of the kubeconfig that cannot be read: fabric8 says "An error has occurred"
      Throwable c = e.getCause() == null ? e : e.getCause();
      throw new ConfigException(
          "kubernetes client for "
              + base.getMasterUrl()
              + ": "
              + (c == e ? e.getMessage() : dev.evictd.config.IoErrors.words(c)));
    }
  }

  /**
   * The pod informer's first wait after a failed list or watch. fabric8 doubles it after each
   * failure up to 32 times this (its fixed exponent 5) and starts again from it once a watch runs:
   * with its default of 1 s an outage of half a minute left the informer waiting up to 32 s after
   * the API server answered again; with 125 ms the waits are 0.125, 0.25 ... 4 s, so the pod view
   * is current again within about 4 s of the server answering. During an outage that is one list
   * per node every 4 s against a server that is down (refused connections cost it nothing).
   */
  static final java.time.Duration WATCH_RECONNECT_INTERVAL = java.time.Duration.ofMillis(125);

  /**
   * {@code base} with evictd's timeouts, the informer's reconnect backoff ({@link
   * #WATCH_RECONNECT_INTERVAL}) and client-side retries switched off.
   */
  static Config configure(Config base, KubeSettings settings) {
    return new ConfigBuilder(base)
        .withRequestRetryBackoffLimit(0)
        .withWatchReconnectInterval(Math.toIntExact(WATCH_RECONNECT_INTERVAL.toMillis()))
        .withRequestTimeout(Math.toIntExact(settings.requestTimeout().toMillis()))
        .withConnectionTimeout(Math.toIntExact(settings.connectTimeout().toMillis()))
        .build();
  }

  /**
   * {@code base} with the bearer token of its kubeconfig user's {@code tokenFile}, read again for
   * every request (as client-go does; a {@code token} in the same user wins, as there). The file is
   * checked now: one that cannot be read is an error naming the kubeconfig, the user and the file.
   * A configuration that did not come from a kubeconfig, or whose user has no tokenFile, is
   * returned as it is.
   */
  static Config withKubeconfigTokenFile(Config base) {
    File kubeconfig = base.getFileWithAuthInfo();
    if (kubeconfig == null
        || base.getCurrentContext() == null
        || base.getCurrentContext().getContext() == null
        || notEmpty(base.getOauthToken())
        || notEmpty(base.getAutoOAuthToken())
        || base.getOauthTokenProvider() != null) {
      return base;
    }
    String user = base.getCurrentContext().getContext().getUser();
    JsonNode root;
    try {
      root = new YAMLMapper().readTree(Files.readString(kubeconfig.toPath()));
    } catch (IOException | JacksonException e) {
      throw new ConfigException("kubeconfig " + kubeconfig + ": cannot read: " + e.getMessage());
    }
    String tokenFile = null;
    for (JsonNode u : root.path("users")) {
      if (u.path("name").asString("").equals(user)) {
        JsonNode tf = u.path("user").path("tokenFile");
        tokenFile = tf.isString() ? tf.asString() : null;
      }
    }
    if (tokenFile == null || tokenFile.isBlank()) {
      return base;
    }
    Path file = Path.of(tokenFile);
    if (!file.isAbsolute() && kubeconfig.getParentFile() != null) {
      // relative to the kubeconfig, as client-go resolves it
      file = kubeconfig.toPath().getParent().resolve(file);
    }
    String where = "kubeconfig " + kubeconfig + ": user " + user + ": tokenFile " + file;
    if (readToken(file, where).isEmpty()) {
      throw new ConfigException(where + ": the file is empty");
    }
    Path tokenPath = file;
    return new ConfigBuilder(base)
        .withOauthTokenProvider(() -> readToken(tokenPath, where))
        .build();
  }

  private static boolean notEmpty(String s) {
    return s != null && !s.isEmpty();
  }

  private static String readToken(Path file, String where) {
    try {
      return Files.readString(file, StandardCharsets.UTF_8).strip();
    } catch (IOException e) {
      throw new ConfigException(where + ": " + dev.evictd.config.IoErrors.cannotRead(file, e));
    }
  }
}
