package dev.evictd.ruleset.lint;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * The compiled-code check over the classes of a Drools executable model (the packaged default rules
 * pre-built at build time): every class, member and bootstrap their bytecode names must be on the
 * {@link PolicyAllowlist} (as for the classes the DRL compiler makes), or be part of the executable
 * model's own scaffolding: its DSL and function interfaces ({@code org.drools.model}), the pattern
 * DSL and null-safe comparisons it calls, the built-in accumulate functions' constructors, and the
 * enum singleton and {@code Class} constants javac writes for generated lambdas and metadata. What
 * the rules' own expressions and consequences call is checked exactly as in compiled DRL.
 */
public final class ModelCodeCheck {
  private static final List<String> SCAFFOLDING_PREFIXES =
      List.of(
          "org.drools.model.",
          "org.drools.modelcompiler.dsl.pattern.D.",
          "org.drools.modelcompiler.util.EvaluationUtil.",
          "org.drools.modelcompiler.consequence.DroolsImpl");

  private static final Set<String> SCAFFOLDING_NAMES =
      Set.of(
          "java.lang.Class",
          "java.lang.Enum.valueOf",
          "java.lang.System.arraycopy",
          "java.lang.RuntimeException.<init>",
          // the generated rules class's date formatter (for date-effective / date-expires)
          "org.drools.util.DateUtils.getDateFormatMask");

  /**
   * The model's {@code matches} (a pattern that is not a literal): it runs {@code String.matches},
   * on java.util.regex, where compiled DRL runs RE2/J ({@code Re2ConstraintBuilder}); it is under
   * {@code org.drools.model.} but not scaffolding.
   */
  private static final String MATCHES_OPERATOR = "org.drools.model.operators.MatchesOperator";

  private static final String MATCHES_REASON =
      "matches on java.util.regex, which can backtrack for ever (compiled DRL runs it on RE2/J)";

  /**
   * What the model's class for a declared type implements: Drools' marker, its by-name field access
   * (a {@code switch} over the type's own fields, generated in the class and checked with it) and
   * serialisation. Compiled DRL's declared types implement the first and the last.
   */
  private static final Set<String> DECLARED_TYPE_INTERFACES =
      Set.of(
          "org.drools.base.factmodel.GeneratedFact",
          "org.drools.base.factmodel.AccessibleFact",
          "java.io.Serializable");

  /**
   * The primitive types' {@code Class} objects, which the model's rule builders pass to its DSL (an
   * index's value type): allowed there only, never in a class with rule code (a lambda, a
   * function), where they are reflection as in compiled DRL.
   */
  private static final Set<String> PRIMITIVE_TYPES =
      Set.of(
          "java.lang.Boolean.TYPE",
          "java.lang.Integer.TYPE",
          "java.lang.Long.TYPE",
          "java.lang.Double.TYPE");

  /** The classes that build the model's rules with its DSL: {@code RulesHASHRuleMethodsN}. */
  private static final Pattern RULE_BUILDER =
      Pattern.compile("Rules[0-9A-F]+RuleMethods[0-9]+\\.class");

  private static final Pattern USES = Pattern.compile("^uses (\\S+) \\(");

  private ModelCodeCheck() {}

  /**
   * Checks the classes of an executable model.
   *
   * @param classes class file path ({@code dev/evictd/rules/X.class}) to bytes
   * @param modelPackage the package the model was generated in ({@code dev.evictd.rules}): its own
   *     members are scaffolding, what they use is checked
   * @return one line per refused reference, {@code class: name: reason}, in class order
   */
  public static List<String> check(Map<String, byte[]> classes, String modelPackage) {
    return check(classes, modelPackage, Set.of());
  }

  /**
   * Checks the classes of an executable model whose rules declare types: the class the model
   * generates for each ({@code modelPackage.Name}, from the lint's declarations) may also implement
   * Drools' fact interfaces ({@link #DECLARED_TYPE_INTERFACES}); its members are checked as any
   * other class's.
   *
   * @param declaredTypes the simple names of the types the rules declare
   */
  public static List<String> check(
      Map<String, byte[]> classes, String modelPackage, Set<String> declaredTypes) {
    Set<String> typeFiles = new java.util.HashSet<>();
    for (String t : declaredTypes) {
      typeFiles.add(modelPackage.replace('.', '/') + "/" + t + ".class");
    }
    List<String> out = new ArrayList<>();
    for (Map.Entry<String, byte[]> e : new TreeMap<>(classes).entrySet()) {
      boolean declared = typeFiles.contains(e.getKey());
      String dir = modelPackage.replace('.', '/') + "/";
      boolean builder =
          e.getKey().startsWith(dir)
              && RULE_BUILDER.matcher(e.getKey().substring(dir.length())).matches();
      for (String[] p : BytecodeInspector.problems(e.getValue(), false)) {
        if ((declared && DECLARED_TYPE_INTERFACES.contains(p[0]))
            || (builder && PRIMITIVE_TYPES.contains(p[0]))) {
          continue;
        }
        if (p[0].startsWith(MATCHES_OPERATOR)) {
          out.add(e.getKey() + ": " + p[0] + ": " + MATCHES_REASON);
        } else if (!scaffolding(p[0], p[1], modelPackage)) {
          out.add(e.getKey() + ": " + p[0] + ": " + p[1]);
        }
      }
    }
    return out;
  }

  private static boolean scaffolding(String name, String reason, String modelPackage) {
    if (isScaffolding(name)) {
      return true;
    }
    Matcher m = USES.matcher(reason);
    if (m.find()) {
      // a member whose descriptor names a refused type: fine when that type is scaffolding and
      // the member is the model's own or scaffolding
      return isScaffolding(m.group(1)) && name.startsWith(modelPackage + ".");
    }
    return false;
  }

  private static boolean isScaffolding(String name) {
    if (SCAFFOLDING_NAMES.contains(name)) {
      return true;
    }
    if (name.startsWith("org.drools.core.base.accumulators.") && name.endsWith(".<init>")) {
      return true;
    }
    for (String prefix : SCAFFOLDING_PREFIXES) {
      if (name.startsWith(prefix)) {
        return true;
      }
    }
    return false;
  }
}
