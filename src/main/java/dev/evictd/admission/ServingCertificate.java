package dev.evictd.admission;

import dev.evictd.api.ConfigException;
import java.io.ByteArrayInputStream;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.GeneralSecurityException;
import java.security.KeyFactory;
import java.security.PrivateKey;
import java.security.Signature;
import java.security.cert.Certificate;
import java.security.cert.CertificateFactory;
import java.security.cert.X509Certificate;
import java.security.spec.PKCS8EncodedKeySpec;
import java.util.ArrayList;
import java.util.Base64;
import java.util.List;

/**
 * A TLS serving certificate chain and its private key, read from PEM files as a {@code
 * kubernetes.io/tls} Secret (cert-manager's or {@code kubectl create secret tls}) holds them:
 * {@code tls.crt} (the certificate, then any intermediates) and {@code tls.key} (an unencrypted
 * PKCS#8 {@code PRIVATE KEY}: RSA, EC or EdDSA). The key is checked to belong to the first
 * certificate.
 *
 * <p>PKCS#1 ({@code RSA PRIVATE KEY}) and SEC1 ({@code EC PRIVATE KEY}) keys are refused with what
 * to change: the JDK reads PKCS#8 only, and cert-manager writes PKCS#8 when asked ({@code
 * spec.privateKey.encoding: PKCS8}).
 *
 * @param chain the certificates of {@code tls.crt}, the serving certificate first
 * @param key the private key of {@code tls.key}
 */
public record ServingCertificate(List<X509Certificate> chain, PrivateKey key) {
  private static final String BEGIN = "-----BEGIN ";
  private static final String KEY_ALGORITHMS_TRIED = "RSA, EC, EdDSA";

  public ServingCertificate {
    chain = List.copyOf(chain);
  }

  /**
   * Reads both files; a file that is missing, unreadable, not PEM, or a key that does not match the
   * certificate is a {@link ConfigException} of one line naming the option and the file.
   */
  public static ServingCertificate read(Path certFile, Path keyFile) {
    List<X509Certificate> chain = certificates(certFile);
    PrivateKey key = privateKey(keyFile);
    if (!belongTogether(chain.get(0), key)) {
      throw new ConfigException(
          "--tls-key-file "
              + keyFile
              + ": not the private key of the certificate in "
              + certFile
              + " ("
              + chain.get(0).getSubjectX500Principal().getName()
              + ")");
    }
    return new ServingCertificate(chain, key);
  }

  static List<X509Certificate> certificates(Path file) {
    byte[] bytes = readBytes("--tls-cert-file", file);
    List<X509Certificate> chain = new ArrayList<>();
    try {
      for (Certificate c :
          CertificateFactory.getInstance("X.509")
              .generateCertificates(new ByteArrayInputStream(bytes))) {
        chain.add((X509Certificate) c);
      }
    } catch (GeneralSecurityException e) {
      throw new ConfigException(
          "--tls-cert-file " + file + ": not a PEM certificate: " + oneLine(e), e);
    }
    if (chain.isEmpty()) {
      throw new ConfigException("--tls-cert-file " + file + ": no certificate in it");
    }
    return chain;
  }

  static PrivateKey privateKey(Path file) {
    String where = "--tls-key-file " + file;
    String text = new String(readBytes("--tls-key-file", file), StandardCharsets.US_ASCII);
    int begin = text.indexOf(BEGIN);
    if (begin < 0) {
      throw new ConfigException(where + ": not a PEM file (no -----BEGIN line)");
    }
    int labelEnd = text.indexOf("-----", begin + BEGIN.length());
    String label = labelEnd < 0 ? "" : text.substring(begin + BEGIN.length(), labelEnd);
    if (!label.equals("PRIVATE KEY")) {
      throw new ConfigException(where + ": " + label + " is not supported: " + advice(label));
    }
    String end = "-----END PRIVATE KEY-----";
    int endAt = text.indexOf(end, labelEnd);
    if (endAt < 0) {
      throw new ConfigException(where + ": no " + end + " line");
    }
    byte[] der;
    try {
      der = Base64.getMimeDecoder().decode(text.substring(labelEnd + 5, endAt));
    } catch (IllegalArgumentException e) {
      throw new ConfigException(where + ": the key is not base64: " + e.getMessage());
    }
    PKCS8EncodedKeySpec spec = new PKCS8EncodedKeySpec(der);
    for (String algorithm : List.of("RSA", "EC", "EdDSA")) {
      try {
        return KeyFactory.getInstance(algorithm).generatePrivate(spec);
      } catch (GeneralSecurityException e) {
        // not this algorithm's key: try the next
      }
    }
    throw new ConfigException(
        where + ": not a PKCS#8 private key of " + KEY_ALGORITHMS_TRIED + " (unreadable)");
  }

  private static String advice(String label) {
    return switch (label) {
      case "RSA PRIVATE KEY", "EC PRIVATE KEY" ->
          "write the key as PKCS#8 (BEGIN PRIVATE KEY):"
              + " cert-manager spec.privateKey.encoding: PKCS8, or"
              + " openssl pkcs8 -topk8 -nocrypt -in KEY";
      case "ENCRYPTED PRIVATE KEY" -> "the key must not be encrypted";
      default -> "expected an unencrypted PKCS#8 key (BEGIN PRIVATE KEY)";
    };
  }

  /** Whether {@code key} signs what the certificate's public key verifies. */
  private static boolean belongTogether(X509Certificate cert, PrivateKey key) {
    String algorithm =
        switch (key.getAlgorithm()) {
          case "RSA" -> "SHA256withRSA";
          case "EC" -> "SHA256withECDSA";
          default -> key.getAlgorithm(); // EdDSA (Ed25519, Ed448): the key names its scheme
        };
    byte[] probe = "evictd admission webhook".getBytes(StandardCharsets.US_ASCII);
    try {
      Signature s = Signature.getInstance(algorithm);
      s.initSign(key);
      s.update(probe);
      byte[] signature = s.sign();
      Signature v = Signature.getInstance(algorithm);
      v.initVerify(cert.getPublicKey());
      v.update(probe);
      return v.verify(signature);
    } catch (GeneralSecurityException e) {
      // e.g. an EC key against an RSA certificate
      return false;
    }
  }

  private static byte[] readBytes(String option, Path file) {
    try {
      return Files.readAllBytes(file);
    } catch (IOException e) {
      throw new ConfigException(
          option + " " + file + ": " + dev.evictd.config.IoErrors.cannotRead(file, e));
    }
  }

  private static String oneLine(Exception e) {
    return dev.evictd.config.IoErrors.words(e);
  }
}
