package dev.evictd.ruleset;

import dev.evictd.api.RulesException;
import dev.evictd.engine.RuleSource;
import dev.evictd.ruleset.lint.ModelCodeCheck;
import java.io.IOException;
import java.nio.file.FileAlreadyExistsException;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.drools.model.Model;
import org.drools.modelcompiler.KieBaseBuilder;
import org.kie.api.KieBase;
import org.kie.api.KieServices;
import org.objectweb.asm.ClassReader;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Rule sets other than the packaged defaults as Drools executable models, built once and kept in
 * the rule-set cache's directory ({@code KEY.model} beside {@code KEY.entry}, the same key: the
 * sources' SHA-256 with evictd's and Drools' versions), so that a restart or a second run loads the
 * set instead of compiling it, without the DRL parser, ECJ, javaparser or MVEL.
 *
 * <p>A model is built in a short-lived child process (the same Java and class path, {@link
 * ModelBuild#main}), strictly checked there as compiled DRL is, so the compiler never loads into
 * the agent. The child's result and every cached entry are trusted only as far as they are checked
 * on every load: the entry file (and the directories above it) must be owned by root or evictd's
 * user and not writable by group or others ({@link RuleProvenance}); its digest, format, versions
 * and sources' hash must match; its rule-set cache entry (the lint's result) must hold for the same
 * sources and record no finding; evictd's fact classes must be those it was made against; and every
 * class in it is read with ASM ({@link ModelCodeCheck}: what it names must be on the rules'
 * allowlist or the model's own scaffolding). Anything refused, a child that fails or runs past its
 * time, is logged once and the set is compiled as before.
 */
final class ModelCache {
  private static final String SUFFIX = ".model";
  private static final int MAX_ENTRY_BYTES = 64 * 1024 * 1024;
  private static final Logger LOG = LoggerFactory.getLogger(ModelCache.class);

  private ModelCache() {}

  /**
   * The rule base of a set from its cached executable model; null when there is none that holds
   * (logged once) or the set stays on the compiled-DRL path.
   */
  static KieBase cached(String source, String sha256, RuleSetCache cache) {
    Verified v = verifiedEntry(source, sha256, cache);
    if (v == null) {
      return null;
    }
    if (cache.lookup(source, sha256) == null) {
      cache.store(v.lint()); // its lint result, for rules check, when that entry was lost
    }
    return usable(v, source, sha256, cache);
  }

  /**
   * The rule base of a parsed set from an executable model built now (then cached), the lint, the
   * compile and the compiled-code check run where it is built; null when the set stays on the
   * compiled-DRL path or no model could be had (logged).
   *
   * @throws RulesException when the build's checks refused the set (the compiled-DRL path's own
   *     message)
   */
  static KieBase build(
      String source,
      List<RuleSource> sources,
      String sha256,
      RuleSetCache cache,
      dev.evictd.ruleset.lint.PolicyLint.Parse parse) {
    if (cache.modelBuilds() == RuleSetCache.ModelBuilds.OFF
        || verifiedEntry(source, sha256, cache) != null) {
      return null; // an entry that holds but gave no rule base: the set stays compiled
    }
    String tooLarge = dev.evictd.ruleset.lint.SetLimits.tooLargeForAModel(parse);
    if (tooLarge != null) {
      LOG.debug("{}: rules {} compiled: no executable model: {}", source, sha256, tooLarge);
      return null;
    }
    Verified v = build(source, sources, sha256, cache);
    return v == null ? null : usable(v, source, sha256, cache);
  }

  private static Verified verifiedEntry(String source, String sha256, RuleSetCache cache) {
    Path file = entryFile(cache, sha256);
    if (cache.modelBuilds() == RuleSetCache.ModelBuilds.OFF
        || !Files.exists(file, LinkOption.NOFOLLOW_LINKS)) {
      return null;
    }
    return read(file, source, sha256);
  }

  private static KieBase usable(Verified v, String source, String sha256, RuleSetCache cache) {
    if (v.model().drlOnly() != null) {
      LOG.debug("{}: rules {} compiled: {}", source, sha256, v.model().drlOnly());
      return null;
    }
    return kieBase(v, entryFile(cache, sha256).toString(), source);
  }

  /** The entry file of a set in a cache. */
  static Path entryFile(RuleSetCache cache, String sha256) {
    return cache.dir().resolve(RuleSetCache.key(sha256) + SUFFIX);
  }

  /** An entry that passed every check but loading its classes, with its lint entry. */
  record Verified(ModelEntry model, RuleSetCache.Entry lint) {}

  /** A cached entry, checked; null when there is none that holds (logged once). */
  static Verified read(Path file, String source, String sha256) {
    List<String> problems = new RuleProvenance(RuleProvenance.currentUid()).problems(file);
    if (!problems.isEmpty()) {
      refused(file.toString(), source, String.join("; ", problems));
      return null;
    }
    byte[] bytes;
    try {
      if (Files.size(file) > MAX_ENTRY_BYTES) {
        refused(file.toString(), source, "larger than " + MAX_ENTRY_BYTES + " bytes");
        return null;
      }
      bytes = Files.readAllBytes(file);
    } catch (IOException e) {
      refused(file.toString(), source, "cannot read: " + dev.evictd.config.IoErrors.reason(e));
      return null;
    }
    return verify(file.toString(), source, sha256, bytes);
  }

  /**
   * Checks an entry's bytes (from the cache or a child): digest, format, versions, sources' hash,
   * lint entry, fact classes, and every class with ASM. Null (logged once) when any fails.
   */
  static Verified verify(String where, String source, String sha256, byte[] bytes) {
    ModelEntry m;
    try {
      m = ModelEntry.decode(bytes);
    } catch (IOException e) {
      refused(where, source, "unreadable: " + e.getMessage());
      return null;
    }
    String why = null;
    if (!sha256.equals(m.sourcesSha256())) {
      why = "made for sources " + m.sourcesSha256() + ", not " + sha256;
    } else if (!RuleSetCache.evictdVersion().equals(m.evictdVersion())) {
      why = "made by evictd " + m.evictdVersion() + ", not " + RuleSetCache.evictdVersion();
    } else if (!RuleSetCache.droolsVersion().equals(m.droolsVersion())) {
      why = "made with Drools " + m.droolsVersion() + ", not " + RuleSetCache.droolsVersion();
    }
    if (why != null) {
      refused(where, source, why);
      return null;
    }
    RuleSetCache.Entry lint = RuleSetCache.verified(where, source, sha256, m.lintEntry(), false);
    if (lint == null) {
      refused(where, source, "its lint result does not hold for these sources");
      return null;
    }
    if (!lint.lint().findings().isEmpty()
        || !lint.lint().unparsed().isEmpty()
        || !lint.compiledFindings().isEmpty()) {
      // only a set with no finding at all gets a model: an entry saying otherwise was not made so
      refused(where, source, "its lint result records findings");
      return null;
    }
    if (m.drlOnly() != null) {
      if (!m.classes().isEmpty()) {
        refused(where, source, "it stays on the compiled-DRL path, yet has classes");
        return null;
      }
      return new Verified(m, lint);
    }
    why = classProblem(m, lint.lint().declaredTypes());
    if (why != null) {
      refused(where, source, why);
      return null;
    }
    return new Verified(m, lint);
  }

  /** What is wrong with an entry's classes, or null. */
  private static String classProblem(ModelEntry m, Set<String> declaredTypes) {
    if (m.models().isEmpty() || m.classes().isEmpty()) {
      return "no model classes";
    }
    String dir = PrebuiltModelWriter.MODEL_PACKAGE.replace('.', '/') + "/";
    for (Map.Entry<String, byte[]> e : m.classes().entrySet()) {
      String path = e.getKey();
      if (!path.startsWith(dir) || !path.endsWith(".class") || path.contains("..")) {
        return "a file outside the rules' package: " + path;
      }
      String named;
      try {
        named = new ClassReader(e.getValue()).getClassName();
      } catch (RuntimeException ex) {
        return path + ": not a class file";
      }
      if (!path.equals(named + ".class")) {
        return path + ": holds class " + named;
      }
    }
    for (String model : m.models()) {
      if (!m.classes().containsKey(model.replace('.', '/') + ".class")) {
        return "no class for its model " + model;
      }
    }
    if (!PrebuiltModel.factClassesSha256(m.factClasses()).equals(m.factClassesSha256())) {
      return "the fact classes changed since it was made";
    }
    long t0 = System.nanoTime();
    List<String> refused =
        ModelCodeCheck.check(m.classes(), PrebuiltModelWriter.MODEL_PACKAGE, declaredTypes);
    LOG.debug(
        "{} model classes checked in {} ms",
        m.classes().size(),
        (System.nanoTime() - t0) / 1_000_000);
    if (!refused.isEmpty()) {
      return "its classes name what rules may not: "
          + refused.get(0)
          + (refused.size() > 1 ? " (and " + (refused.size() - 1) + " more)" : "");
    }
    return null;
  }

  /** The rule base of a verified entry's model; null (logged once) when it does not load. */
  static KieBase kieBase(Verified v, String where, String source) {
    ModelEntry m = v.model();
    try {
      ModelClassLoader loader = new ModelClassLoader(ModelCache.class.getClassLoader(), m);
      List<Model> models = new ArrayList<>();
      for (String name : m.models()) {
        Class<?> c = Class.forName(name, true, loader);
        models.add((Model) c.getDeclaredConstructor().newInstance());
      }
      KieBase kb =
          KieBaseBuilder.createKieBaseFromModel(
              models, KieServices.Factory.get().newKieBaseConfiguration(null, loader));
      long rules = kb.getKiePackages().stream().mapToLong(p -> p.getRules().size()).sum();
      if (rules != v.lint().rules()) {
        refused(
            where, source, "its model has " + rules + " rules, its sources " + v.lint().rules());
        return null;
      }
      return kb;
    } catch (ReflectiveOperationException | RuntimeException | LinkageError e) {
      refused(where, source, "cannot be loaded: " + e);
      return null;
    }
  }

  /**
   * Builds a set's model (in a child process, or here when the cache says so), checks the result as
   * a cached entry is checked and stores it; null when it could not be had (logged once).
   *
   * @throws RulesException when the checks refused the set
   */
  static Verified build(
      String source, List<RuleSource> sources, String sha256, RuleSetCache cache) {
    Path dir = cache.dir();
    try {
      if (!Files.isDirectory(dir)) {
        try {
          Files.createDirectories(
              dir,
              PosixFilePermissions.asFileAttribute(PosixFilePermissions.fromString("rwxr-xr-x")));
        } catch (FileAlreadyExistsException ignored) {
          // made by another process meanwhile
        }
      }
    } catch (IOException | RuntimeException e) {
      logOnce(dir.toString(), "rule-set cache " + dir + ": cannot be made: " + e.getMessage());
      return null;
    }
    List<String> problems = new RuleProvenance(RuleProvenance.currentUid()).problems(dir);
    if (!problems.isEmpty()) {
      logOnce(
          dir.toString(), "rule-set cache " + dir + " not used: " + String.join("; ", problems));
      return null;
    }
    long t0 = System.nanoTime();
    byte[] bytes;
    String where;
    if (cache.modelBuilds() == RuleSetCache.ModelBuilds.IN_PROCESS) {
      where = "the model built for " + source;
      try {
        bytes = ModelBuild.build(source, sources).encode();
      } catch (RulesException e) {
        throw e;
      } catch (StackOverflowError e) {
        logOnce(
            source,
            source + ": no executable model (nested too deeply): compiling the rules instead");
        return null;
      } catch (RuntimeException e) {
        logOnce(source, source + ": no executable model (" + e + "): compiling the rules instead");
        return null;
      }
    } else {
      bytes = ModelBuildChild.run(source, sources, dir);
      where = "the model a child process built for " + source;
      if (bytes == null) {
        return null;
      }
    }
    Verified v = verify(where, source, sha256, bytes);
    if (v == null) {
      return null;
    }
    store(dir, entryFile(cache, sha256), bytes);
    cache.store(v.lint());
    LOG.debug(
        "{}: rules {} {} in {} ms",
        source,
        sha256,
        v.model().drlOnly() == null ? "built into an executable model" : "checked",
        (System.nanoTime() - t0) / 1_000_000);
    return v;
  }

  /** Stores an entry atomically (written aside, then renamed); failures are logged, not thrown. */
  private static void store(Path dir, Path file, byte[] bytes) {
    try {
      RuleSetCache.writeAtomically(dir, file, bytes);
    } catch (IOException | RuntimeException e) {
      logOnce(
          dir.toString(), "rule-set cache " + dir + ": cannot store a model: " + e.getMessage());
    }
  }

  private static void refused(String where, String source, String why) {
    logOnce(
        where,
        "rule model "
            + where
            + " for "
            + source
            + " refused ("
            + why
            + "): compiling the rules instead");
  }

  private static void logOnce(String key, String message) {
    RuleSetCache.warnOnce(LOG, key, message);
  }
}
