package dev.evictd.admission;

import dev.evictd.api.ConfigException;
import java.io.IOException;
import java.net.Socket;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.GeneralSecurityException;
import java.security.KeyStore;
import java.security.Principal;
import java.security.PrivateKey;
import java.security.cert.X509Certificate;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.LongSupplier;
import javax.net.ssl.KeyManager;
import javax.net.ssl.KeyManagerFactory;
import javax.net.ssl.SSLEngine;
import javax.net.ssl.X509ExtendedKeyManager;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The server's key manager: the certificate and key of two PEM files, read again when either file
 * changes (cert-manager renews the Secret; the kubelet swaps a mounted Secret's files atomically,
 * through its {@code ..data} link), so a renewed certificate is served without a restart.
 *
 * <p>The files are looked at when a TLS handshake asks for the server's certificate, at most once
 * per {@code checkInterval}: a change (the files' real paths, sizes and modification times) is
 * read, checked ({@link ServingCertificate#read}) and served from the next handshake on. A pair
 * that cannot be read or does not match - e.g. caught between the certificate's and the key's
 * update - keeps the current one in service and is logged once; it is tried again on the next
 * change. Each pair served gets an alias of its own, so a handshake that chose one pair finishes
 * with it even when the next pair arrives meanwhile. Matching the certificate to the client's key
 * types is left to the JDK's own key manager.
 */
public final class ReloadingKeyManager extends X509ExtendedKeyManager {
  private static final Logger LOG = LoggerFactory.getLogger(ReloadingKeyManager.class);
  // the key store lives in memory only; PKCS12 wants a password all the same
  private static final char[] NO_PASSWORD = "in-memory".toCharArray();

  /** How often the files are looked at, by default. */
  public static final Duration DEFAULT_CHECK_INTERVAL = Duration.ofSeconds(10);

  /** What a file was when read: a change to any of these is a new file to read. */
  private record FileStamp(String realPath, long size, long modifiedMillis) {}

  private record Stamp(FileStamp cert, FileStamp key) {}

  /** One pair in service: its alias, the JDK key manager over it, what its files were. */
  private record Served(String alias, X509ExtendedKeyManager keys, Stamp stamp) {}

  private final Path certFile;
  private final Path keyFile;
  private final long checkNanos;
  private final LongSupplier nanoTime;
  private final AtomicLong generation = new AtomicLong();
  private volatile Served current;
  private volatile Served previous;
  private volatile Stamp lastRefused;
  private volatile String lastRefusal;
  private volatile long lastCheck;

  /**
   * Reads the pair now: one that cannot be used is a {@link ConfigException} naming the file.
   *
   * @param checkInterval how often (at most) handshakes look at the files; zero: every handshake
   */
  public ReloadingKeyManager(Path certFile, Path keyFile, Duration checkInterval) {
    this(certFile, keyFile, checkInterval, System::nanoTime);
  }

  ReloadingKeyManager(Path certFile, Path keyFile, Duration checkInterval, LongSupplier nanoTime) {
    this.certFile = certFile;
    this.keyFile = keyFile;
    this.checkNanos = checkInterval.toNanos();
    this.nanoTime = nanoTime;
    Stamp stamp = stamp();
    current = serve(ServingCertificate.read(certFile, keyFile), stamp);
    lastCheck = nanoTime.getAsLong();
    LOG.info("serving certificate {} ({})", describe(current), certFile);
  }

  /** The certificate served now, the serving certificate first. */
  public List<X509Certificate> chain() {
    return List.of(current.keys().getCertificateChain(current.alias()));
  }

  /**
   * Reads the files again if they changed since the pair in service was read; returns whether a new
   * pair is now served.
   */
  public synchronized boolean reloadIfChanged() {
    lastCheck = nanoTime.getAsLong();
    Stamp stamp;
    try {
      stamp = stamp();
    } catch (ConfigException e) {
      refused(null, e.getMessage());
      return false;
    }
    if (stamp.equals(current.stamp()) || stamp.equals(lastRefused)) {
      return false;
    }
    try {
      Served next = serve(ServingCertificate.read(certFile, keyFile), stamp);
      previous = current;
      current = next;
      lastRefused = null;
      lastRefusal = null;
      LOG.info("serving certificate {} (reloaded from {})", describe(next), certFile);
      return true;
    } catch (ConfigException e) {
      refused(stamp, e.getMessage());
      return false;
    }
  }

  /** Logs why files were not taken, once per reason (a file that stays missing is one line). */
  private void refused(Stamp stamp, String why) {
    if (!why.equals(lastRefusal)) {
      LOG.warn(
          "{}: still serving certificate {} (tried again when the files change)",
          why,
          describe(current));
    }
    lastRefusal = why;
    if (stamp != null) {
      lastRefused = stamp;
    }
  }

  private void maybeReload() {
    if (nanoTime.getAsLong() - lastCheck >= checkNanos) {
      reloadIfChanged();
    }
  }

  private Stamp stamp() {
    return new Stamp(fileStamp("--tls-cert-file", certFile), fileStamp("--tls-key-file", keyFile));
  }

  private static FileStamp fileStamp(String option, Path file) {
    try {
      // the real path: a Secret volume's update points ..data at a new directory
      return new FileStamp(
          file.toRealPath().toString(),
          Files.size(file),
          Files.getLastModifiedTime(file).toMillis());
    } catch (IOException e) {
      throw new ConfigException(
          option + " " + file + ": " + dev.evictd.config.IoErrors.cannotRead(file, e));
    }
  }

  private Served serve(ServingCertificate pair, Stamp stamp) {
    String alias = "evictd-webhook-" + generation.incrementAndGet();
    try {
      KeyStore ks = KeyStore.getInstance("PKCS12");
      ks.load(null, null);
      ks.setKeyEntry(alias, pair.key(), NO_PASSWORD, pair.chain().toArray(new X509Certificate[0]));
      KeyManagerFactory kmf = KeyManagerFactory.getInstance("SunX509");
      kmf.init(ks, NO_PASSWORD);
      for (KeyManager km : kmf.getKeyManagers()) {
        if (km instanceof X509ExtendedKeyManager x) {
          return new Served(alias, x, stamp);
        }
      }
      throw new IllegalStateException("the JDK's SunX509 key manager is not an X509 one");
    } catch (GeneralSecurityException | IOException e) {
      throw new ConfigException("--tls-cert-file " + certFile + ": cannot be served: " + e, e);
    }
  }

  private static String describe(Served s) {
    X509Certificate c = s.keys().getCertificateChain(s.alias())[0];
    return "\""
        + c.getSubjectX500Principal().getName()
        + "\", valid until "
        + c.getNotAfter().toInstant();
  }

  /** The pair that owns {@code alias}: the one in service, or the one before it. */
  private Served owner(String alias) {
    Served c = current;
    if (c.alias().equals(alias)) {
      return c;
    }
    Served p = previous;
    return p != null && p.alias().equals(alias) ? p : null;
  }

  @Override
  public String chooseEngineServerAlias(String keyType, Principal[] issuers, SSLEngine engine) {
    maybeReload();
    return current.keys().chooseEngineServerAlias(keyType, issuers, engine);
  }

  @Override
  public String chooseServerAlias(String keyType, Principal[] issuers, Socket socket) {
    maybeReload();
    return current.keys().chooseServerAlias(keyType, issuers, socket);
  }

  @Override
  public String[] getServerAliases(String keyType, Principal[] issuers) {
    return current.keys().getServerAliases(keyType, issuers);
  }

  @Override
  public X509Certificate[] getCertificateChain(String alias) {
    Served s = owner(alias);
    return s == null ? null : s.keys().getCertificateChain(alias);
  }

  @Override
  public PrivateKey getPrivateKey(String alias) {
    Served s = owner(alias);
    return s == null ? null : s.keys().getPrivateKey(alias);
  }

  // a server: no client certificates

  @Override
  public String[] getClientAliases(String keyType, Principal[] issuers) {
    return null;
  }

  @Override
  public String chooseClientAlias(String[] keyType, Principal[] issuers, Socket socket) {
    return null;
  }

  @Override
  public String chooseEngineClientAlias(String[] keyType, Principal[] issuers, SSLEngine engine) {
    return null;
  }
}
