package dev.evictd.ruleset;

import dev.evictd.engine.RuleSource;
import dev.evictd.ruleset.lint.ModelCodeCheck;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.TreeSet;
import java.util.stream.Stream;
import org.drools.compiler.kie.builder.impl.InternalKieModule;
import org.drools.compiler.kie.builder.impl.KieBuilderImpl;
import org.drools.model.codegen.ExecutableModelProject;
import org.kie.api.KieServices;
import org.kie.api.builder.KieBuilder;
import org.kie.api.builder.KieFileSystem;
import org.kie.api.builder.Message;
import org.kie.api.builder.ReleaseId;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Run by the build ({@code process-classes}): pre-builds the packaged default rules as a Drools
 * executable model ({@link PrebuiltModel}) into the classes that go into the jar.
 *
 * <p>First the sources get every check a rule set gets at run time (the policy lint, the DRL
 * compile, the compiled-code check), with nothing let through; then the executable model is
 * generated and compiled from the same sources, and its classes are read with ASM ({@link
 * ModelCodeCheck}). Any finding fails the build. The marker records the sources' SHA-256 and what
 * the model was made against.
 */
public final class PrebuiltModelWriter {
  /** The package the default rules declare: the model's classes are generated in it. */
  static final String MODEL_PACKAGE = "dev.evictd.rules";

  private static final String MODEL_DIR = MODEL_PACKAGE.replace('.', '/') + "/";
  private static final Logger LOG = LoggerFactory.getLogger(PrebuiltModelWriter.class);
  private static final java.util.concurrent.atomic.AtomicLong BUILDS =
      new java.util.concurrent.atomic.AtomicLong();

  private PrebuiltModelWriter() {}

  /**
   * Writes the model's classes and marker.
   *
   * @param args the classes directory ({@code target/classes})
   * @throws IOException when they cannot be written
   */
  public static void main(String[] args) throws IOException {
    if (args.length != 1) {
      throw new IllegalArgumentException("usage: PrebuiltModelWriter CLASSES_DIR");
    }
    write(Path.of(args[0]));
  }

  /** Checks the default rules, generates their model and writes it under {@code classesDir}. */
  static void write(Path classesDir) throws IOException {
    List<RuleSource> sources = RuleCompiler.readDefault();
    String sha256 = RuleCompiler.sha256(sources);
    // every run-time check, strict: a finding throws and fails the build
    RuleCompiler.compileFresh("default", sources, RuleCompiler.Options.STRICT);
    Map<String, byte[]> classes = new TreeMap<>();
    List<String> models = generate(sources, classes);
    List<String> refused = ModelCodeCheck.check(classes, MODEL_PACKAGE);
    if (!refused.isEmpty()) {
      throw new IOException(
          "the default rules' executable model names what rules may not:\n"
              + String.join("\n", refused));
    }
    List<String> facts = factClasses(classes.keySet());
    PrebuiltModel.Marker marker =
        new PrebuiltModel.Marker(
            sha256,
            RuleSetCache.evictdVersion(),
            RuleSetCache.droolsVersion(),
            models,
            facts,
            PrebuiltModel.factClassesSha256(facts));
    Path dir = classesDir.resolve(MODEL_DIR);
    deleteTree(dir); // classes of an earlier model would linger in the jar
    for (Map.Entry<String, byte[]> e : classes.entrySet()) {
      Path p = classesDir.resolve(e.getKey());
      Files.createDirectories(p.getParent());
      Files.write(p, e.getValue());
    }
    Files.writeString(
        classesDir.resolve(PrebuiltModel.RESOURCE), marker.text(), StandardCharsets.UTF_8);
    LOG.info(
        "default rules {} pre-built: {} model classes, {} fact classes",
        sha256,
        classes.size(),
        facts.size());
  }

  /**
   * Generates and compiles the model of any rule set (in the rules' package, {@value
   * #MODEL_PACKAGE}); fills {@code classes}, returns the model classes' names.
   */
  static List<String> generate(List<RuleSource> sources, Map<String, byte[]> classes)
      throws IOException {
    KieServices ks = KieServices.Factory.get();
    KieFileSystem kfs = ks.newKieFileSystem();
    ReleaseId rid =
        ks.newReleaseId("dev.evictd.rules", "model" + BUILDS.incrementAndGet(), "1.0.0");
    kfs.generateAndWritePomXML(rid);
    for (RuleSource s : sources) {
      kfs.write("src/main/resources/" + MODEL_DIR + s.name(), s.text());
    }
    KieBuilder kb = ks.newKieBuilder(kfs).buildAll(ExecutableModelProject.class);
    List<String> errors = new ArrayList<>();
    for (Message m : kb.getResults().getMessages(Message.Level.ERROR)) {
      errors.add(m.toString());
    }
    if (!errors.isEmpty()) {
      throw new IOException(
          "the rules' executable model does not compile:\n" + String.join("\n", errors));
    }
    InternalKieModule km = (InternalKieModule) ((KieBuilderImpl) kb).getKieModule();
    List<String> models = new ArrayList<>();
    for (String f : new TreeSet<>(km.getFileNames())) {
      if (f.endsWith("/drools-model")) {
        new String(km.getBytes(f), StandardCharsets.UTF_8)
            .lines()
            .map(String::trim)
            .filter(l -> l.startsWith(MODEL_PACKAGE + "."))
            .forEach(models::add);
      } else if (f.startsWith(MODEL_DIR) && f.endsWith(".class")) {
        classes.put(f, km.getBytes(f));
      }
    }
    ks.getRepository().removeKieModule(rid);
    if (models.isEmpty()) {
      throw new IOException("the rules' executable model names no model class");
    }
    for (String m : models) {
      if (!classes.containsKey(m.replace('.', '/') + ".class")) {
        throw new IOException("the executable model class " + m + " was not generated");
      }
    }
    return models;
  }

  /**
   * evictd's own classes the model's property tables were computed from: one metadata class each
   * ({@code DomainClassesMetadata...$dev_evictd_api_PodFact_Metadata}). JDK classes are left out
   * (another JDK build would otherwise refuse the model), and so are the types the rules declare
   * (the model's own classes).
   */
  static List<String> factClasses(java.util.Collection<String> classFiles) throws IOException {
    TreeSet<String> out = new TreeSet<>();
    for (String f : classFiles) {
      int dollar = f.lastIndexOf('$');
      if (!f.contains("/DomainClassesMetadata")
          || dollar < 0
          || !f.endsWith("_Metadata.class")
          || !f.startsWith("dev_evictd_", dollar + 1)) {
        continue;
      }
      String name =
          f.substring(dollar + 1, f.length() - "_Metadata.class".length()).replace('_', '.');
      if (classFiles.contains(name.replace('.', '/') + ".class")) {
        continue; // a type the rules declare: the model's own class
      }
      if (PrebuiltModel.class.getClassLoader().getResource(name.replace('.', '/') + ".class")
          == null) {
        throw new IOException("cannot tell the fact class of " + f + " (" + name + "?)");
      }
      out.add(name);
    }
    return List.copyOf(out);
  }

  private static void deleteTree(Path dir) throws IOException {
    if (!Files.exists(dir)) {
      return;
    }
    try (Stream<Path> s = Files.walk(dir)) {
      for (Path p : s.sorted(Comparator.reverseOrder()).toList()) {
        Files.delete(p);
      }
    }
  }
}
