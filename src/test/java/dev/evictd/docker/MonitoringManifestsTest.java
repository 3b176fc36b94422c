package dev.evictd.docker;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.fail;

import dev.evictd.agent.AgentMetrics;
import dev.evictd.config.YamlNode;
import java.io.IOException;
import java.lang.reflect.Constructor;
import java.lang.reflect.InvocationTargetException;
import java.lang.reflect.Method;
import java.lang.reflect.Modifier;
import java.lang.reflect.Proxy;
import java.lang.reflect.RecordComponent;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.time.ZoneOffset;
import java.util.ArrayList;
import java.util.Collection;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;
import tools.jackson.databind.JsonNode;
import tools.jackson.databind.json.JsonMapper;

/**
 * The Grafana dashboard and the PrometheusRule in {@code docker/monitoring/} use only metric names,
 * labels and label values the agent exports, so the two cannot drift apart. What the agent exports
 * is not a list kept here: every public method of {@link AgentMetrics} is called (each enum
 * constant and boolean once, so that every closed set of label values appears) and its Prometheus
 * text is read back. A label whose values come from a string argument is open: its name is checked,
 * its values are not.
 */
class MonitoringManifestsTest {
  static final Path MONITORING = Path.of("docker/monitoring");

  /** A string argument: marks a label whose values the caller chooses. */
  static final String OPEN = "open-value";

  /**
   * Labels the scrape adds to every series: Prometheus' {@code job} and {@code instance}, and the
   * pod's labels prometheus-operator sets for a PodMonitor target. The PodMonitor's own relabelings
   * (node) are read from it.
   */
  static final Set<String> SCRAPE_LABELS =
      Set.of("job", "instance", "namespace", "pod", "container", "endpoint");

  // ---- what the agent exports

  /** Metric sample name -> label -> values seen (OPEN among them: any value). */
  record Exported(Map<String, Map<String, Set<String>>> metrics) {
    boolean has(String name) {
      return metrics.containsKey(name);
    }

    Set<String> labels(String name) {
      return metrics.getOrDefault(name, Map.of()).keySet();
    }

    Set<String> values(String name, String label) {
      return metrics.getOrDefault(name, Map.of()).getOrDefault(label, Set.of());
    }
  }

  static final Pattern SAMPLE = Pattern.compile("^([a-zA-Z_:][a-zA-Z0-9_:]*)(?:\\{(.*)})?\\s+\\S+");
  static final Pattern LABEL =
      Pattern.compile("([a-zA-Z_][a-zA-Z0-9_]*)=\"((?:[^\"\\\\]|\\\\.)*)\"");

  static Exported exported() throws Exception {
    return parseExposition(exercisedMetrics().scrape());
  }

  static Exported parseExposition(String text) {
    Map<String, Map<String, Set<String>>> m = new TreeMap<>();
    for (String line : text.split("\n")) {
      if (line.isBlank() || line.startsWith("#")) {
        continue;
      }
      Matcher s = SAMPLE.matcher(line);
      assertThat(s.find()).as("a Prometheus sample line: " + line).isTrue();
      Map<String, Set<String>> labels = m.computeIfAbsent(s.group(1), k -> new TreeMap<>());
      if (s.group(2) != null) {
        Matcher l = LABEL.matcher(s.group(2));
        while (l.find()) {
          labels.computeIfAbsent(l.group(1), k -> new TreeSet<>()).add(l.group(2));
        }
      }
    }
    return new Exported(m);
  }

  /** AgentMetrics with every public method called, each closed-valued argument in every value. */
  static AgentMetrics exercisedMetrics() throws Exception {
    Constructor<?> ctor = AgentMetrics.class.getConstructors()[0];
    for (Constructor<?> c : AgentMetrics.class.getConstructors()) {
      if (c.getParameterCount() < ctor.getParameterCount()) {
        ctor = c;
      }
    }
    AgentMetrics metrics = (AgentMetrics) ctor.newInstance(first(ctor.getParameterTypes()));
    List<String> unusable = new ArrayList<>();
    for (Method method : AgentMetrics.class.getMethods()) {
      if (method.getDeclaringClass() != AgentMetrics.class
          || Modifier.isStatic(method.getModifiers())
          || method.getParameterCount() == 0 && method.getReturnType() != void.class) {
        continue; // accessors (registry, scrape) export nothing
      }
      Class<?>[] types = method.getParameterTypes();
      int calls = 0;
      Throwable last = null;
      for (Object[] args : variants(types)) {
        try {
          method.invoke(metrics, args);
          calls++;
        } catch (InvocationTargetException e) {
          last = e.getCause();
        }
      }
      if (calls == 0) {
        unusable.add(method + ": " + last);
      }
    }
    assertThat(unusable)
        .as("AgentMetrics methods this test could not call with generated arguments")
        .isEmpty();
    return metrics;
  }

