package dev.evictd.testing;

import com.sun.net.httpserver.HttpExchange;
import com.sun.net.httpserver.HttpServer;
import com.sun.net.httpserver.HttpsConfigurator;
import com.sun.net.httpserver.HttpsServer;
import java.io.IOException;
import java.io.OutputStream;
import java.io.StringWriter;
import java.io.UncheckedIOException;
import java.math.BigInteger;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.GeneralSecurityException;
import java.security.KeyPair;
import java.security.KeyPairGenerator;
import java.security.KeyStore;
import java.security.cert.X509Certificate;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Date;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.atomic.AtomicLong;
import javax.net.ssl.KeyManagerFactory;
import javax.net.ssl.SSLContext;
import org.bouncycastle.asn1.x500.X500Name;
import org.bouncycastle.asn1.x509.BasicConstraints;
import org.bouncycastle.asn1.x509.ExtendedKeyUsage;
import org.bouncycastle.asn1.x509.Extension;
import org.bouncycastle.asn1.x509.GeneralName;
import org.bouncycastle.asn1.x509.GeneralNames;
import org.bouncycastle.asn1.x509.KeyPurposeId;
import org.bouncycastle.asn1.x509.KeyUsage;
import org.bouncycastle.cert.X509v3CertificateBuilder;
import org.bouncycastle.cert.jcajce.JcaX509CertificateConverter;
import org.bouncycastle.cert.jcajce.JcaX509v3CertificateBuilder;
import org.bouncycastle.openssl.jcajce.JcaPEMWriter;
import org.bouncycastle.operator.jcajce.JcaContentSignerBuilder;

/**
 * A kubelet's port on loopback: HTTPS with a serving certificate generated for each instance and
 * signed by its own CA (as a kubelet's self-signed certificate is: {@code HOST-ca@TIME} signing
 * {@code HOST@TIME}), or plain HTTP. It serves {@code /stats/summary} and {@code /configz} to one
 * bearer token; a wrong or missing token gets 401, a forbidden one 403 with the kubelet's body.
 * Requests are recorded (the RBAC test maps them as the kubelet's authorizer does). Its files (the
 * CA's PEM) are deleted on close.
 */
public final class FakeKubelet implements AutoCloseable {
  /** A request the kubelet received: method, path and Authorization header (or null). */
  public record Request(String method, String path, String authorization) {}

  /** Every request received by any fake kubelet in this JVM. */
  public static final List<Request> ALL_REQUESTS = new CopyOnWriteArrayList<>();

  private static final AtomicLong SERIAL = new AtomicLong(1);

  private final HttpServer server;
  private final ExecutorService executor;
  private final boolean https;
  private final Path caFile;
  private final Path kubeletCrt;
  private final List<Request> requests = new CopyOnWriteArrayList<>();
  private volatile String token;
  private volatile String summary;
  private volatile String configz = "{\"kubeletconfig\": {}}";
  private volatile String forbiddenUser;

