package dev.evictd.ruleset;

import java.io.IOException;
import java.io.InputStream;
import java.io.StringReader;
import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.ArrayList;
import java.util.HexFormat;
import java.util.List;
import java.util.Properties;
import org.drools.model.Model;
import org.drools.modelcompiler.KieBaseBuilder;
import org.kie.api.KieBase;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The packaged default rules pre-built as a Drools executable model: classes generated and compiled
 * at build time ({@link PrebuiltModelWriter}) and shipped in the jar, with a marker ({@link
 * #RESOURCE}) naming the SHA-256 of the sources they were made from. A rule set whose sources have
 * exactly that SHA-256 is loaded from these classes instead of being parsed and compiled: no DRL
 * parser, no Java compiler, no MVEL on that path.
 *
 * <p>The model is used only when everything it was made against still holds: the sources' hash,
 * evictd's version (with its checker classes), the Drools version, and the bytecode of every fact
 * class the model's property-reactivity tables were computed from. Anything else, or any failure to
 * load it, falls back to compiling the sources.
 */
final class PrebuiltModel {
  /** The marker, at the root of the classpath. */
  static final String RESOURCE = "evictd-rules.model";

  static final String FORMAT = "evictd-rules-model/1";

  private static final Logger LOG = LoggerFactory.getLogger(PrebuiltModel.class);

  /** What the marker says (null fields: the marker is absent or unreadable). */
  record Marker(
      String sourcesSha256,
      String evictdVersion,
      String droolsVersion,
      List<String> models,
      List<String> factClasses,
      String factClassesSha256) {
    Marker {
      models = List.copyOf(models);
      factClasses = List.copyOf(factClasses);
    }

    /** The marker's text (a properties file). */
    String text() {
      return "format="
          + FORMAT
          + "\nsources.sha256="
          + sourcesSha256
          + "\nevictd.version="
          + evictdVersion
          + "\ndrools.version="
          + droolsVersion
          + "\nmodels="
          + String.join(",", models)
          + "\nfacts="
          + String.join(",", factClasses)
          + "\nfacts.sha256="
          + factClassesSha256
          + "\n";
    }

    static Marker parse(String text) throws IOException {
      Properties p = new Properties();
      p.load(new StringReader(text));
      if (!FORMAT.equals(p.getProperty("format"))) {
        throw new IOException("not a " + FORMAT + " marker");
      }
      return new Marker(
          required(p, "sources.sha256"),
          required(p, "evictd.version"),
          required(p, "drools.version"),
          List.of(required(p, "models").split(",")),
          List.of(p.getProperty("facts", "").split(",")).stream()
              .filter(s -> !s.isEmpty())
              .toList(),
          required(p, "facts.sha256"));
    }

    private static String required(Properties p, String key) throws IOException {
      String v = p.getProperty(key);
      if (v == null || v.isBlank()) {
        throw new IOException("no " + key);
      }
      return v;
    }
  }

  private static volatile Marker marker;
  private static volatile boolean markerRead;

  private PrebuiltModel() {}

  /** The packaged marker, or null when the jar has none (a build without the model). */
  static Marker marker() {
    if (!markerRead) {
      Marker m = null;
      try (InputStream in = PrebuiltModel.class.getClassLoader().getResourceAsStream(RESOURCE)) {
        if (in != null) {
          m = Marker.parse(new String(in.readAllBytes(), StandardCharsets.UTF_8));
        }
      } catch (IOException | RuntimeException e) {
        LOG.warn("classpath:{}: ignored, the rules are compiled: {}", RESOURCE, e.getMessage());
      }
      marker = m;
      markerRead = true;
    }
    return marker;
  }

  /** Whether sources with this SHA-256 have a pre-built model in the jar. */
  static boolean covers(String sourcesSha256) {
    Marker m = marker();
    return m != null && m.sourcesSha256().equals(sourcesSha256);
  }

  /**
   * The pre-built rule base for sources with this SHA-256, or null when there is none or it does
   * not hold (then the caller compiles).
   */
  static KieBase load(String sourcesSha256) {
    return load(marker(), sourcesSha256);
  }

  /** The rule base a marker stands for, for sources with this SHA-256; null as above. */
  static KieBase load(Marker m, String sourcesSha256) {
    if (m == null || !m.sourcesSha256().equals(sourcesSha256)) {
      return null;
    }
    String why = null;
    if (!RuleSetCache.evictdVersion().equals(m.evictdVersion())) {
      why = "made by evictd " + m.evictdVersion() + ", not " + RuleSetCache.evictdVersion();
    } else if (!RuleSetCache.droolsVersion().equals(m.droolsVersion())) {
      why = "made with Drools " + m.droolsVersion() + ", not " + RuleSetCache.droolsVersion();
    } else if (!factClassesSha256(m.factClasses()).equals(m.factClassesSha256())) {
      why = "the fact classes changed since it was made";
    }
    if (why != null) {
      LOG.warn("classpath:{}: not used, the rules are compiled: {}", RESOURCE, why);
      return null;
    }
    try {
      List<Model> models = new ArrayList<>();
      for (String name : m.models()) {
        Class<?> c = Class.forName(name, true, PrebuiltModel.class.getClassLoader());
        models.add((Model) c.getDeclaredConstructor().newInstance());
      }
      return KieBaseBuilder.createKieBaseFromModel(models);
    } catch (ReflectiveOperationException | RuntimeException | LinkageError e) {
      LOG.warn(
          "classpath:{}: cannot be loaded, the rules are compiled: {}", RESOURCE, e.toString());
      return null;
    }
  }

  /**
   * SHA-256 over the named classes' names and {@linkplain RuleSetCache#classStamp stamps} (length
   * and CRC-32 of the bytecode as the class loader finds it, "-" for one it does not).
   */
  static String factClassesSha256(List<String> classes) {
    // once per list and process: the classes this JVM has loaded are the ones it runs, whatever
    // happens to the jar later (each cached rule set is checked against the same list)
    return FACT_DIGESTS.computeIfAbsent(List.copyOf(classes), PrebuiltModel::digest);
  }

  private static final java.util.concurrent.ConcurrentMap<List<String>, String> FACT_DIGESTS =
      new java.util.concurrent.ConcurrentHashMap<>();

  private static String digest(List<String> classes) {
    try {
      MessageDigest md = MessageDigest.getInstance("SHA-256");
      for (String c : classes) {
        md.update(c.getBytes(StandardCharsets.UTF_8));
        md.update((byte) 0);
        md.update(
            RuleSetCache.classStamp(c.replace('.', '/') + ".class")
                .getBytes(StandardCharsets.UTF_8));
        md.update((byte) 0);
      }
      return HexFormat.of().formatHex(md.digest());
    } catch (NoSuchAlgorithmException e) {
      throw new IllegalStateException(e);
    }
  }
}
