package dev.evictd.testing;

import io.fabric8.mockwebserver.MockWebServer;
import io.fabric8.mockwebserver.http.Dispatcher;
import io.fabric8.mockwebserver.http.MockResponse;
import io.fabric8.mockwebserver.http.RecordedRequest;
import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;

/**
 * A kubelet's HTTPS port serving {@code /stats/summary} to one bearer token, with a self-signed
 * certificate for localhost. Requests are recorded (the RBAC test maps them as the kubelet's
 * authorizer does).
 */
public final class FakeKubelet implements AutoCloseable {
  /** A request the kubelet received: method and path. */
  public record Request(String method, String path, String authorization) {}

  /** Every request received by any fake kubelet in this JVM. */
  public static final List<Request> ALL_REQUESTS = new CopyOnWriteArrayList<>();

  private final MockWebServer server = new MockWebServer();
  private final List<Request> requests = new CopyOnWriteArrayList<>();
  private volatile String token;
  private volatile String summary;

  /** Starts a kubelet accepting {@code token} and serving {@code summary}. */
  public FakeKubelet(String token, String summary) {
    this.token = token;
    this.summary = summary;
    server.useHttps();
    server.setDispatcher(
        new Dispatcher() {
          @Override
          public MockResponse dispatch(RecordedRequest r) {
            Request req = new Request(r.getMethod(), r.getPath(), r.getHeader("Authorization"));
            requests.add(req);
            ALL_REQUESTS.add(req);
            if (!("Bearer " + FakeKubelet.this.token).equals(req.authorization())) {
              return new MockResponse().setResponseCode(401).setBody("Unauthorized");
            }
            if ("GET".equals(r.getMethod()) && "/stats/summary".equals(r.getPath())) {
              return new MockResponse().setResponseCode(200).setBody(FakeKubelet.this.summary);
            }
            return new MockResponse().setResponseCode(404).setBody("404 page not found");
          }
        });
    server.start();
  }

  /** {@code https://localhost:PORT}. */
  public String url() {
    return "https://localhost:" + server.getPort();
  }

  /** The PEM file of the kubelet's self-signed serving certificate. */
  public Path certificate() {
    return Path.of(server.getSelfSignedCertificate().certificatePath());
  }

  /** Accept another token from now on (a rotated service-account token). */
  public void acceptToken(String newToken) {
    this.token = newToken;
  }

  /** Requests received so far. */
  public List<Request> requests() {
    return List.copyOf(requests);
  }

  @Override
  public void close() {
    server.shutdown();
  }
}
