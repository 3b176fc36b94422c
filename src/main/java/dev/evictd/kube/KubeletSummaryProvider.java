package dev.evictd.kube;

import dev.evictd.api.StatsException;
import dev.evictd.config.KeySuggestions;
import dev.evictd.k8s.SummaryFields;
import dev.evictd.k8s.SummaryJson;
import dev.evictd.ports.StatsProvider;
import dev.evictd.stats.Summary;
import io.fabric8.kubernetes.client.Config;
import io.fabric8.kubernetes.client.ConfigBuilder;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.http.HttpClient;
import io.fabric8.kubernetes.client.jdkhttp.JdkHttpClientFactory;
import io.fabric8.kubernetes.client.utils.KubernetesSerialization;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.Consumer;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import tools.jackson.core.JacksonException;
import tools.jackson.databind.DeserializationFeature;
import tools.jackson.databind.ObjectReader;
import tools.jackson.databind.json.JsonMapper;

/**
 * The kubelet's Summary API ({@code /stats/summary}) as a {@link StatsProvider}, read through the
 * API server's node proxy or straight from the kubelet's port. Every read is one request bounded by
 * a timeout. A failed, unreadable or stale read throws {@link StatsException}: no observation,
 * never zeros. Fields the kubelet leaves out stay null. A field the statsapi schema evictd knows
 * does not have (a newer kubelet's) is logged at INFO once per field and process, never per sync;
 * the fields are checked at the first read and every {@link #CHECK_FIELDS_EVERY}th after it.
 */
public final class KubeletSummaryProvider implements StatsProvider, AutoCloseable {
  /** The API server path of a node's summary, through the node proxy. */
  public static final String PROXY_PATH = "/api/v1/nodes/%s/proxy/stats/summary";

  /** The kubelet's own path of the summary. */
  public static final String KUBELET_PATH = "/stats/summary";

  /**
   * How far ahead of the agent's clock the summary's times may be: the kubelet runs on the same
   * node, so only a small skew (a clock step, a container's view of time) is legitimate.
   */
  public static final Duration MAX_CLOCK_SKEW = Duration.ofSeconds(10);

  private static final JsonMapper MAPPER =
      JsonMapper.builder()
          .disable(DeserializationFeature.FAIL_ON_UNKNOWN_PROPERTIES)
          .addModule(SummaryJson.module())
          .build();

  private static final Logger LOG = LoggerFactory.getLogger(KubeletSummaryProvider.class);

  /**
   * How many fields outside the schema one process names: a kubelet (or what answers for it) that
   * sends ever new ones is not worth a line per field.
   */
  static final int MAX_UNKNOWN_FIELDS = 100;

  /**
   * The fields outside the schema this process has named ({@link SummaryFields.Unknown#field()}:
   * the same field of every pod is one), across providers: each is said once, not at every sync.
   */
  private static final Set<String> UNKNOWN_FIELDS_SAID = ConcurrentHashMap.newKeySet();

  /**
   * Every how many reads the summary's fields are checked against the schema, the first read
   * included: the check walks every field the model does not bind (about a third more time on a
   * real 110-pod summary, 7.8 against 5.9 ms under C1), while a kubelet's fields change only when
   * it is upgraded; at the kubelet's 10 s housekeeping, a new field is said within 10 minutes.
   */
  static final int CHECK_FIELDS_EVERY = 60;

  /** The summary's reader. */
  private static final ObjectReader READER = MAPPER.readerFor(Summary.class);

  /** The summary's reader, telling {@link #unknownField} of fields outside the schema. */
  private final ObjectReader checkingReader =
      READER.withAttribute(
          SummaryJson.UNKNOWN_FIELDS, (Consumer<SummaryFields.Unknown>) this::unknownField);

  /** The reads so far, for {@link #CHECK_FIELDS_EVERY}. */
  private final AtomicLong reads = new AtomicLong();

  private final KubeApi api;
  private final String path;
  private final String nodeName;
  private final Duration maxAge;
  private final Clock clock;
  private final HttpClient ownedHttp;
  private final String kubeletUrl;

  private KubeletSummaryProvider(
      KubeApi api,
      String path,
      String nodeName,
      Duration maxAge,
      Clock clock,
      HttpClient ownedHttp,
      String kubeletUrl) {
    this.kubeletUrl = kubeletUrl;
    this.api = api;
    this.path = path;
    this.nodeName = nodeName;
    this.maxAge = maxAge;
    this.clock = clock;
    this.ownedHttp = ownedHttp;
  }

  /**
   * Reads {@code nodeName}'s summary through the API server's node proxy ({@code nodes/proxy} get).
   *
   * @param timeout how long one read may take
   * @param maxAge how old the newest node statistics may be before the read counts as stale
   */
  public static KubeletSummaryProvider viaApiServer(
      KubernetesClient client, String nodeName, Duration timeout, Duration maxAge, Clock clock) {
    return new KubeletSummaryProvider(
        new KubeApi(client, timeout),
        String.format(PROXY_PATH, KubeApi.segment(nodeName)),
        nodeName,
        maxAge,
        clock,
        null,
        null);
  }

