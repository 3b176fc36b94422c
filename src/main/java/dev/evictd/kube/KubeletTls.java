package dev.evictd.kube;

import dev.evictd.api.ConfigException;
import java.net.InetAddress;
import java.net.Socket;
import java.net.UnknownHostException;
import java.security.GeneralSecurityException;
import java.security.KeyStore;
import java.security.cert.CertificateException;
import java.security.cert.X509Certificate;
import java.util.ArrayList;
import java.util.Collection;
import java.util.List;
import java.util.Locale;
import javax.net.ssl.SSLEngine;
import javax.net.ssl.TrustManager;
import javax.net.ssl.TrustManagerFactory;
import javax.net.ssl.X509ExtendedTrustManager;
import javax.net.ssl.X509TrustManager;

/**
 * How the kubelet's serving certificate is trusted: its chain against the configured CA (or the
 * JVM's trust store), then its names against the URL's host or {@code tlsServerName}; or, when
 * verification is explicitly off, anything. The name check is done here rather than by the JDK so
 * that a certificate may be checked for another name than the one dialled (a kubelet's self-signed
 * certificate names the node, and evictd dials its IP). Failures are certificate errors with a
 * message that says what did not match and which setting changes it.
 */
final class KubeletTls {
  private KubeletTls() {}

  /** The trust managers for {@code endpoint}. */
  static TrustManager[] trustManagers(KubeletEndpoint endpoint) {
    if (endpoint.insecureSkipTlsVerify()) {
      return new TrustManager[] {new TrustAll()};
    }
    X509TrustManager chain = chainTrust(endpoint);
    String name =
        endpoint.tlsServerName() != null ? endpoint.tlsServerName() : endpoint.baseUri().getHost();
    if (name.startsWith("[") && name.endsWith("]")) {
      name = name.substring(1, name.length() - 1);
    }
    return new TrustManager[] {new Verifying(chain, name, endpoint)};
  }

  private static X509TrustManager chainTrust(KubeletEndpoint endpoint) {
    try {
      TrustManagerFactory f =
          TrustManagerFactory.getInstance(TrustManagerFactory.getDefaultAlgorithm());
      if (endpoint.caFile() == null) {
        f.init((KeyStore) null);
      } else {
        KeyStore ks = KeyStore.getInstance(KeyStore.getDefaultType());
        ks.load(null, null);
        int i = 0;
        for (X509Certificate c : KubeletEndpoint.certificates(endpoint.caFile())) {
          ks.setCertificateEntry("ca-" + i++, c);
        }
        f.init(ks);
      }
      for (TrustManager tm : f.getTrustManagers()) {
        if (tm instanceof X509TrustManager x) {
          return x;
        }
      }
      throw new ConfigException("kubeletCaFile: no X.509 trust manager in this JVM");
    } catch (GeneralSecurityException | java.io.IOException e) {
      throw new ConfigException(
          "kubeletCaFile " + endpoint.caFile() + ": cannot build a trust store: " + e.getMessage());
    }
  }

  /** Whether {@code cert} names {@code name}: an IP address SAN, or a DNS SAN (one-label "*."). */
  static boolean names(X509Certificate cert, String name) {
    InetAddress ip = ipLiteral(name);
    for (List<?> san : sans(cert)) {
      int type = (Integer) san.get(0);
      String value = san.get(1).toString();
      if (ip != null && type == 7) {
        InetAddress other = ipLiteral(value);
        if (ip.equals(other)) {
          return true;
        }
      } else if (ip == null && type == 2 && dnsMatches(value, name)) {
        return true;
      }
    }
    return false;
  }

  private static boolean dnsMatches(String pattern, String name) {
    String p = pattern.toLowerCase(Locale.ROOT);
    String n = name.toLowerCase(Locale.ROOT);
    if (p.startsWith("*.")) {
      int dot = n.indexOf('.');
      return dot > 0 && n.substring(dot).equals(p.substring(1));
    }
    return p.equals(n);
  }

  private static InetAddress ipLiteral(String s) {
    // only literals: never a DNS lookup from here
    if (!s.matches("[0-9.]+") && !s.contains(":")) {
      return null;
    }
    try {
      return InetAddress.getByName(s);
    } catch (UnknownHostException e) {
      return null;
    }
  }

