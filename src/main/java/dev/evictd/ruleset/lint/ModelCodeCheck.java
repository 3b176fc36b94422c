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
          "java.lang.Boolean.TYPE",
          "java.lang.Integer.TYPE",
          "java.lang.Long.TYPE",
          "java.lang.Double.TYPE",
          // the generated rules class's date formatter (for date-effective / date-expires)
          "org.drools.util.DateUtils.getDateFormatMask");

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
    List<String> out = new ArrayList<>();
    for (Map.Entry<String, byte[]> e : new TreeMap<>(classes).entrySet()) {
      for (String[] p : BytecodeInspector.problems(e.getValue(), false)) {
        if (!scaffolding(p[0], p[1], modelPackage)) {
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
