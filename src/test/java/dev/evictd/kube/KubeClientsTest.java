package dev.evictd.kube;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.evictd.api.ConfigException;
import dev.evictd.testing.FakeKubeApiServer;
import io.fabric8.kubernetes.client.Config;
import io.fabric8.kubernetes.client.ConfigBuilder;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.KubernetesClientException;
import io.fabric8.kubernetes.client.jdkhttp.JdkHttpClientImpl;
import java.net.URI;
import java.nio.file.Path;
import java.time.Duration;
import org.junit.jupiter.api.Test;

class KubeClientsTest {
  @Test
  void configuresTimeoutsAndNoClientSideRetries() {
    Config base = new ConfigBuilder(Config.empty()).withMasterUrl("https://10.0.0.1:6443").build();
    var settings =
        new KubeSettings(Duration.ofSeconds(7), Duration.ofSeconds(3), RetryPolicy.DEFAULT);
    Config c = KubeClients.configure(base, settings);
    assertThat(c.getRequestRetryBackoffLimit()).isZero();
    assertThat(c.getRequestTimeout()).isEqualTo(7000);
    assertThat(c.getConnectionTimeout()).isEqualTo(3000);
    assertThat(c.getMasterUrl()).startsWith("https://10.0.0.1:6443");
  }

  @Test
  void theInformerWaitsAtMostFourSecondsBetweenReconnectAttempts() {
    Config c =
        KubeClients.configure(
            new ConfigBuilder(Config.empty()).withMasterUrl("https://10.0.0.1:6443").build(),
            KubeSettings.DEFAULTS);
    // fabric8's informer backoff: this interval doubled per failure, at most 2^5 times (the
    // longest wait between the API server answering again and the informer asking)
    var backoff =
        new io.fabric8.kubernetes.client.utils.ExponentialBackoffIntervalCalculator(
            c.getWatchReconnectInterval(), -1);
    long longest = 0;
    for (int i = 0; i < 20; i++) {
      longest = Math.max(longest, backoff.nextReconnectInterval());
    }
    assertThat(c.getWatchReconnectInterval()).isEqualTo(125);
    assertThat(longest).isEqualTo(4000);
  }

  @Test
  void theClientUsesTheJdkHttpClientAndAsksOnce() {
    try (FakeKubeApiServer api = FakeKubeApiServer.start();
        KubernetesClient client = api.client(KubeSettings.DEFAULTS)) {
      assertThat(client.getHttpClient()).isInstanceOf(JdkHttpClientImpl.class);
      api.fail("GET", "/api/v1/namespaces/ns/pods/web", 429, 5);
      assertThatThrownBy(() -> client.pods().inNamespace("ns").withName("web").get())
          .isInstanceOf(KubernetesClientException.class);
      assertThat(api.requests("GET", "/api/v1/namespaces/ns/pods/web")).hasSize(1);
    }
  }

  @Test
  void aKubeconfigThatIsNotYamlIsOneLineNamingTheFile(@org.junit.jupiter.api.io.TempDir Path dir)
      throws Exception {
    Path kubeconfig =
        java.nio.file.Files.writeString(dir.resolve("config"), "\u0000\u0001: [ {{\n");
    String before = System.getProperty(Config.KUBERNETES_KUBECONFIG_FILE);
    System.setProperty(Config.KUBERNETES_KUBECONFIG_FILE, kubeconfig.toString());
    try {
      assertThatThrownBy(KubeClients::autoConfigure)
          .isInstanceOf(ConfigException.class)
          .hasMessageStartingWith("kubeconfig " + kubeconfig + ": cannot be read: ")
          .satisfies(e -> assertThat(e.getMessage()).doesNotContain("\n"));
    } finally {
      if (before == null) {
        System.clearProperty(Config.KUBERNETES_KUBECONFIG_FILE);
      } else {
        System.setProperty(Config.KUBERNETES_KUBECONFIG_FILE, before);
      }
    }
  }

  @Test
  void refusesNonPositiveTimeouts() {
    assertThatThrownBy(
            () -> new KubeSettings(Duration.ZERO, Duration.ofSeconds(1), RetryPolicy.NONE))
        .isInstanceOf(ConfigException.class)
        .hasMessageContaining("request timeout");
    assertThatThrownBy(
            () -> new KubeSettings(Duration.ofSeconds(1), Duration.ofSeconds(-1), RetryPolicy.NONE))
        .isInstanceOf(ConfigException.class)
        .hasMessageContaining("connect timeout");
  }

  @Test
  void kubeletEndpoints() {
    KubeletEndpoint v4 = KubeletEndpoint.inCluster("10.0.0.5");
    assertThat(v4.baseUri()).isEqualTo(URI.create("https://10.0.0.5:10250"));
    assertThat(v4.tokenFile()).isEqualTo(KubeletEndpoint.SERVICE_ACCOUNT_TOKEN);
    assertThat(v4.caFile()).isEqualTo(KubeletEndpoint.SERVICE_ACCOUNT_CA);
    assertThat(v4.insecureSkipTlsVerify()).isFalse();
    assertThat(KubeletEndpoint.inCluster("fd00::5").baseUri())
        .isEqualTo(URI.create("https://[fd00::5]:10250"));
    assertThatThrownBy(() -> new KubeletEndpoint(URI.create("ftp://x"), Path.of("t"), null, false))
        .isInstanceOf(ConfigException.class);
    assertThatThrownBy(() -> new KubeletEndpoint(URI.create("https://x:1"), null, null, false))
        .isInstanceOf(ConfigException.class);
  }
}