  private FakeKubelet(String token, String summary, boolean https, List<String> names) {
    this.token = token;
    this.summary = summary;
    this.https = https;
    try {
      InetSocketAddress loopback = new InetSocketAddress(InetAddress.getLoopbackAddress(), 0);
      if (https) {
        Tls tls = Tls.generate(names);
        caFile = Files.createTempFile("fake-kubelet-ca", ".crt");
        Files.writeString(caFile, pem(tls.ca()));
        // as the kubelet writes its self-signed pki/kubelet.crt: the serving certificate, then its
        // CA
        kubeletCrt = Files.createTempFile("fake-kubelet", ".crt");
        Files.writeString(kubeletCrt, pem(tls.cert()) + pem(tls.ca()));
        HttpsServer s = HttpsServer.create(loopback, 16);
        s.setHttpsConfigurator(new HttpsConfigurator(tls.context()));
        server = s;
      } else {
        caFile = null;
        kubeletCrt = null;
        server = HttpServer.create(loopback, 16);
      }
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
    executor =
        Executors.newFixedThreadPool(
            2,
            r -> {
              Thread t = new Thread(r, "fake-kubelet");
              t.setDaemon(true);
              return t;
            });
    server.setExecutor(executor);
    server.createContext("/", this::handle);
    server.start();
  }

  /**
   * A kubelet over HTTPS accepting {@code token} and serving {@code summary}, its certificate for
   * localhost and 127.0.0.1.
   */
  public FakeKubelet(String token, String summary) {
    this(token, summary, true, List.of("localhost", "127.0.0.1"));
  }

  /** A kubelet whose certificate names only {@code names} (DNS names or IP addresses). */
  public static FakeKubelet withCertificateFor(String token, String summary, String... names) {
    return new FakeKubelet(token, summary, true, List.of(names));
  }

  /** A kubelet on plain HTTP (its read-only port of old); a null token accepts any request. */
  public static FakeKubelet plainHttp(String token, String summary) {
    return new FakeKubelet(token, summary, false, List.of());
  }

  private void handle(HttpExchange ex) throws IOException {
    try (ex) {
      String path = ex.getRequestURI().getRawPath();
      if (ex.getRequestURI().getRawQuery() != null) {
        path += "?" + ex.getRequestURI().getRawQuery();
      }
      Request req =
          new Request(
              ex.getRequestMethod(), path, ex.getRequestHeaders().getFirst("Authorization"));
      requests.add(req);
      ALL_REQUESTS.add(req);
      if (token != null && !("Bearer " + token).equals(req.authorization())) {
        respond(ex, 401, "Unauthorized");
      } else if (forbiddenUser != null) {
        respond(
            ex,
            403,
            "Forbidden (user="
                + forbiddenUser
                + ", verb=get, resource=nodes, subresource(s)=[stats])");
      } else if ("GET".equals(req.method()) && "/stats/summary".equals(path)) {
        respond(ex, 200, summary);
      } else if ("GET".equals(req.method()) && "/configz".equals(path)) {
        respond(ex, 200, configz);
      } else {
        respond(ex, 404, "404 page not found");
      }
    }
  }

  private static void respond(HttpExchange ex, int code, String body) throws IOException {
    byte[] b = body.getBytes(StandardCharsets.UTF_8);
    ex.sendResponseHeaders(code, b.length);
    try (OutputStream out = ex.getResponseBody()) {
      out.write(b);
    }
  }

  /** {@code https://localhost:PORT} (or http://). */
  public String url() {
    return (https ? "https" : "http") + "://localhost:" + server.getAddress().getPort();
  }

  /** {@code https://127.0.0.1:PORT}: the kubelet dialled by IP, as evictd does (status.hostIP). */
  public String ipUrl() {
    return (https ? "https" : "http") + "://127.0.0.1:" + server.getAddress().getPort();
  }

  /** The PEM file of the CA that signed the kubelet's serving certificate. */
  public Path certificate() {
    return caFile;
  }

  /**
   * The kubelet's own certificate file as a kubelet with a self-signed certificate keeps it ({@code
   * /var/lib/kubelet/pki/kubelet.crt}): the serving certificate followed by its CA.
   */
  public Path kubeletCrt() {
    return kubeletCrt;
  }

  /** Accept another token from now on (a rotated service-account token). */
  public void acceptToken(String newToken) {
    this.token = newToken;
  }

  /** Answer 403 to {@code user} from now on (authenticated, not authorized), null to stop. */
  public void forbid(String user) {
    this.forbiddenUser = user;
  }

  /** Serve this /configz body. */
  public void configz(String body) {
    this.configz = body;
  }

  /** Requests received so far. */
  public List<Request> requests() {
    return List.copyOf(requests);
  }

  @Override
  public void close() {
    server.stop(0);
    executor.shutdownNow();
    for (Path f : new Path[] {caFile, kubeletCrt}) {
      try {
        if (f != null) {
          Files.deleteIfExists(f);
        }
      } catch (IOException e) {
        // a temporary file; nothing else to do
      }
    }
  }

  /** A PEM file of another CA, signing nothing this kubelet serves (a misconfigured CA). */
  public static Path otherCa(Path dir) throws IOException {
    Tls other = Tls.generate(List.of("localhost"));
    return Files.writeString(dir.resolve("other-ca.crt"), pem(other.ca()));
  }

  private static String pem(X509Certificate cert) throws IOException {
    StringWriter w = new StringWriter();
    try (JcaPEMWriter p = new JcaPEMWriter(w)) {
      p.writeObject(cert);
    }
    return w.toString();
  }

  /** A CA, a serving certificate it signed for {@code names}, and the server's SSL context. */
  private record Tls(X509Certificate ca, X509Certificate cert, SSLContext context) {
    static Tls generate(List<String> names) {
      try {
        KeyPairGenerator g = KeyPairGenerator.getInstance("EC");
        g.initialize(256);
        KeyPair caKeys = g.generateKeyPair();
        KeyPair keys = g.generateKeyPair();
        Instant now = Instant.now();
        Date from = Date.from(now.minus(Duration.ofMinutes(5)));
        Date to = Date.from(now.plus(Duration.ofDays(1)));
        String host = names.isEmpty() ? "localhost" : names.get(0);
        X500Name caName = new X500Name("CN=" + host + "-ca@" + now.getEpochSecond());
        X509v3CertificateBuilder cab =
            new JcaX509v3CertificateBuilder(
                caName,
                BigInteger.valueOf(SERIAL.getAndIncrement()),
                from,
                to,
                caName,
                caKeys.getPublic());
        cab.addExtension(Extension.basicConstraints, true, new BasicConstraints(true));
        cab.addExtension(
            Extension.keyUsage, true, new KeyUsage(KeyUsage.keyCertSign | KeyUsage.cRLSign));
        JcaX509CertificateConverter conv = new JcaX509CertificateConverter();
        X509Certificate ca =
            conv.getCertificate(
                cab.build(
                    new JcaContentSignerBuilder("SHA256withECDSA").build(caKeys.getPrivate())));
        X509v3CertificateBuilder b =
            new JcaX509v3CertificateBuilder(
                caName,
                BigInteger.valueOf(SERIAL.getAndIncrement()),
                from,
                to,
                new X500Name("CN=" + host + "@" + now.getEpochSecond()),
                keys.getPublic());
        List<GeneralName> sans = new ArrayList<>();
        for (String n : names) {
          sans.add(
              new GeneralName(
                  n.matches("[0-9.]+") || n.contains(":")
                      ? GeneralName.iPAddress
                      : GeneralName.dNSName,
                  n));
        }
        b.addExtension(
            Extension.subjectAlternativeName,
            false,
            new GeneralNames(sans.toArray(new GeneralName[0])));
        b.addExtension(Extension.basicConstraints, true, new BasicConstraints(false));
        b.addExtension(
            Extension.extendedKeyUsage, false, new ExtendedKeyUsage(KeyPurposeId.id_kp_serverAuth));
        X509Certificate cert =
            conv.getCertificate(
                b.build(new JcaContentSignerBuilder("SHA256withECDSA").build(caKeys.getPrivate())));
        KeyStore ks = KeyStore.getInstance("PKCS12");
        ks.load(null, null);
        char[] pw = "fake".toCharArray();
        ks.setKeyEntry("kubelet", keys.getPrivate(), pw, new X509Certificate[] {cert, ca});
        KeyManagerFactory kmf =
            KeyManagerFactory.getInstance(KeyManagerFactory.getDefaultAlgorithm());
        kmf.init(ks, pw);
        SSLContext ctx = SSLContext.getInstance("TLS");
        ctx.init(kmf.getKeyManagers(), null, null);
        return new Tls(ca, cert, ctx);
      } catch (GeneralSecurityException
          | IOException
          | org.bouncycastle.operator.OperatorCreationException e) {
        throw new IllegalStateException("cannot generate the fake kubelet's certificates", e);
      }
    }
  }
}
