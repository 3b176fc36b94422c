package dev.evictd.kube;

import dev.evictd.api.ConfigException;
import java.io.IOException;
import java.io.InputStream;
import java.net.URI;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.security.cert.CertificateException;
import java.security.cert.CertificateFactory;
import java.security.cert.X509Certificate;
import java.util.ArrayList;
import java.util.List;

/**
 * The kubelet's own HTTPS port, for reading its Summary API directly rather than through the API
 * server. The kubelet authorizes the bearer token with a SubjectAccessReview on {@code nodes/stats}
 * get. The token is sent only over verified TLS or, when verification is explicitly off, over TLS
 * to whoever answers; never over plain HTTP.
 *
 * @param baseUri e.g. {@code https://10.0.0.5:10250}
 * @param tokenFile the bearer token, read again for every request (service-account tokens rotate);
 *     null only for plain HTTP, where no token is sent
 * @param caFile the CA (PEM) that signed the kubelet's serving certificate, or null for the JVM's
 *     trust store
 * @param insecureSkipTlsVerify trust any certificate and host name (kubelets with self-signed
 *     serving certificates; logged loudly)
 * @param tlsServerName the name the serving certificate must carry when it is not the URL's host (a
 *     kubelet's self-signed certificate names the node's host name, not its IP), or null
 * @param allowHttp whether a plain {@code http://} URL is accepted (then no token is sent)
 */
public record KubeletEndpoint(
    URI baseUri,
    Path tokenFile,
    Path caFile,
    boolean insecureSkipTlsVerify,
    String tlsServerName,
    boolean allowHttp) {
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
      throw new ConfigException("kubeletUrl: expected a URL with a host, found " + baseUri);
    }
    if ("http".equals(baseUri.getScheme())) {
      if (!allowHttp) {
        throw new ConfigException(
            "kubeletUrl "
                + baseUri
                + ": plain HTTP would send the token in clear; use https, or set"
                + " kubeletAllowHttp: true (no token is then sent)");
      }
      tokenFile = null;
    } else if (!"https".equals(baseUri.getScheme())) {
      throw new ConfigException("kubeletUrl: expected an http(s) URL, found " + baseUri);
    } else if (tokenFile == null) {
      throw new ConfigException("kubeletTokenFile: the kubelet needs a token over https");
    }
    if (insecureSkipTlsVerify) {
      caFile = null;
      tlsServerName = null;
    }
    if (tlsServerName != null && tlsServerName.isBlank()) {
      tlsServerName = null;
    }
  }

  /** An HTTPS endpoint verified against {@code caFile} (or the JVM's trust store when null). */
  public KubeletEndpoint(URI baseUri, Path tokenFile, Path caFile, boolean insecureSkipTlsVerify) {
    this(baseUri, tokenFile, caFile, insecureSkipTlsVerify, null, false);
  }

  /** {@code https://HOST:10250} with the service account's token and CA. */
  public static KubeletEndpoint inCluster(String host) {
    return new KubeletEndpoint(
        URI.create(defaultUrl(host)), SERVICE_ACCOUNT_TOKEN, SERVICE_ACCOUNT_CA, false);
  }

  /** {@code https://HOST:10250}, with an IPv6 address in brackets. */
  public static String defaultUrl(String host) {
    String h = host.contains(":") && !host.startsWith("[") ? "[" + host + "]" : host;
    return "https://" + h + ":" + DEFAULT_PORT;
  }

  /** Whether the token goes out (never over plain HTTP). */
  public boolean sendsToken() {
    return tokenFile != null;
  }

  /**
   * Checks at start-up what every request will need: the token file readable and not empty, the CA
   * file readable with at least one certificate. Each failure is one line naming the setting and
   * the file.
   */
  public void check() {
    if (tokenFile != null) {
      String token = read("kubeletTokenFile", tokenFile);
      if (token.isBlank()) {
        throw new ConfigException("kubeletTokenFile " + tokenFile + ": the file is empty");
      }
    }
    if (caFile != null) {
      certificates(caFile);
    }
  }

  /** The certificates of a PEM file, refused with the file's name when there are none. */
  static List<X509Certificate> certificates(Path file) {
    read("kubeletCaFile", file);
    try (InputStream in = Files.newInputStream(file)) {
      List<X509Certificate> out = new ArrayList<>();
      for (var c : CertificateFactory.getInstance("X.509").generateCertificates(in)) {
        out.add((X509Certificate) c);
      }
      if (out.isEmpty()) {
        throw new ConfigException("kubeletCaFile " + file + ": no certificate in the file");
      }
      return out;
    } catch (CertificateException e) {
      throw new ConfigException(
          "kubeletCaFile " + file + ": not a PEM certificate file (" + e.getMessage() + ")");
    } catch (IOException e) {
      throw new ConfigException(
          "kubeletCaFile " + file + ": " + dev.evictd.config.IoErrors.cannotRead(file, e));
    }
  }

  /** A file's text, or a one-line error naming the setting, the file and why. */
  static String read(String setting, Path file) {
    try {
      return new String(Files.readAllBytes(file), java.nio.charset.StandardCharsets.UTF_8);
    } catch (NoSuchFileException e) {
      throw new ConfigException(
          setting
              + " "
              + file
              + ": no such file"
              + (file.startsWith("/var/run/secrets/kubernetes.io")
                  ? " (the service account's; outside a pod set " + setting + ")"
                  : ""));
    } catch (IOException e) {
      throw new ConfigException(
          setting + " " + file + ": " + dev.evictd.config.IoErrors.cannotRead(file, e));
    }
  }
}