  /** The first value of each type, then one variant per further value of each parameter. */
  static List<Object[]> variants(Class<?>[] types) {
    List<List<Object>> values = new ArrayList<>();
    for (Class<?> t : types) {
      values.add(values(t));
    }
    List<Object[]> out = new ArrayList<>();
    Object[] base = values.stream().map(v -> v.get(0)).toArray();
    out.add(base);
    for (int i = 0; i < types.length; i++) {
      for (int k = 1; k < values.get(i).size(); k++) {
        Object[] v = base.clone();
        v[i] = values.get(i).get(k);
        out.add(v);
      }
    }
    return out;
  }

  static Object[] first(Class<?>[] types) {
    Object[] out = new Object[types.length];
    for (int i = 0; i < types.length; i++) {
      out[i] = values(types[i]).get(0);
    }
    return out;
  }

  static final Clock CLOCK = Clock.fixed(Instant.parse("2026-01-01T00:00:00Z"), ZoneOffset.UTC);

  /** Values of a parameter type: every constant of an enum, both booleans, one of anything else. */
  static List<Object> values(Class<?> t) {
    if (t == boolean.class || t == Boolean.class) {
      return List.of(true, false);
    }
    if (t.isEnum()) {
      return List.of(t.getEnumConstants());
    }
    if (t == String.class || t == CharSequence.class) {
      return List.of(OPEN);
    }
    if (t == int.class || t == Integer.class) {
      return List.of(1);
    }
    if (t == long.class || t == Long.class) {
      return List.of(1L);
    }
    if (t == double.class || t == Double.class) {
      return List.of(1.0);
    }
    if (t == float.class || t == Float.class) {
      return List.of(1.0f);
    }
    if (t == Duration.class) {
      return List.of(Duration.ofMillis(5));
    }
    if (t == Instant.class) {
      return List.of(CLOCK.instant());
    }
    if (Clock.class.isAssignableFrom(t)) {
      return List.of(CLOCK);
    }
    if (t == Optional.class) {
      return List.of(Optional.empty());
    }
    if (Map.class.isAssignableFrom(t)) {
      return List.of(Map.of());
    }
    if (Set.class.isAssignableFrom(t)) {
      return List.of(Set.of());
    }
    if (Collection.class.isAssignableFrom(t) || t == Iterable.class) {
      return List.of(List.of());
    }
    if (t.isArray()) {
      return List.of(java.lang.reflect.Array.newInstance(t.getComponentType(), 0));
    }
    if (t.isRecord()) {
      Class<?>[] types =
          java.util.Arrays.stream(t.getRecordComponents())
              .map(RecordComponent::getType)
              .toArray(Class<?>[]::new);
      try {
        Constructor<?> c = t.getDeclaredConstructor(types);
        c.setAccessible(true);
        return List.of(c.newInstance(first(types)));
      } catch (ReflectiveOperationException e) {
        throw new AssertionError("cannot build a " + t.getName() + ": " + e, e);
      }
    }
    if (t.isInterface()) {
      // a callback (a supplier of a gauge's value): answers 1, true or nothing
      return List.of(
          Proxy.newProxyInstance(
              t.getClassLoader(),
              new Class<?>[] {t},
              (proxy, m, args) -> {
                Class<?> r = m.getReturnType();
                if (m.getName().equals("toString")) {
                  return "generated " + t.getSimpleName();
                }
                if (m.getName().equals("hashCode")) {
                  return 1;
                }
                if (m.getName().equals("equals")) {
                  return proxy == args[0];
                }
                return r == void.class ? null : values(r).get(0);
              }));
    }
    for (Constructor<?> c : t.getConstructors()) {
      try {
        return List.of(c.newInstance(first(c.getParameterTypes())));
      } catch (ReflectiveOperationException | RuntimeException e) {
        // try the next constructor
      }
    }
    throw new AssertionError(
        "MonitoringManifestsTest cannot build an argument of type "
            + t.getName()
            + " for AgentMetrics: add it to values()");
  }

