package dev.evictd.bench;

import java.math.BigDecimal;
import java.math.RoundingMode;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import tools.jackson.databind.JsonNode;
import tools.jackson.databind.SerializationFeature;
import tools.jackson.databind.json.JsonMapper;

/**
 * Merges the parts of a benchmark run in {@code args[0]} (target/bench) into {@code summary.json}:
 * one flat object of numbers, milliseconds ({@code _ms}) or MiB ({@code _mib}).
 *
 * <p>JMH figures: {@code <benchmark>_<pods>_ms} is the median of the sampled sync times ({@code
 * _mean_ms} the mean, {@code _p99_ms} the 99th percentile); {@code ref_} for the kubelet reference.
 * The other parts are read from {@code startup.json}, {@code e2d.json} (and {@code e2d-cold.json},
 * {@code e2d-pod-cgroups.json}: prefixes {@code cold_}, {@code pod_cgroups_}) and {@code
 * footprint.json}, {@code cli.json}, {@code jdk25.json} when present; {@code jmh-loaded.json} (the
 * JMH run with the other core busy) gives the same keys prefixed {@code loaded_}, and {@code
 * <sync>_vs_ref} is the ratio of the medians. Missed crossings are figures ({@code
 * event_to_decision_missed}, {@code event_to_decision_cold_missed}), a part that failed is {@code
 * <part>_failed}. A required key that is missing is named, and fails a full run. Also prints the
 * rules-vs-reference table.
 */
public final class Summarize {
  static final List<String> REQUIRED =
      List.of(
          "steady_110_ms",
          "steady_1000_ms",
          "steady_5000_ms",
          "pressure_110_ms",
          "pressure_1000_ms",
          "pressure_5000_ms",
          "disk_1000_ms",
          "ref_steady_110_ms",
          "ref_steady_1000_ms",
          "ref_steady_5000_ms",
          "ref_pressure_110_ms",
          "ref_pressure_1000_ms",
          "ref_pressure_5000_ms",
          "ref_disk_1000_ms",
          "steady_110_vs_ref",
          "loaded_steady_110_ms",
          "loaded_ref_steady_110_ms",
          "loaded_steady_110_vs_ref",
          "startup_ms",
          "rules_check_ms",
          "test_fixtures_ms",
          "test_fixtures_peak_rss_mib",
          "event_to_decision_p50_ms",
          "event_to_decision_p99_ms",
          "event_to_decision_missed",
          "event_to_decision_cold_missed",
          "poll_event_to_decision_p50_ms",
          "poll_event_to_decision_p99_ms",
          "poll_idle_cpu_far_pct",
          "poll_idle_cpu_near_pct",
          "rss_110_mib",
          "rss_1000_mib",
          "rss_5000_mib");

  private Summarize() {}

