package dev.evictd.kube;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.evictd.api.ConfigException;
import io.fabric8.kubernetes.client.Config;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.vertx.core.Vertx;
import io.vertx.core.http.HttpServer;
import io.vertx.core.http.HttpServerOptions;
import io.vertx.core.http.HttpVersion;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Credentials that do not work say so. A loopback API server that answers like the real one: a
 * known bearer token gets its answer, anything else 403 naming {@code system:anonymous}, and over
 * HTTP/2 the 403 is followed by GOAWAY (as kube-apiserver does for a refused anonymous request);
 * over HTTP/1.1 the connection is closed after the 403.
 */
class KubeCredentialsTest {
  static final String FORBIDDEN =
      "{\"kind\":\"Status\",\"apiVersion\":\"v1\",\"metadata\":{},\"status\":\"Failure\","
          + "\"message\":\"pods is forbidden: User \\\"system:anonymous\\\" cannot list resource"
          + " \\\"pods\\\" in API group \\\"\\\" in the namespace \\\"ns\\\"\","
          + "\"reason\":\"Forbidden\",\"details\":{\"kind\":\"pods\"},\"code\":403}";
  static final String PODS = "{\"kind\":\"PodList\",\"apiVersion\":\"v1\",\"items\":[]}";

  private Vertx vertx;
  private HttpServer server;
  private final List<String> authorizations = new CopyOnWriteArrayList<>();
  private final List<HttpVersion> versions = new CopyOnWriteArrayList<>();
  private volatile String acceptedToken = "tok-1";

  @BeforeEach
  void start() throws Exception {
    vertx = Vertx.vertx();
    server =
        vertx
            .createHttpServer(
                new HttpServerOptions().setHost("127.0.0.1").setHttp2ClearTextEnabled(true))
            .requestHandler(
                req -> {
                  String auth = req.getHeader("Authorization");
                  authorizations.add(auth == null ? "none" : auth);
                  versions.add(req.version());
                  var resp = req.response().putHeader("Content-Type", "application/json");
                  if (("Bearer " + acceptedToken).equals(auth)) {
                    resp.setStatusCode(200).end(PODS);
                  } else if (req.version() == HttpVersion.HTTP_2) {
                    resp.setStatusCode(403)
                        .end(FORBIDDEN)
                        .onComplete(done -> req.connection().goAway(0));
                  } else {
                    resp.putHeader("Connection", "close").setStatusCode(403).end(FORBIDDEN);
                  }
                })
            .listen(0)
            .toCompletionStage()
            .toCompletableFuture()
            .get(10, TimeUnit.SECONDS);
  }

  @AfterEach
  void stop() throws Exception {
    server.close().toCompletionStage().toCompletableFuture().get(10, TimeUnit.SECONDS);
    vertx.close().toCompletionStage().toCompletableFuture().get(10, TimeUnit.SECONDS);
  }

  private String url() {
    return "http://127.0.0.1:" + server.actualPort();
  }

  private Path kubeconfig(Path dir, String userBody) throws Exception {
    return Files.writeString(
        dir.resolve("config"),
        """
        apiVersion: v1
        kind: Config
        clusters:
          - name: c
            cluster: {server: "%s"}
        users:
          - name: u
            user: %s
        contexts:
          - name: ctx
            context: {cluster: c, user: u, namespace: ns}
        current-context: ctx
        """
            .formatted(url(), userBody));
  }

  @Test
  void aKubeconfigTokenFileIsReadForEveryRequest(@TempDir Path dir) throws Exception {
    Files.writeString(dir.resolve("token"), "tok-1\n");
    Path kc = kubeconfig(dir, "{tokenFile: token}");
    Config config = KubeClients.withKubeconfigTokenFile(Config.fromKubeconfig(kc.toFile()));
    try (KubernetesClient client = KubeClients.create(config, KubeSettings.DEFAULTS)) {
      assertThat(client.pods().inNamespace("ns").list().getItems()).isEmpty();
      // rotated: the next request carries the new token
      Files.writeString(dir.resolve("token"), "tok-2");
      acceptedToken = "tok-2";
      assertThat(client.pods().inNamespace("ns").list().getItems()).isEmpty();
    }
    assertThat(authorizations).containsExactly("Bearer tok-1", "Bearer tok-2");
  }