  // ---- what the dashboard and the alerts use

  /** One PromQL expression and where it comes from, with the labels its output is read by. */
  record Use(String where, String expr, Set<String> outputLabels) {}

  static final Pattern SELECTOR =
      Pattern.compile("([a-zA-Z_:][a-zA-Z0-9_:]*)?\\s*\\{((?:[^{}\"]|\"(?:[^\"\\\\]|\\\\.)*\")*)}");
  static final Pattern MATCHER =
      Pattern.compile("([a-zA-Z_][a-zA-Z0-9_]*)\\s*(=~|!~|!=|=)\\s*\"((?:[^\"\\\\]|\\\\.)*)\"");
  static final Pattern GROUPING =
      Pattern.compile("\\b(by|without|on|ignoring|group_left|group_right)\\s*\\(([^)]*)\\)");
  static final Pattern IDENT = Pattern.compile("[a-zA-Z_:][a-zA-Z0-9_:]*");
  static final Pattern TEMPLATE_LABEL =
      Pattern.compile("\\{\\{\\s*(?:\\$labels\\.)?([a-zA-Z_][a-zA-Z0-9_]*)\\s*}}");
  static final Set<String> PROMQL_WORDS =
      Set.of(
          "sum",
          "min",
          "max",
          "avg",
          "count",
          "stddev",
          "stdvar",
          "topk",
          "bottomk",
          "quantile",
          "group",
          "count_values",
          "rate",
          "irate",
          "increase",
          "delta",
          "idelta",
          "changes",
          "resets",
          "abs",
          "absent",
          "absent_over_time",
          "clamp_min",
          "clamp_max",
          "ceil",
          "floor",
          "round",
          "scalar",
          "vector",
          "time",
          "timestamp",
          "max_over_time",
          "min_over_time",
          "avg_over_time",
          "sum_over_time",
          "count_over_time",
          "last_over_time",
          "histogram_quantile",
          "label_replace",
          "label_join",
          "sort",
          "sort_desc",
          "and",
          "or",
          "unless",
          "bool",
          "offset",
          "by",
          "without",
          "on",
          "ignoring",
          "group_left",
          "group_right",
          "label_values");

  /** Every metric, label and label value an expression uses that the agent does not export. */
  static List<String> problems(Use use, Exported ex, Set<String> scrapeLabels) {
    List<String> out = new ArrayList<>();
    // Grafana's variables: $__rate_interval is a duration, $node a regex of node names
    String e = use.expr().replace("$__rate_interval", "5m").replaceAll("\\$[a-zA-Z_]+", ".*");
    Set<String> metrics = new LinkedHashSet<>();
    Matcher sel = SELECTOR.matcher(e);
    StringBuilder rest = new StringBuilder();
    List<String[]> matchers = new ArrayList<>();
    while (sel.find()) {
      String name = sel.group(1);
      if (name == null || PROMQL_WORDS.contains(name)) {
        out.add("selector without a metric name {" + sel.group(2) + "}");
        continue;
      }
      metrics.add(name);
      Matcher m = MATCHER.matcher(sel.group(2));
      while (m.find()) {
        matchers.add(new String[] {name, m.group(1), m.group(2), m.group(3)});
      }
      sel.appendReplacement(rest, " ");
    }
    sel.appendTail(rest);
    String bare = rest.toString().replaceAll("\\[[^]]*]", " ").replaceAll("\"[^\"]*\"", " ");
    Set<String> grouping = new LinkedHashSet<>();
    Matcher g = GROUPING.matcher(bare);
    while (g.find()) {
      for (String l : g.group(2).split(",")) {
        if (!l.isBlank()) {
          grouping.add(l.strip());
        }
      }
    }
    bare = GROUPING.matcher(bare).replaceAll(" ");
    Matcher id = IDENT.matcher(bare);
    while (id.find()) {
      String w = id.group();
      boolean number = id.start() > 0 && Character.isDigit(bare.charAt(id.start() - 1));
      if (!PROMQL_WORDS.contains(w) && !number) {
        metrics.add(w);
      }
    }
    Set<String> available = new TreeSet<>(scrapeLabels);
    boolean missing = false;
    for (String m : metrics) {
      if (!ex.has(m)) {
        out.add("metric " + m);
        missing = true;
      } else {
        available.addAll(ex.labels(m));
      }
    }
    for (String[] m : matchers) {
      String metric = m[0];
      String label = m[1];
      if (!ex.has(metric) || scrapeLabels.contains(label)) {
        continue;
      }
      if (!ex.labels(metric).contains(label)) {
        out.add("label " + metric + "{" + label + "}");
        continue;
      }
      Set<String> values = ex.values(metric, label);
      if (values.contains(OPEN) || m[2].startsWith("!")) {
        continue;
      }
      List<String> wanted =
          m[2].equals("=~") ? List.of(m[3].split("\\|")) : List.of(m[3].replace("\\\\", "\\"));
      for (String v : wanted) {
        if (!values.contains(v)) {
          out.add(
              "label value " + metric + "{" + label + "=\"" + v + "\"} (exported: " + values + ")");
        }
      }
    }
    if (missing) {
      return out; // the labels grouped by or shown may be the missing metric's
    }
    for (String l : grouping) {
      if (!available.contains(l)) {
        out.add("label " + l + " (grouped by; the metrics here have " + available + ")");
      }
    }
    for (String l : use.outputLabels()) {
      if (!available.contains(l)) {
        out.add("label " + l + " (shown; the metrics here have " + available + ")");
      }
    }
    return out;
  }