  /**
   * Reads {@code nodeName}'s summary from its kubelet at {@code endpoint} ({@code nodes/stats} get,
   * authorized by the kubelet): the token (over TLS only) and the serving certificate as the
   * endpoint says. The token and CA files are checked first: a missing or unreadable one is a
   * {@link dev.evictd.api.ConfigException} naming the setting and the file.
   *
   * @param timeout how long one read may take
   * @param maxAge how old the newest node statistics may be before the read counts as stale
   */
  public static KubeletSummaryProvider direct(
      KubeletEndpoint endpoint, String nodeName, Duration timeout, Duration maxAge, Clock clock) {
    endpoint.check();
    ConfigBuilder config =
        new ConfigBuilder(Config.empty())
            .withMasterUrl(endpoint.baseUri().toString())
            .withRequestRetryBackoffLimit(0)
            .withRequestTimeout(Math.toIntExact(timeout.toMillis()))
            .withConnectionTimeout(Math.toIntExact(timeout.toMillis()));
    if (endpoint.sendsToken()) {
      config.withOauthTokenProvider(() -> readToken(endpoint));
    }
    HttpClient.Builder builder = new JdkHttpClientFactory().newBuilder(config.build());
    if ("https".equals(endpoint.baseUri().getScheme())) {
      // evictd's own trust: the chain against kubeletCaFile, the name against the URL's host or
      // kubeletTlsServerName (fabric8 would check neither as configured)
      builder.sslContext(null, KubeletTls.trustManagers(endpoint));
    }
    HttpClient http = builder.build();
    KubeApi api =
        new KubeApi(http, endpoint.baseUri().toString(), timeout, new KubernetesSerialization());
    return new KubeletSummaryProvider(
        api, KUBELET_PATH, nodeName, maxAge, clock, http, endpoint.baseUri().toString());
  }

  /** GET another path of the same kubelet (or API server), e.g. {@code /configz} for a capture. */
  ApiResponse get(String otherPath) {
    return api.get(otherPath);
  }

  @Override
  public Summary summary() {
    ApiResponse r = api.get(path);
    if (!r.isSuccess()) {
      throw new StatsException(what() + ": " + r.describe() + hint(r));
    }
    Summary summary;
    try {
      ObjectReader reader =
          reads.getAndIncrement() % CHECK_FIELDS_EVERY == 0 ? checkingReader : READER;
      summary = reader.readValue(r.body());
    } catch (JacksonException e) {
      throw new StatsException(
          what() + ": unreadable summary: " + dev.evictd.config.JsonErrors.located(e));
    }
    if (summary == null) {
      throw new StatsException(what() + ": empty summary");
    }
    check(summary);
    return summary;
  }

  /** Says once per process that the kubelet sent a field outside the schema evictd knows. */
  private void unknownField(SummaryFields.Unknown u) {
    String field = u.field();
    if (UNKNOWN_FIELDS_SAID.size() < MAX_UNKNOWN_FIELDS && UNKNOWN_FIELDS_SAID.add(field)) {
      LOG.info(
          "{}: field \"{}\" is not in the stats summary evictd knows{}; it is not read (a newer"
              + " kubelet's field is harmless; said once per field)",
          what(),
          field,
          KeySuggestions.suggestion(u.name(), u.known()));
    }
  }

  private void check(Summary summary) {
    Summary.NodeStats node = summary.node();
    if (node == null) {
      // without node statistics no signal can be observed: not a fresh read
      throw new StatsException(what() + ": summary has no \"node\" statistics");
    }
    if (node.nodeName() != null && !node.nodeName().equals(nodeName)) {
      throw new StatsException(what() + ": summary is of node " + node.nodeName());
    }
    Instant newest = newestTime(node);
    if (newest != null) {
      Duration age = Duration.between(newest, clock.instant());
      if (age.negated().compareTo(MAX_CLOCK_SKEW) > 0) {
        // statistics from the future would never turn stale: refuse them like unreadable ones
        throw new StatsException(
            what()
                + ": node statistics dated "
                + newest
                + ", "
                + age.negated().toSeconds()
                + " s ahead of this node's clock (allowed skew "
                + MAX_CLOCK_SKEW.toSeconds()
                + " s)");
      }
      if (age.compareTo(maxAge) > 0) {
        throw new StatsException(
            what()
                + ": stale summary, newest node statistics from "
                + newest
                + " ("
                + age.toSeconds()
                + " s old, limit "
                + maxAge.toSeconds()
                + " s)");
      }
    }
  }

  private static Instant newestTime(Summary.NodeStats node) {
    List<Instant> times = new ArrayList<>();
    if (node.memory() != null) {
      times.add(node.memory().time());
    }
    if (node.fs() != null) {
      times.add(node.fs().time());
    }
    if (node.rlimit() != null) {
      times.add(node.rlimit().time());
    }
    if (node.runtime() != null && node.runtime().imageFs() != null) {
      times.add(node.runtime().imageFs().time());
    }
    if (node.runtime() != null && node.runtime().containerFs() != null) {
      times.add(node.runtime().containerFs().time());
    }
    return times.stream().filter(t -> t != null).max(Comparator.naturalOrder()).orElse(null);
  }

  private String what() {
    return "kubelet summary of node "
        + nodeName
        + (kubeletUrl == null ? "" : " from " + kubeletUrl + KUBELET_PATH);
  }

  /** What to change when the kubelet refused us. */
  private String hint(ApiResponse r) {
    if (kubeletUrl == null) {
      return r.code() == 403 ? " (grant get on nodes/proxy, or use the kubelet directly)" : "";
    }
    if (r.code() == 401) {
      return " (the kubelet does not accept the token of kubeletTokenFile)";
    }
    if (r.code() == 403) {
      return " (grant get on nodes/stats)";
    }
    return "";
  }

  private static String readToken(KubeletEndpoint endpoint) {
    try {
      return Files.readString(endpoint.tokenFile(), StandardCharsets.UTF_8).strip();
    } catch (IOException e) {
      throw new StatsException(
          "cannot read the kubelet token " + endpoint.tokenFile() + ": " + e.getMessage());
    }
  }

  @Override
  public void close() {
    if (ownedHttp != null) {
      ownedHttp.close();
    }
  }
}
