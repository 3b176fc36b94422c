package dev.evictd.cli;

import dev.evictd.admission.AdmissionWebhookServer;
import dev.evictd.admission.EvictionAdmission;
import dev.evictd.admission.PodLookup;
import dev.evictd.admission.ReloadingKeyManager;
import dev.evictd.api.ConfigException;
import dev.evictd.kube.KubeApi;
import dev.evictd.kube.KubeClients;
import dev.evictd.kube.KubeSettings;
import dev.evictd.kube.RetryPolicy;
import io.fabric8.kubernetes.client.KubernetesClient;
import java.nio.file.Path;
import java.time.Duration;
import java.util.concurrent.Callable;
import java.util.concurrent.CountDownLatch;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;

/**
 * {@code evictd admission-webhook}: the validating admission webhook that lets the evictd agents
 * evict only pods of their own node ({@link EvictionAdmission}), served over HTTPS until stopped.
 */
@Command(
    name = "admission-webhook",
    mixinStandardHelpOptions = true,
    description =
        "Serve the validating admission webhook for CREATE pods/eviction: the evictd identity may"
            + " evict a pod only when the pod (looked up by namespace, name and uid) is on the node"
            + " named in its token. Runs until stopped.")
final class AdmissionWebhookCommand implements Callable<Integer> {
  private static final Logger LOG = LoggerFactory.getLogger(AdmissionWebhookCommand.class);

  @Option(
      names = "--tls-cert-file",
      required = true,
      converter = Converters.InputFile.class,
      paramLabel = "FILE",
      description =
          "PEM serving certificate (then any intermediates), e.g. a mounted kubernetes.io/tls"
              + " Secret's tls.crt; read again when it changes.")
  Path certFile;

  @Option(
      names = "--tls-key-file",
      required = true,
      converter = Converters.InputFile.class,
      paramLabel = "FILE",
      description =
          "PEM PKCS#8 private key of the certificate (tls.key); read again when it changes.")
  Path keyFile;

  @Option(
      names = "--address",
      paramLabel = "HOST:PORT",
      defaultValue = ":" + AdmissionWebhookServer.DEFAULT_PORT,
      description =
          "Where to listen (default: ${DEFAULT-VALUE}, loopback; in a pod: $(POD_IP):8443).")
  String address;

  @Option(
      names = "--service-account",
      paramLabel = "USER",
      defaultValue = EvictionAdmission.DEFAULT_SERVICE_ACCOUNT,
      description = "The evictd agents' user name (default: ${DEFAULT-VALUE}).")
  String serviceAccount;

  @Option(
      names = "--cert-check-interval",
      paramLabel = "SECONDS",
      defaultValue = "10",
      description = "How often the certificate files are looked at for a change (default: 10).")
  long certCheckSeconds;

  @Option(names = "--log-format", paramLabel = "FORMAT", description = "text (default) or json.")
  String logFormat;

  @Override
  public Integer call() throws InterruptedException {
    if (logFormat != null && !logFormat.equals("text") && !logFormat.equals("json")) {
      throw new ConfigException("--log-format " + logFormat + ": expected text or json");
    }
    if ("json".equals(logFormat)) {
      Logging.json();
    }
    if (certCheckSeconds < 0) {
      throw new ConfigException("--cert-check-interval " + certCheckSeconds + ": must be >= 0");
    }
    EvictionAdmission.checkServiceAccount(serviceAccount);
    var listen = AdmissionWebhookServer.parseAddress(address);
    ReloadingKeyManager keys =
        new ReloadingKeyManager(certFile, keyFile, Duration.ofSeconds(certCheckSeconds));
    KubernetesClient client =
        KubeClients.create(
            new KubeSettings(PodLookup.DEFAULT_TIMEOUT, Duration.ofSeconds(2), RetryPolicy.NONE));
    EvictionAdmission admission =
        new EvictionAdmission(
            serviceAccount, PodLookup.api(new KubeApi(client, PodLookup.DEFAULT_TIMEOUT)));
    AdmissionWebhookServer server = new AdmissionWebhookServer(listen, keys, admission);
    LOG.info(
        "admission webhook for {} on https://{}:{}{}",
        serviceAccount,
        server.address().getHostString(),
        server.address().getPort(),
        AdmissionWebhookServer.PATH);
    CountDownLatch stopped = new CountDownLatch(1);
    Runtime.getRuntime()
        .addShutdownHook(
            new Thread(
                () -> {
                  server.close();
                  client.close();
                  stopped.countDown();
                },
                "evictd-webhook-shutdown"));
    stopped.await();
    return Main.OK;
  }
}
