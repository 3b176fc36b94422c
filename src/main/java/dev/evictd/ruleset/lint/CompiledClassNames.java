package dev.evictd.ruleset.lint;

import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import org.drools.base.definitions.rule.impl.RuleImpl;
import org.kie.api.definition.KiePackage;
import org.kie.api.definition.rule.Rule;

/**
 * Drools' names for the classes it compiles from rule text: which compiled class is one of its own
 * invokers, and which rule, function or declared type a compiled class belongs to (for {@link
 * CompiledCodeCheck} to say where a refused reference comes from).
 */
final class CompiledClassNames {
  private CompiledClassNames() {}

  /**
   * Drools' invoker classes: {@code Rule_<name><hash>DefaultConsequenceInvoker}, {@code
   * ...Eval0Invoker}...
   */
  static boolean isInvoker(String simple) {
    return simple.startsWith("Rule_") && simple.endsWith("Invoker");
  }

  /**
   * The name among {@code owners} that a class is, or is nested in ({@code Owner$1}); null when
   * none.
   */
  static String ownedBy(String simple, Set<String> owners) {
    for (String o : owners) {
      if (simple.equals(o) || simple.startsWith(o + "$")) {
        return o;
      }
    }
    return null;
  }

  /** Rule class simple name ({@code Rule_<escaped name><hash>}) to where the rule is. */
  static Map<String, PolicyLint.Location> ruleClasses(KiePackage p, PolicyLint.Report report) {
    Map<String, PolicyLint.Location> out = new TreeMap<>();
    for (Rule r : p.getRules()) {
      PolicyLint.Location at = report.rules().get(r.getName());
      if (at != null && r instanceof RuleImpl ri && ri.getConsequence() != null) {
        String invoker = ri.getConsequence().getClass().getSimpleName();
        int i = invoker.indexOf("DefaultConsequenceInvoker");
        if (i > 0) {
          out.put(invoker.substring(0, i), at);
        }
      }
    }
    return out;
  }

  /**
   * Where a rule class's rule is: by its consequence, else by its escaped name followed by the
   * name's hash.
   */
  static PolicyLint.Location locate(
      String simple, Map<String, PolicyLint.Location> ruleClasses, PolicyLint.Report report) {
    String owner = ownedBy(simple, ruleClasses.keySet());
    if (owner != null) {
      return ruleClasses.get(owner);
    }
    for (Map.Entry<String, PolicyLint.Location> e : report.rules().entrySet()) {
      String prefix = "Rule_" + escape(e.getKey());
      if (simple.startsWith(prefix)) {
        String rest = simple.substring(prefix.length());
        int nested = rest.indexOf('$');
        rest = nested < 0 ? rest : rest.substring(0, nested);
        if (rest.chars().allMatch(c -> Character.isDigit(c) || c == '-')) {
          return e.getValue();
        }
      }
    }
    return null;
  }

  /**
   * Drools' rule class name escaping: spaces become {@code _}, other non-identifier characters
   * {@code $uNN$}.
   */
  static String escape(String ruleName) {
    StringBuilder sb = new StringBuilder();
    for (char c : ruleName.toCharArray()) {
      if (c == ' ') {
        sb.append('_');
      } else if (Character.isJavaIdentifierPart(c) && c != '$') {
        sb.append(c);
      } else {
        sb.append("$u").append((int) c).append('$');
      }
    }
    return sb.toString();
  }
}