  @Test
  void anUnreadableKubeconfigTokenFileIsOneLineNamingIt(@TempDir Path dir) throws Exception {
    Path kc = kubeconfig(dir, "{tokenFile: /no/such/token}");
    assertThatThrownBy(
            () -> KubeClients.withKubeconfigTokenFile(Config.fromKubeconfig(kc.toFile())))
        .isInstanceOf(ConfigException.class)
        .hasMessage("kubeconfig " + kc + ": user u: tokenFile /no/such/token: no such file");
    Files.writeString(dir.resolve("empty"), "\n");
    Path kc2 = kubeconfig(dir, "{tokenFile: empty}");
    assertThatThrownBy(
            () -> KubeClients.withKubeconfigTokenFile(Config.fromKubeconfig(kc2.toFile())))
        .isInstanceOf(ConfigException.class)
        .hasMessageEndingWith("tokenFile " + dir.resolve("empty") + ": the file is empty");
  }

  @Test
  void aTokenBesideTheTokenFileWinsAsInClientGo(@TempDir Path dir) throws Exception {
    Path kc = kubeconfig(dir, "{token: tok-1, tokenFile: /no/such/token}");
    Config config = KubeClients.withKubeconfigTokenFile(Config.fromKubeconfig(kc.toFile()));
    try (KubernetesClient client = KubeClients.create(config, KubeSettings.DEFAULTS)) {
      assertThat(client.pods().inNamespace("ns").list().getItems()).isEmpty();
    }
    assertThat(authorizations).containsExactly("Bearer tok-1");
  }

  @Test
  void aRefusedCredentialIsNotAuthorizedAsTheUserAndIsNotRetried() throws Exception {
    Config config =
        new io.fabric8.kubernetes.client.ConfigBuilder(Config.empty()).withMasterUrl(url()).build();
    try (KubernetesClient client = KubeClients.create(config, KubeSettings.DEFAULTS)) {
      ApiResponse r = new KubeApi(client, Duration.ofSeconds(10)).get("/api/v1/namespaces/ns/pods");
      assertThat(r.code()).isEqualTo(403);
      assertThat(r.isTransient()).as("not retried as a network error").isFalse();
      assertThat(r.describe())
          .startsWith("HTTP 403: not authorized as system:anonymous: pods is forbidden");
    }
    assertThat(authorizations).containsExactly("none");
    assertThat(versions).containsExactly(HttpVersion.HTTP_1_1);
  }

  @Test
  void thePodInformerLogsARefusalAsNotAuthorized() {
    var refused =
        new io.fabric8.kubernetes.client.KubernetesClientException(
            new io.fabric8.kubernetes.api.model.StatusBuilder()
                .withCode(403)
                .withMessage(
                    "pods is forbidden: User \"system:anonymous\" cannot list resource \"pods\"")
                .build());
    assertThat(
            NodePodInformer.describe(
                new RuntimeException("list failed", refused), "127.0.0.1:6443"))
        .isEqualTo(
            "HTTP 403: not authorized as system:anonymous: pods is forbidden: User"
                + " \"system:anonymous\" cannot list resource \"pods\"");
  }

  @Test
  void anUnreadableClusterCaIsAConfigErrorNamingIt() {
    Config config =
        new io.fabric8.kubernetes.client.ConfigBuilder(Config.empty())
            .withMasterUrl("https://127.0.0.1:6443")
            .withCaCertFile("/no/such/ca.crt")
            .build();
    assertThatThrownBy(() -> KubeClients.create(config, KubeSettings.DEFAULTS).close())
        .isInstanceOf(ConfigException.class)
        .hasMessageStartingWith("kubernetes client for https://127.0.0.1:6443")
        .hasMessageEndingWith(": /no/such/ca.crt: no such file");
  }
}
