package dev.evictd.testing;

import java.io.IOException;
import java.io.StringWriter;
import java.math.BigInteger;
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
import java.util.Base64;
import java.util.Date;
import java.util.List;
import java.util.concurrent.atomic.AtomicLong;
import javax.net.ssl.SSLContext;
import javax.net.ssl.TrustManagerFactory;
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
import org.bouncycastle.operator.OperatorCreationException;
import org.bouncycastle.operator.jcajce.JcaContentSignerBuilder;

/**
 * A CA and serving certificates it signs, generated per test (as cert-manager issues a webhook's
 * certificate), written as a {@code kubernetes.io/tls} Secret has them: {@code tls.crt} and a
 * PKCS#8 {@code tls.key}.
 */
public final class TestCertificates {
  private static final AtomicLong SERIAL = new AtomicLong(1);

  /** A serving certificate with its key and the CA that signed it. */
  public record Issued(X509Certificate ca, X509Certificate cert, KeyPair keys) {
    /** Writes {@code tls.crt} (the certificate) and {@code tls.key} (PKCS#8) into {@code dir}. */
    public void writeTo(Path dir) throws IOException {
      Files.createDirectories(dir);
      Files.writeString(dir.resolve("tls.crt"), pem(cert));
      Files.writeString(dir.resolve("tls.key"), pkcs8(keys));
    }

    /** A client SSL context that trusts only this certificate's CA. */
    public SSLContext clientContext() {
      return trusting(ca);
    }
  }

  private final X509Certificate ca;
  private final KeyPair caKeys;
  private final X500Name caName;

  private TestCertificates(String algorithm) {
    try {
      caKeys = generator(algorithm).generateKeyPair();
      Instant now = Instant.now();
      caName = new X500Name("CN=evictd-test-ca-" + SERIAL.get());
      X509v3CertificateBuilder b =
          new JcaX509v3CertificateBuilder(
              caName,
              BigInteger.valueOf(SERIAL.getAndIncrement()),
              Date.from(now.minus(Duration.ofMinutes(5))),
              Date.from(now.plus(Duration.ofDays(1))),
              caName,
              caKeys.getPublic());
      b.addExtension(Extension.basicConstraints, true, new BasicConstraints(true));
      b.addExtension(
          Extension.keyUsage, true, new KeyUsage(KeyUsage.keyCertSign | KeyUsage.cRLSign));
      ca = sign(b, caKeys);
    } catch (GeneralSecurityException | IOException | OperatorCreationException e) {
      throw new IllegalStateException("cannot generate a test CA", e);
    }
  }

  /** A new CA with EC P-256 keys. */
  public static TestCertificates ec() {
    return new TestCertificates("EC");
  }

  /** A new CA with RSA 2048 keys. */
  public static TestCertificates rsa() {
    return new TestCertificates("RSA");
  }

  /** The CA's certificate. */
  public X509Certificate ca() {
    return ca;
  }

  /** A serving certificate for {@code names} (DNS names or IP addresses), named {@code cn}. */
  public Issued issue(String cn, String... names) {
    try {
      KeyPair keys = generator(caKeys.getPublic().getAlgorithm()).generateKeyPair();
      Instant now = Instant.now();
      X509v3CertificateBuilder b =
          new JcaX509v3CertificateBuilder(
              caName,
              BigInteger.valueOf(SERIAL.getAndIncrement()),
              Date.from(now.minus(Duration.ofMinutes(5))),
              Date.from(now.plus(Duration.ofDays(1))),
              new X500Name("CN=" + cn),
              keys.getPublic());
      List<GeneralName> sans = new ArrayList<>();
      for (String n : names) {
        sans.add(
            new GeneralName(n.matches("[0-9.]+") ? GeneralName.iPAddress : GeneralName.dNSName, n));
      }
      b.addExtension(
          Extension.subjectAlternativeName,
          false,
          new GeneralNames(sans.toArray(new GeneralName[0])));
      b.addExtension(Extension.basicConstraints, true, new BasicConstraints(false));
      b.addExtension(
          Extension.extendedKeyUsage, false, new ExtendedKeyUsage(KeyPurposeId.id_kp_serverAuth));
      return new Issued(ca, sign(b, caKeys), keys);
    } catch (GeneralSecurityException | IOException | OperatorCreationException e) {
      throw new IllegalStateException("cannot issue a test certificate", e);
    }
  }

  /** A certificate as PEM. */
  public static String pem(X509Certificate cert) throws IOException {
    StringWriter w = new StringWriter();
    try (JcaPEMWriter p = new JcaPEMWriter(w)) {
      p.writeObject(cert);
    }
    return w.toString();
  }

  /** A private key as PKCS#8 PEM ({@code BEGIN PRIVATE KEY}), as cert-manager writes it. */
  public static String pkcs8(KeyPair keys) {
    return "-----BEGIN PRIVATE KEY-----\n"
        + Base64.getMimeEncoder(64, "\n".getBytes(java.nio.charset.StandardCharsets.US_ASCII))
            .encodeToString(keys.getPrivate().getEncoded())
        + "\n-----END PRIVATE KEY-----\n";
  }

  /**
   * A private key in OpenSSL's traditional form ({@code RSA PRIVATE KEY}, {@code EC PRIVATE KEY}).
   */
  public static String traditional(KeyPair keys) throws IOException {
    StringWriter w = new StringWriter();
    try (JcaPEMWriter p = new JcaPEMWriter(w)) {
      p.writeObject(keys.getPrivate());
    }
    return w.toString();
  }

  /** A client SSL context that trusts only {@code ca}. */
  public static SSLContext trusting(X509Certificate ca) {
    try {
      KeyStore ts = KeyStore.getInstance("PKCS12");
      ts.load(null, null);
      ts.setCertificateEntry("ca", ca);
      TrustManagerFactory tmf =
          TrustManagerFactory.getInstance(TrustManagerFactory.getDefaultAlgorithm());
      tmf.init(ts);
      SSLContext ctx = SSLContext.getInstance("TLS");
      ctx.init(null, tmf.getTrustManagers(), null);
      return ctx;
    } catch (GeneralSecurityException | IOException e) {
      throw new IllegalStateException("cannot build a client TLS context", e);
    }
  }

  private static KeyPairGenerator generator(String algorithm) throws GeneralSecurityException {
    KeyPairGenerator g = KeyPairGenerator.getInstance(algorithm);
    g.initialize(algorithm.equals("RSA") ? 2048 : 256);
    return g;
  }

  private static X509Certificate sign(X509v3CertificateBuilder b, KeyPair signer)
      throws OperatorCreationException, GeneralSecurityException {
    String alg =
        signer.getPrivate().getAlgorithm().equals("RSA") ? "SHA256withRSA" : "SHA256withECDSA";
    return new JcaX509CertificateConverter()
        .getCertificate(b.build(new JcaContentSignerBuilder(alg).build(signer.getPrivate())));
  }
}