  private static Collection<List<?>> sans(X509Certificate cert) {
    try {
      Collection<List<?>> s = cert.getSubjectAlternativeNames();
      return s == null ? List.of() : s;
    } catch (java.security.cert.CertificateParsingException e) {
      return List.of();
    }
  }

  private static String rootMessage(Throwable t) {
    Throwable root = t;
    while (root.getCause() != null && root.getCause() != root) {
      root = root.getCause();
    }
    return root.getMessage() == null ? dev.evictd.config.IoErrors.words(root) : root.getMessage();
  }

  private static String describeNames(X509Certificate cert) {
    List<String> out = new ArrayList<>();
    for (List<?> san : sans(cert)) {
      out.add(san.get(1).toString());
    }
    return out.isEmpty() ? "no subject alternative names" : String.join(", ", out);
  }

  /** The chain against the CA, then the name. */
  private static final class Verifying extends X509ExtendedTrustManager {
    private final X509TrustManager chain;
    private final String name;
    private final KubeletEndpoint endpoint;

    Verifying(X509TrustManager chain, String name, KubeletEndpoint endpoint) {
      this.chain = chain;
      this.name = name;
      this.endpoint = endpoint;
    }

    private void verify(X509Certificate[] certs, String authType) throws CertificateException {
      try {
        chain.checkServerTrusted(certs, authType);
      } catch (CertificateException e) {
        throw new CertificateException(
            "the kubelet's certificate ("
                + certs[0].getSubjectX500Principal().getName()
                + ") is not signed by "
                + (endpoint.caFile() == null
                    ? "a CA this JVM trusts"
                    : "the CA in " + endpoint.caFile())
                + ": set kubeletCaFile to the CA of the kubelet's serving certificate, or"
                + " kubeletInsecureSkipTLSVerify: true ("
                + rootMessage(e)
                + ")",
            e);
      }
      if (!names(certs[0], name)) {
        throw new CertificateException(
            "the kubelet's certificate names "
                + describeNames(certs[0])
                + ", not "
                + name
                + ": set kubeletTlsServerName to one of them");
      }
    }

    @Override
    public void checkServerTrusted(X509Certificate[] certs, String authType, Socket socket)
        throws CertificateException {
      verify(certs, authType);
    }

    @Override
    public void checkServerTrusted(X509Certificate[] certs, String authType, SSLEngine engine)
        throws CertificateException {
      verify(certs, authType);
    }

    @Override
    public void checkServerTrusted(X509Certificate[] certs, String authType)
        throws CertificateException {
      verify(certs, authType);
    }

    @Override
    public void checkClientTrusted(X509Certificate[] certs, String authType, Socket socket)
        throws CertificateException {
      throw new CertificateException("not a server");
    }

    @Override
    public void checkClientTrusted(X509Certificate[] certs, String authType, SSLEngine engine)
        throws CertificateException {
      throw new CertificateException("not a server");
    }

    @Override
    public void checkClientTrusted(X509Certificate[] certs, String authType)
        throws CertificateException {
      throw new CertificateException("not a server");
    }

    @Override
    public X509Certificate[] getAcceptedIssuers() {
      return chain.getAcceptedIssuers();
    }
  }

  /** kubeletInsecureSkipTLSVerify: anything goes (warned about at start and in /readyz). */
  private static final class TrustAll extends X509ExtendedTrustManager {
    @Override
    public void checkServerTrusted(X509Certificate[] c, String a, Socket s) {}

    @Override
    public void checkServerTrusted(X509Certificate[] c, String a, SSLEngine e) {}

    @Override
    public void checkServerTrusted(X509Certificate[] c, String a) {}

    @Override
    public void checkClientTrusted(X509Certificate[] c, String a, Socket s)
        throws CertificateException {
      throw new CertificateException("not a server");
    }

    @Override
    public void checkClientTrusted(X509Certificate[] c, String a, SSLEngine e)
        throws CertificateException {
      throw new CertificateException("not a server");
    }

    @Override
    public void checkClientTrusted(X509Certificate[] c, String a) throws CertificateException {
      throw new CertificateException("not a server");
    }

    @Override
    public X509Certificate[] getAcceptedIssuers() {
      return new X509Certificate[0];
    }
  }
}
