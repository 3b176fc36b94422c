package dev.evictd.admission;

import dev.evictd.api.EvictdException;
import dev.evictd.kube.ApiResponse;
import dev.evictd.kube.KubeApi;
import java.time.Duration;
import tools.jackson.core.JacksonException;
import tools.jackson.databind.JsonNode;
import tools.jackson.databind.json.JsonMapper;

/** Reads the pod an Eviction names, for the webhook to check its node. */
public interface PodLookup {
  /**
   * How long one lookup may take in {@code evictd admission-webhook}: under the webhook
   * configuration's {@code timeoutSeconds} (docker/admission-webhook.yaml), so a slow API server is
   * a clear denial rather than a webhook timeout.
   */
  Duration DEFAULT_TIMEOUT = Duration.ofSeconds(3);

  /** What a lookup found. */
  sealed interface Result permits Found, NotFound, Failed {}

  /**
   * The pod as stored.
   *
   * @param uid its {@code metadata.uid}
   * @param nodeName its {@code spec.nodeName}, "" when not scheduled
   */
  record Found(String uid, String nodeName) implements Result {}

  /** No pod of that namespace and name (404). */
  record NotFound() implements Result {}

  /**
   * The lookup failed: the answer says nothing about the pod.
   *
   * @param reason one line: the request and the server's answer or the error
   */
  record Failed(String reason) implements Result {}

  /** The pod {@code namespace/name} as the API server has it now. */
  Result pod(String namespace, String name);

  /** Looks pods up with one GET each through {@code api} (RBAC: {@code get pods}). */
  static PodLookup api(KubeApi api) {
    JsonMapper json = JsonMapper.builder().build();
    return (namespace, name) -> {
      String path;
      try {
        path = KubeApi.podPath(namespace, name);
      } catch (EvictdException e) {
        return new Failed(e.getMessage());
      }
      ApiResponse r = api.get(path);
      if (r.code() == 404) {
        return new NotFound();
      }
      if (r.code() == 0) {
        // no answer: the error names the request and the server
        return new Failed(r.describe());
      }
      if (r.code() != 200) {
        return new Failed("GET " + path + ": " + r.describe());
      }
      JsonNode pod;
      try {
        pod = json.readTree(r.body());
      } catch (JacksonException e) {
        return new Failed("GET " + path + ": the answer is not JSON");
      }
      String uid = pod.path("metadata").path("uid").asString("");
      if (uid.isEmpty()) {
        return new Failed("GET " + path + ": the answer has no metadata.uid");
      }
      return new Found(uid, pod.path("spec").path("nodeName").asString(""));
    };
  }
}
