package dev.evictd.k8s;

import dev.evictd.api.Kubelet;
import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStream;
import java.io.InputStreamReader;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * The kubelet versions evictd knows (1.32 to the newest released) and each one's feature gates,
 * from {@code kubelet-feature-gates.tsv} (facts read from each release's {@code
 * pkg/features/kube_features.go}); {@code featureGates} applied as {@code
 * k8s.io/component-base/featuregate} {@code SetFromMap} applies them: an unregistered gate is
 * warned about and ignored, a gate locked to its default cannot be set to the other value (the
 * kubelet refuses to start).
 */
public final class KubeletFeatureGates {
  /** The oldest kubelet minor evictd follows. */
  public static final int OLDEST = 32;

  /** The newest kubelet minor evictd knows. */
  public static final int NEWEST = 37;

  private static final Pattern VERSION = Pattern.compile("v?(\\d+)\\.(\\d+)(?:\\.\\d+)?([-+].*)?");

  /** Gate name -> cells per minor from OLDEST: "t", "f", "t!", "f!" or "-". */
  private static final Map<String, String[]> TABLE = load();

  private KubeletFeatureGates() {}

  private static Map<String, String[]> load() {
    Map<String, String[]> m = new TreeMap<>();
    try (InputStream in =
            KubeletFeatureGates.class.getResourceAsStream("kubelet-feature-gates.tsv");
        BufferedReader r = new BufferedReader(new InputStreamReader(in, StandardCharsets.UTF_8))) {
      String line;
      while ((line = r.readLine()) != null) {
        if (line.isBlank() || line.startsWith("#")) {
          continue;
        }
        String[] f = line.split("\t");
        String[] cells = new String[NEWEST - OLDEST + 1];
        System.arraycopy(f, 1, cells, 0, cells.length);
        m.put(f[0], cells);
      }
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
    return Collections.unmodifiableMap(m);
  }

  /**
   * The minor of a kubelet version ({@code v1.34.2}, {@code 1.34}, {@code v1.34.1-eks-3}, {@code
   * v1.33.4+k3s1}).
   *
   * @throws IllegalArgumentException when it is not a version, or older than 1.32
   */
  public static int minorOf(String version) {
    Matcher m = VERSION.matcher(version == null ? "" : version.trim());
    if (!m.matches() || !"1".equals(m.group(1))) {
      throw new IllegalArgumentException(
          "\"" + version + "\" is not a kubelet version (expected 1.MINOR, e.g. 1.34 or v1.34.2)");
    }
    int minor = Integer.parseInt(m.group(2));
    if (minor < OLDEST) {
      throw new IllegalArgumentException(
          "kubelet "
              + version
              + " is older than the oldest evictd follows (1."
              + OLDEST
              + "; supported: "
              + supported()
              + ")");
    }
    return minor;
  }

  /** "1.32 to 1.37". */
  public static String supported() {
    return "1." + OLDEST + " to 1." + NEWEST;
  }

  /** The newest kubelet evictd knows, with its default gates: what evictd follows by default. */
  public static Kubelet newest() {
    return kubelet("1." + NEWEST, Map.of(), new java.util.ArrayList<>());
  }

  /**
   * The kubelet of {@code version} with {@code configured} gates over its defaults; a version newer
   * than the newest known follows the newest. Upstream's {@code component-base/featuregate} ({@code
   * unsafeSetFromMap}) refuses a gate the kubelet does not register, and so does evictd (an
   * OpenShift build of the kubelet carries a patch that only warns); for a kubelet newer than
   * evictd knows, such a gate is ignored with a warning added to {@code warnings}.
   *
   * @throws IllegalArgumentException with the kubelet's reason when it would refuse to start (a
   *     gate it does not register, a locked gate set to the other value), or the version is not one
   */
  public static Kubelet kubelet(
      String version, Map<String, Boolean> configured, List<String> warnings) {
    int reported = minorOf(version);
    int minor = Math.min(reported, NEWEST);
    int col = minor - OLDEST;
    Map<String, Boolean> gates = new LinkedHashMap<>();
    TABLE.forEach(
        (name, cells) -> {
          if (!"-".equals(cells[col])) {
            gates.put(name, cells[col].startsWith("t"));
          }
        });
    for (Map.Entry<String, Boolean> e : new TreeMap<>(configured).entrySet()) {
      String[] cells = TABLE.get(e.getKey());
      if (cells == null || "-".equals(cells[col])) {
        if (reported > NEWEST) {
          // a kubelet newer than evictd knows registers gates evictd has not seen: not its refusal
          warnings.add(
              "feature gate "
                  + e.getKey()
                  + " is not one evictd knows for kubelet 1."
                  + minor
                  + ": ignored");
          continue;
        }
        throw new IllegalArgumentException(
            "unrecognized feature gate: "
                + e.getKey()
                + " (kubelet 1."
                + minor
                + " refuses to start)");
      }
      boolean dflt = cells[col].startsWith("t");
      if (cells[col].endsWith("!") && dflt != e.getValue()) {
        throw new IllegalArgumentException(
            "cannot set feature gate "
                + e.getKey()
                + " to "
                + e.getValue()
                + ", feature is locked to "
                + dflt
                + " (kubelet 1."
                + minor
                + " refuses to start)");
      }
      gates.put(e.getKey(), e.getValue());
    }
    String shown = version.trim();
    return new Kubelet(minor, shown, reported > NEWEST, gates);
  }
}