  static Set<String> templateLabels(String... texts) {
    Set<String> out = new TreeSet<>();
    for (String t : texts) {
      if (t == null) {
        continue;
      }
      Matcher m = TEMPLATE_LABEL.matcher(t);
      while (m.find()) {
        out.add(m.group(1));
      }
    }
    return out;
  }

  static List<YamlNode> yaml(String file) throws IOException {
    Path p = MONITORING.resolve(file);
    return YamlNode.parseAll(p.toString(), Files.readAllBytes(p));
  }

  static YamlNode at(YamlNode n, String... path) {
    for (String k : path) {
      n = n.get(k);
      assertThat(n).as(String.join(".", path)).isNotNull();
    }
    return n;
  }

  static JsonNode dashboard() throws IOException {
    return JsonMapper.builder()
        .build()
        .readTree(Files.readString(MONITORING.resolve("grafana-dashboard.json")));
  }

  static List<YamlNode> alertRules() throws IOException {
    YamlNode rule = yaml("prometheusrule.yaml").get(0);
    assertThat(at(rule, "kind").asText()).isEqualTo("PrometheusRule");
    List<YamlNode> out = new ArrayList<>();
    for (YamlNode group : at(rule, "spec", "groups").asList()) {
      out.addAll(at(group, "rules").asList());
    }
    return out;
  }

  static List<Use> uses() throws IOException {
    List<Use> uses = new ArrayList<>();
    for (YamlNode r : alertRules()) {
      YamlNode ann = at(r, "annotations");
      uses.add(
          new Use(
              "prometheusrule.yaml alert " + at(r, "alert").asText(),
              at(r, "expr").asText(),
              templateLabels(at(ann, "summary").asText(), at(ann, "description").asText())));
    }
    List<JsonNode> panels = new ArrayList<>();
    dashboard().get("panels").forEach(panels::add);
    for (int i = 0; i < panels.size(); i++) {
      JsonNode p = panels.get(i);
      if (p.has("panels")) {
        p.get("panels").forEach(panels::add);
      }
      if (!p.has("targets")) {
        continue;
      }
      for (JsonNode t : p.get("targets")) {
        uses.add(
            new Use(
                "grafana-dashboard.json panel \"" + p.get("title").asString() + "\"",
                t.get("expr").asString(),
                templateLabels(t.has("legendFormat") ? t.get("legendFormat").asString() : null)));
      }
    }
    Pattern labelValues = Pattern.compile("label_values\\(\\s*([^,]+),\\s*([a-zA-Z_]\\w*)\\s*\\)");
    for (JsonNode v : dashboard().get("templating").get("list")) {
      if (!"query".equals(v.get("type").asString())) {
        continue;
      }
      String q = v.get("definition").asString();
      Matcher m = labelValues.matcher(q);
      assertThat(m.matches()).as("variable " + v.get("name") + ": " + q).isTrue();
      uses.add(
          new Use(
              "grafana-dashboard.json variable " + v.get("name").asString(),
              m.group(1),
              Set.of(m.group(2))));
    }
    return uses;
  }

