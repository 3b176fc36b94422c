package dev.evictd.kube;

import dev.evictd.api.ConfigException;
import java.net.URI;
import java.nio.file.Path;

/**
 * The kubelet's own HTTPS port, for reading its Summary API directly rather than through the API
 * server. The kubelet authorizes the bearer token with a SubjectAccessReview on {@code
 * nodes/stats}.
 *
 * @param baseUri e.g. {@code https://10.0.0.5:10250}
 * @param tokenFile the bearer token, read again for every request (service-account tokens rotate)
 * @param caFile the CA that signed the kubelet's serving certificate, or null for the JVM's trust
 *     store
 * @param insecureSkipTlsVerify trust any certificate and host name (kubelets with self-signed
 *     serving certificates)
 */
public record KubeletEndpoint(
    URI baseUri, Path tokenFile, Path caFile, boolean insecureSkipTlsVerify) {
  /** The kubelet's default HTTPS port. */
  public static final int DEFAULT_PORT = 10250;

  /** The pod's service-account token. */
  public static final Path SERVICE_ACCOUNT_TOKEN =
      Path.of("/var/run/secrets/kubernetes.io/serviceaccount/token");

  /** The cluster CA mounted with the service account. */
  public static final Path SERVICE_ACCOUNT_CA =
      Path.of("/var/run/secrets/kubernetes.io/serviceaccount/ca.crt");

  public KubeletEndpoint {
    if (baseUri == null || baseUri.getHost() == null) {
      throw new ConfigException("kubelet endpoint needs a URI with a host, got " + baseUri);
    }
    if (!"https".equals(baseUri.getScheme()) && !"http".equals(baseUri.getScheme())) {
      throw new ConfigException("kubelet endpoint must be http(s), got " + baseUri);
    }
    if (tokenFile == null) {
      throw new ConfigException("kubelet endpoint needs a token file");
    }
  }

  /** {@code https://HOST:10250} with the service account's token and CA. */
  public static KubeletEndpoint inCluster(String host) {
    String h = host.contains(":") && !host.startsWith("[") ? "[" + host + "]" : host;
    return new KubeletEndpoint(
        URI.create("https://" + h + ":" + DEFAULT_PORT),
        SERVICE_ACCOUNT_TOKEN,
        SERVICE_ACCOUNT_CA,
        false);
  }
}
