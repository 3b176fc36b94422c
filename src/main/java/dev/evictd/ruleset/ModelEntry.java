package dev.evictd.ruleset;

import java.io.ByteArrayInputStream;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.StringReader;
import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.Arrays;
import java.util.HexFormat;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.TreeMap;
import java.util.zip.ZipEntry;
import java.util.zip.ZipInputStream;
import java.util.zip.ZipOutputStream;

/**
 * A rule set's executable model as the model cache stores it ({@link ModelCache}): a zip file (JDK
 * only, no library) holding a properties file that says what the model was made from and against,
 * the rule-set cache entry with the lint's result for the same sources, and the model's class
 * files. A set that stays on the compiled-DRL path (its model would run what DRL does not, or
 * cannot be generated) has an entry without classes that says why, so it is not built again.
 *
 * @param sourcesSha256 the SHA-256 of the sources ({@link RuleCompiler#sha256})
 * @param evictdVersion evictd's version (with its checker classes' digest)
 * @param droolsVersion the Drools version that made it
 * @param drlOnly why the set stays on the compiled-DRL path, or null when it has a model
 * @param lintEntry the rule-set cache entry's bytes ({@link RuleSetCache#encode}): the lint's
 *     result and what the compiled-code check found
 * @param models the model classes' names
 * @param factClasses evictd's fact classes the model's property tables were computed from
 * @param factClassesSha256 {@link PrebuiltModel#factClassesSha256} of them when it was made
 * @param classes class file path ({@code dev/evictd/rules/X.class}) to bytes
 */
record ModelEntry(
    String sourcesSha256,
    String evictdVersion,
    String droolsVersion,
    String drlOnly,
    byte[] lintEntry,
    List<String> models,
    List<String> factClasses,
    String factClassesSha256,
    Map<String, byte[]> classes) {
  static final String FORMAT = "evictd-rule-model/1";

  private static final String PROPERTIES = "evictd-model.properties";
  private static final String LINT = "evictd-rules.cache";

  /** At most this many bytes once unpacked (a zip bomb is refused, not unpacked). */
  private static final long MAX_UNPACKED = 128L * 1024 * 1024;

  private static final int MAX_FILES = 20_000;

  ModelEntry {
    models = List.copyOf(models);
    factClasses = List.copyOf(factClasses);
    classes = Map.copyOf(classes);
  }

  /** The entry's bytes. */
  byte[] encode() {
    Properties p = new Properties();
    p.setProperty("format", FORMAT);
    p.setProperty("sources.sha256", sourcesSha256);
    p.setProperty("evictd.version", evictdVersion);
    p.setProperty("drools.version", droolsVersion);
    if (drlOnly != null) {
      p.setProperty("drl.only", drlOnly);
    }
    p.setProperty("models", String.join(",", models));
    p.setProperty("facts", String.join(",", factClasses));
    p.setProperty("facts.sha256", factClassesSha256);
    p.setProperty("content.sha256", contentSha256());
    ByteArrayOutputStream out = new ByteArrayOutputStream();
    try (ZipOutputStream z = new ZipOutputStream(out)) {
      java.io.StringWriter w = new java.io.StringWriter();
      p.store(w, null);
      // the date line Properties writes first would make equal entries differ
      String text =
          w.toString().lines().filter(l -> !l.startsWith("#")).reduce("", (a, b) -> a + b + "\n");
      put(z, PROPERTIES, text.getBytes(StandardCharsets.UTF_8));
      put(z, LINT, lintEntry);
      for (Map.Entry<String, byte[]> e : new TreeMap<>(classes).entrySet()) {
        put(z, e.getKey(), e.getValue());
      }
    } catch (IOException e) {
      throw new IllegalStateException(e); // in memory
    }
    return out.toByteArray();
  }

  private static void put(ZipOutputStream z, String name, byte[] bytes) throws IOException {
    ZipEntry e = new ZipEntry(name);
    e.setTime(0); // the same model, the same bytes
    z.putNextEntry(e);
    z.write(bytes);
    z.closeEntry();
  }

  /**
   * An entry from its bytes, its content digest checked.
   *
   * @throws IOException naming what is wrong with it
   */
  static ModelEntry decode(byte[] bytes) throws IOException {
    Map<String, byte[]> files = new TreeMap<>();
    long total = 0;
    try (ZipInputStream z = new ZipInputStream(new ByteArrayInputStream(bytes))) {
      for (ZipEntry e = z.getNextEntry(); e != null; e = z.getNextEntry()) {
        if (files.size() >= MAX_FILES) {
          throw new IOException("more than " + MAX_FILES + " files");
        }
        byte[] b = z.readNBytes((int) Math.min(Integer.MAX_VALUE - 8, MAX_UNPACKED - total + 1));
        total += b.length;
        if (total > MAX_UNPACKED) {
          throw new IOException("more than " + MAX_UNPACKED + " bytes unpacked");
        }
        if (files.put(e.getName(), b) != null) {
          throw new IOException("two files named " + e.getName());
        }
      }
    } catch (IllegalArgumentException e) {
      throw new IOException("not a zip file: " + e.getMessage());
    }
    byte[] props = files.remove(PROPERTIES);
    byte[] lint = files.remove(LINT);
    if (props == null || lint == null) {
      throw new IOException(
          "not a rule model entry (no " + (props == null ? PROPERTIES : LINT) + ")");
    }
    Properties p = new Properties();
    p.load(new StringReader(new String(props, StandardCharsets.UTF_8)));
    if (!FORMAT.equals(p.getProperty("format"))) {
      throw new IOException("format " + p.getProperty("format") + ", not " + FORMAT);
    }
    ModelEntry m =
        new ModelEntry(
            required(p, "sources.sha256"),
            required(p, "evictd.version"),
            required(p, "drools.version"),
            p.getProperty("drl.only"),
            lint,
            list(p.getProperty("models", "")),
            list(p.getProperty("facts", "")),
            p.getProperty("facts.sha256", ""),
            files);
    if (!m.contentSha256().equals(p.getProperty("content.sha256"))) {
      throw new IOException("its content does not match its digest (changed after it was written)");
    }
    return m;
  }

  private static List<String> list(String v) {
    return Arrays.stream(v.split(",")).filter(s -> !s.isEmpty()).toList();
  }

  private static String required(Properties p, String key) throws IOException {
    String v = p.getProperty(key);
    if (v == null || v.isBlank()) {
      throw new IOException("no " + key);
    }
    return v;
  }

  /** SHA-256 over everything but the properties: the lint entry, each class's path and bytes. */
  String contentSha256() {
    try {
      MessageDigest md = MessageDigest.getInstance("SHA-256");
      md.update(String.valueOf(drlOnly).getBytes(StandardCharsets.UTF_8));
      md.update((byte) 0);
      md.update(String.join(",", models).getBytes(StandardCharsets.UTF_8));
      md.update((byte) 0);
      md.update(lintEntry);
      md.update((byte) 0);
      for (Map.Entry<String, byte[]> e : new TreeMap<>(classes).entrySet()) {
        md.update(e.getKey().getBytes(StandardCharsets.UTF_8));
        md.update((byte) 0);
        md.update(e.getValue());
        md.update((byte) 0);
      }
      return HexFormat.of().formatHex(md.digest());
    } catch (NoSuchAlgorithmException e) {
      throw new IllegalStateException(e);
    }
  }
}