  static Set<String> scrapeLabels() throws IOException {
    Set<String> out = new TreeSet<>(SCRAPE_LABELS);
    YamlNode pm = yaml("podmonitor.yaml").get(0);
    for (YamlNode ep : at(pm, "spec", "podMetricsEndpoints").asList()) {
      YamlNode rl = ep.get("relabelings");
      if (rl != null) {
        rl.asList().forEach(r -> out.add(at(r, "targetLabel").asText()));
      }
    }
    return out;
  }

  /** Problems grouped by what is missing, each with every place that uses it. */
  static String report(List<Use> uses, Exported ex, Set<String> scrapeLabels) {
    Map<String, List<String>> byProblem = new TreeMap<>();
    for (Use u : uses) {
      for (String p : problems(u, ex, scrapeLabels)) {
        byProblem.computeIfAbsent(p, k -> new ArrayList<>()).add(u.where());
      }
    }
    StringBuilder sb = new StringBuilder();
    byProblem.forEach(
        (p, where) ->
            sb.append("\n  ")
                .append(p)
                .append(" is not exported by AgentMetrics; used by: ")
                .append(String.join(", ", new LinkedHashSet<>(where))));
    return sb.toString();
  }

  // ---- the tests

  @Test
  void everyMetricLabelAndValueTheDashboardAndAlertsUseIsOneTheAgentExports() throws Exception {
    Exported ex = exported();
    List<Use> uses = uses();
    assertThat(uses).hasSizeGreaterThan(20);
    String report = report(uses, ex, scrapeLabels());
    if (!report.isEmpty()) {
      fail(
          "docker/monitoring/ uses metrics, labels or values the agent does not export"
              + report
              + "\n(exported, as AgentMetrics renders them: "
              + ex.metrics().keySet()
              + ")");
    }
  }

  @Test
  void theCheckFindsAMisspelledMetricAnUnknownLabelAndAValueNeverExported() throws Exception {
    Exported ex =
        parseExposition(
            "# TYPE evictd_syncs_total counter\n"
                + "evictd_syncs_total{result=\"ok\"} 1.0\n"
                + "evictd_evictions_total{signal=\"open-value\",outcome=\"evicted\"} 1.0\n");
    Set<String> scrape = Set.of("job", "node");
    assertThat(problems(use("sum by (node) (rate(evictd_syncs_total[5m]))"), ex, scrape)).isEmpty();
    assertThat(problems(use("rate(evictd_sync_total[5m])"), ex, scrape))
        .containsExactly("metric evictd_sync_total");
    assertThat(problems(use("evictd_syncs_total{reason=\"x\"}"), ex, scrape))
        .containsExactly("label evictd_syncs_total{reason}");
    assertThat(problems(use("evictd_syncs_total{result=\"failed\"}"), ex, scrape))
        .containsExactly("label value evictd_syncs_total{result=\"failed\"} (exported: [ok])");
    assertThat(problems(use("evictd_evictions_total{outcome=~\"evicted|gone\"}"), ex, scrape))
        .containsExactly(
            "label value evictd_evictions_total{outcome=\"gone\"} (exported: [evicted])");
    assertThat(problems(use("evictd_evictions_total{signal=\"memory.available\"}"), ex, scrape))
        .as("a label filled from a string is open")
        .isEmpty();
    assertThat(problems(use("sum by (pod_name) (evictd_syncs_total)"), ex, scrape))
        .singleElement()
        .asString()
        .startsWith("label pod_name (grouped by");
    assertThat(problems(new Use("t", "evictd_syncs_total", Set.of("signal")), ex, scrape))
        .singleElement()
        .asString()
        .startsWith("label signal (shown");
    assertThat(
            report(
                List.of(use("evictd_nope"), new Use("panel \"b\"", "evictd_nope", Set.of())),
                ex,
                scrape))
        .isEqualTo(
            "\n  metric evictd_nope is not exported by AgentMetrics; used by: test, panel \"b\"");
  }

  static Use use(String expr) {
    return new Use("test", expr, Set.of());
  }