  public static void main(String[] args) throws Exception {
    Path dir = Path.of(args[0]);
    boolean partial = args.length > 1 && args[1].equals("--partial");
    JsonMapper json = JsonMapper.builder().enable(SerializationFeature.INDENT_OUTPUT).build();
    Map<String, Double> out = new LinkedHashMap<>();
    Map<String, Double> extra = new LinkedHashMap<>();
    // JMH without load of our own, and with the other core kept busy (prefix loaded_)
    for (String[] run : new String[][] {{"jmh.json", ""}, {"jmh-loaded.json", "loaded_"}}) {
      Path jmh = dir.resolve(run[0]);
      if (!Files.exists(jmh)) {
        continue;
      }
      for (JsonNode b : json.readTree(jmh.toFile())) {
        String name = b.get("benchmark").asString();
        String cls =
            name.substring(
                name.lastIndexOf('.', name.lastIndexOf('.') - 1) + 1, name.lastIndexOf('.'));
        String method = name.substring(name.lastIndexOf('.') + 1);
        String prefix =
            run[1]
                + (cls.equals("ReferenceBench") ? "ref_" : "")
                + method
                + "_"
                + b.get("params").get("pods").asString();
        JsonNode m = b.get("primaryMetric");
        out.put(prefix + "_ms", m.get("scorePercentiles").get("50.0").asDouble());
        extra.put(prefix + "_mean_ms", m.get("score").asDouble());
        extra.put(prefix + "_p99_ms", m.get("scorePercentiles").get("99.0").asDouble());
      }
    }
    // rules / reference, medians of the same run
    for (String load : List.of("", "loaded_")) {
      for (String k : List.of("steady_110", "pressure_110", "steady_5000", "pressure_5000")) {
        Double r = out.get(load + k + "_ms");
        Double f = out.get(load + "ref_" + k + "_ms");
        if (r != null && f != null && f > 0) {
          out.put(load + k + "_vs_ref", r / f);
        }
      }
    }
    for (String[] load :
        new String[][] {{"jmh-load.txt", "jmh_load"}, {"jmh-loaded-load.txt", "loaded_jmh_load"}}) {
      Path l = dir.resolve(load[0]);
      if (Files.exists(l)) {
        extra.put(load[1], Double.parseDouble(Files.readString(l).strip()));
      }
    }
    for (String part :
        List.of(
            "startup.json", "cli.json", "e2d.json", "poll.json", "footprint.json", "jdk25.json")) {
      Path p = dir.resolve(part);
      if (Files.exists(p)) {
        numbers(json.readTree(p.toFile()), "", out);
      }
    }
    for (String[] part :
        new String[][] {{"e2d-pod-cgroups.json", "pod_cgroups_"}, {"e2d-cold.json", "cold_"}}) {
      Path pc = dir.resolve(part[0]);
      if (Files.exists(pc)) {
        Map<String, Double> m = new LinkedHashMap<>();
        numbers(json.readTree(pc.toFile()), "", m);
        m.forEach((k, v) -> extra.put(part[1] + k, v));
      }
    }
    // missed crossings are a figure of each event -> decision run, never a reason to stop
    for (String[] part :
        new String[][] {
          {"e2d.json", "event_to_decision_missed"},
          {"e2d-cold.json", "event_to_decision_cold_missed"},
          {"e2d-pod-cgroups.json", "pod_cgroups_event_to_decision_missed"}
        }) {
      Path p = dir.resolve(part[0]);
      if (Files.exists(p)) {
        JsonNode missed = json.readTree(p.toFile()).get("missed");
        if (missed != null && missed.isNumber()) {
          out.put(part[1], missed.asDouble());
        }
      }
    }
    // a part that could not run: named in failures.txt, a figure here
    Path failures = dir.resolve("failures.txt");
    if (Files.exists(failures)) {
      for (String line : Files.readAllLines(failures)) {
        int colon = line.indexOf(':');
        if (colon > 0) {
          extra.put(line.substring(0, colon).replace('-', '_') + "_failed", 1.0);
        }
      }
    }
    out.putAll(extra);
    Map<String, Object> rounded = new LinkedHashMap<>();
    for (String k : REQUIRED) {
      if (out.containsKey(k)) {
        rounded.put(k, round(out.get(k)));
      }
    }
    out.forEach((k, v) -> rounded.putIfAbsent(k, round(v)));
    List<String> missing = REQUIRED.stream().filter(k -> !out.containsKey(k)).toList();
    Files.writeString(dir.resolve("summary.json"), json.writeValueAsString(rounded) + "\n");
    System.out.println(table(out));
    System.out.println("wrote " + dir.resolve("summary.json"));
    if (!missing.isEmpty()) {
      System.err.println("summary.json lacks " + missing);
      if (!partial) {
        System.exit(1);
      }
    }
  }

  private static void numbers(JsonNode n, String prefix, Map<String, Double> out) {
    for (Map.Entry<String, JsonNode> e : n.properties()) {
      if (e.getValue().isNumber()
          && (e.getKey().endsWith("_ms")
              || e.getKey().endsWith("_mib")
              || e.getKey().endsWith("_pct")
              || e.getKey().startsWith("full_gcs_")
              || e.getKey().startsWith("syncs_")
              || e.getKey().equals("poll_missed")
              // crossings whose first sync after the event decided nothing (a re-check did)
              || e.getKey().equals("undecided_after_event"))) {
        out.put(prefix + e.getKey(), e.getValue().asDouble());
      }
    }
  }

  private static BigDecimal round(double v) {
    BigDecimal r =
        BigDecimal.valueOf(v).setScale(v < 1 ? 4 : 3, RoundingMode.HALF_EVEN).stripTrailingZeros();
    return r.scale() < 0 ? r.setScale(0) : r; // 2390, not 2.39E+3
  }

  /** The Markdown table of rules vs. reference (median, mean) with the ratio of the medians. */
  static String table(Map<String, Double> m) {
    StringBuilder sb = new StringBuilder();
    sb.append(
        "| sync | pods | rules median (mean) ms | reference median (mean) ms | rules / reference |\n");
    sb.append("|---|---:|---:|---:|---:|\n");
    for (String k :
        List.of(
            "steady_110",
            "steady_1000",
            "steady_5000",
            "pressure_110",
            "pressure_1000",
            "pressure_5000",
            "disk_1000")) {
      Double r = m.get(k + "_ms");
      Double f = m.get("ref_" + k + "_ms");
      if (r == null || f == null) {
        continue;
      }
      String[] kp = k.split("_");
      sb.append(
          String.format(
              java.util.Locale.ROOT,
              "| %s | %s | %s (%s) | %s (%s) | %.2f |%n",
              kp[0],
              String.format("%,d", Integer.parseInt(kp[1])),
              fmt(r),
              fmt(m.get(k + "_mean_ms")),
              fmt(f),
              fmt(m.get("ref_" + k + "_mean_ms")),
              r / f));
    }
    return sb.toString();
  }

  private static String fmt(Double v) {
    if (v == null) {
      return "-";
    }
    return v < 1
        ? String.format(java.util.Locale.ROOT, "%.3f", v)
        : String.format(java.util.Locale.ROOT, "%.2f", v);
  }
}
