package dev.evictd.ruleset.lint;

import java.util.ArrayList;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;

/**
 * Resolves the type names rule code uses the way the rule compilers do: types the rules declare,
 * single-type imports, java.lang, wildcard imports, the rules' own package, and the engine's
 * implicit import of {@code KnowledgeHelper}. A name that could mean several classes yields all of
 * them, so a refused class cannot hide behind an ambiguity.
 */
final class RuleNames {
  /** The class the Java consequence compiler imports into every rule class. */
  static final String KNOWLEDGE_HELPER = "org.drools.core.rule.consequence.KnowledgeHelper";

  /**
   * Class lookups by name (one class loader serves all rule sets); cleared when it grows past a
   * bound.
   */
  private static final Map<String, Boolean> EXISTS = new ConcurrentHashMap<>();

  private static final int MAX_CACHED_LOOKUPS = 100_000;

  private final ClassLoader loader;
  private final String rulePackage;
  private final Set<String> ruleTypes;
  private final Map<String, String> singleImports;
  private final List<String> wildcardPrefixes;

  /** What the checks of this rule set may still spend on parsing its code. */
  private final Nesting.Budget parseBudget = new Nesting.Budget();

  /**
   * A class a dotted name starts with, and the names after it (static members).
   *
   * @param className the binary class name
   * @param rest the member names that follow the class in the dotted name
   */
  record Resolved(String className, List<String> rest) {}

  /**
   * @param ruleTypes simple names of the classes the rules define (declared types, function
   *     classes)
   * @param singleImports simple name to binary class name, for single-type imports
   * @param wildcardPrefixes {@code package.} or {@code Outer$} prefixes of on-demand imports
   */
  RuleNames(
      ClassLoader loader,
      String rulePackage,
      Set<String> ruleTypes,
      Map<String, String> singleImports,
      List<String> wildcardPrefixes) {
    this.loader = loader;
    this.rulePackage = rulePackage;
    this.ruleTypes = Set.copyOf(ruleTypes);
    this.singleImports = Map.copyOf(singleImports);
    this.wildcardPrefixes = List.copyOf(wildcardPrefixes);
  }

  /** The parse budget of the rule set these names belong to (see {@link Nesting}). */
  Nesting.Budget parseBudget() {
    return parseBudget;
  }

  /** Every class a simple name may denote (empty: it names no class, e.g. it is a variable). */
  String rulePackage() {
    return rulePackage;
  }

  Set<String> ruleTypes() {
    return ruleTypes;
  }

  Map<String, String> singleImports() {
    return singleImports;
  }

  List<String> wildcardPrefixes() {
    return wildcardPrefixes;
  }

  List<String> simple(String name) {
    if (name.isEmpty() || name.startsWith("$")) {
      return List.of();
    }
    Set<String> out = new LinkedHashSet<>();
    if (ruleTypes.contains(name)) {
      out.add(rulePackage + "." + name);
    }
    String imported = singleImports.get(name);
    if (imported != null) {
      out.add(imported);
    }
    if (exists("java.lang." + name)) {
      out.add("java.lang." + name);
    }
    for (String prefix : wildcardPrefixes) {
      if (exists(prefix + name)) {
        out.add(prefix + name);
      }
    }
    if (exists(rulePackage + "." + name)) {
      out.add(rulePackage + "." + name);
    }
    if (name.equals("KnowledgeHelper")) {
      out.add(KNOWLEDGE_HELPER);
    }
    return new ArrayList<>(out);
  }

  /**
   * The classes a dotted name starts with: its first segment as a simple type name, else the
   * shortest prefix that is a fully qualified class name; nested classes are followed. Empty when
   * no prefix names a class.
   */
  List<Resolved> resolve(List<String> segments) {
    if (segments.isEmpty()) {
      return List.of();
    }
    List<Resolved> out = new ArrayList<>();
    for (String c : simple(segments.get(0))) {
      out.add(nested(c, segments, 1));
    }
    if (!out.isEmpty()) {
      return out;
    }
    StringBuilder name = new StringBuilder(segments.get(0));
    for (int i = 1; i < segments.size(); i++) {
      name.append('.').append(segments.get(i));
      if (exists(name.toString())) {
        return List.of(nested(name.toString(), segments, i + 1));
      }
    }
    return List.of();
  }

  /**
   * The binary name of a fully qualified (possibly nested) class name, or null when it names no
   * class.
   */
  String binaryName(String dotted) {
    List<String> segments = List.of(dotted.split("\\."));
    StringBuilder name = new StringBuilder(segments.get(0));
    for (int i = 1; i < segments.size(); i++) {
      name.append('.').append(segments.get(i));
      if (exists(name.toString())) {
        Resolved r = nested(name.toString(), segments, i + 1);
        return r.rest().isEmpty() ? r.className() : null;
      }
    }
    return null;
  }

  private Resolved nested(String className, List<String> segments, int from) {
    String c = className;
    int i = from;
    while (i < segments.size() && exists(c + "$" + segments.get(i))) {
      c = c + "$" + segments.get(i);
      i++;
    }
    return new Resolved(c, List.copyOf(segments.subList(i, segments.size())));
  }

  /** Whether a class exists on the rules' class path (looked up without initializing it). */
  boolean exists(String binaryName) {
    if (binaryName.isEmpty() || binaryName.endsWith(".") || binaryName.contains("..")) {
      return false;
    }
    if (EXISTS.size() > MAX_CACHED_LOOKUPS) {
      EXISTS.clear(); // rule files choose these names: keep what they can make evictd remember
      // bounded
    }
    return EXISTS.computeIfAbsent(
        binaryName,
        n -> {
          try {
            Class.forName(n, false, loader);
            return true;
          } catch (ClassNotFoundException | LinkageError e) {
            return false;
          }
        });
  }
}