  @Test
  void theExportedSetComesFromTheRunningMetricsCode() throws Exception {
    Exported ex = exported();
    // the enum-labelled gauges show every value; a counter the code increments shows its labels
    assertThat(ex.values("evictd_node_condition", "condition"))
        .containsExactlyInAnyOrder("MemoryPressure", "DiskPressure", "PIDPressure");
    assertThat(ex.values("evictd_evictions_total", "outcome"))
        .contains("evicted", "pdb_blocked", "not_found", "failed", "dry_run");
    assertThat(ex.labels("evictd_evictions_total")).contains("signal", "method", "outcome");
    assertThat(ex.has("evictd_sync_duration_seconds_count")).isTrue();
  }

  @Test
  void everyAlertNamesItsRunbookSection() throws IOException {
    String runbook = Files.readString(Path.of("docs/runbook.md"));
    assertThat(runbook).as("docs/runbook.md is the runbook").startsWith("# Runbook\n");
    Map<String, String> sections = new LinkedHashMap<>();
    Matcher h = Pattern.compile("\n## (\\S+)\n").matcher(runbook);
    while (h.find()) {
      sections.put(h.group(1), "docs/runbook.md#" + h.group(1).toLowerCase(Locale.ROOT));
    }
    Set<String> alerts = new LinkedHashSet<>();
    for (YamlNode r : alertRules()) {
      String name = at(r, "alert").asText();
      alerts.add(name);
      YamlNode ann = at(r, "annotations");
      assertThat(sections).as("a runbook section for " + name).containsKey(name);
      assertThat(at(ann, "runbook_url").asText()).as(name).isEqualTo(sections.get(name));
      assertThat(at(ann, "description").asText()).as(name).contains("Runbook, " + name);
      assertThat(at(r, "labels", "severity").asText()).isIn("info", "warning", "critical");
    }
    assertThat(sections.keySet()).as("every runbook section has its alert").isEqualTo(alerts);
  }

  @Test
  void theAlertsCoverWhatTheIssueAsksFor() throws IOException {
    String all = String.join("\n", alertRules().stream().map(r -> at(r, "expr").asText()).toList());
    assertThat(all)
        .contains(
            "evictd_evictions_total",
            "evictd_syncs_total{result=\"failed\"}",
            "evictd_syncs_total{result=\"skipped\"}",
            "evictd_stats_age_seconds",
            "evictd_pod_view_age_seconds",
            "evictd_rule_reloads_total{result=\"failed\"}",
            "evictd_rule_reloads_total{result=\"rolled_back\"}",
            "evictd_decisions_refused_total",
            "evictd_rule_threads_abandoned",
            "evictd_node_condition",
            "count by (sha256) (evictd_rules_info");
  }

  @Test
  void theMonitoringKustomizationWiresItsFilesAndScrapesTheDaemonSet() throws IOException {
    YamlNode k = yaml("kustomization.yaml").get(0);
    for (YamlNode r : at(k, "resources").asList()) {
      assertThat(MONITORING.resolve(r.asText())).exists();
    }
    YamlNode gen = at(k, "configMapGenerator").asList().get(0);
    assertThat(at(gen, "files").asList())
        .extracting(YamlNode::asText)
        .contains("grafana-dashboard.json");
    assertThat(at(gen, "options", "labels", "grafana_dashboard").asText()).isEqualTo("1");
    // the PodMonitor selects the DaemonSet's pods and scrapes its named metrics port
    YamlNode pm = yaml("podmonitor.yaml").get(0);
    YamlNode ds = DockerManifestsTest.docs("daemonset.yaml").get(0);
    Map<String, YamlNode> podLabels = at(ds, "spec", "template", "metadata", "labels").asMap();
    at(pm, "spec", "selector", "matchLabels")
        .asMap()
        .forEach((key, v) -> assertThat(podLabels.get(key).asText()).isEqualTo(v.asText()));
    String port = at(pm, "spec", "podMetricsEndpoints").asList().get(0).get("port").asText();
    assertThat(
            at(DockerManifestsTest.container(), "ports").asList().stream()
                .map(p -> at(p, "name").asText()))
        .contains(port);
    // Grafana: unique panel ids on a 24-column grid
    Set<Integer> ids = new TreeSet<>();
    for (JsonNode p : dashboard().get("panels")) {
      assertThat(ids.add(p.get("id").asInt())).as("panel id " + p.get("id")).isTrue();
      JsonNode gp = p.get("gridPos");
      assertThat(gp.get("x").asInt() + gp.get("w").asInt())
          .as(p.get("title").asString())
          .isLessThanOrEqualTo(24);
    }
  }
}
