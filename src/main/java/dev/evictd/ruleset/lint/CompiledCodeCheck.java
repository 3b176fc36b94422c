package dev.evictd.ruleset.lint;

import static dev.evictd.ruleset.lint.BytecodeInspector.read;
import static dev.evictd.ruleset.lint.CompiledClassNames.isInvoker;
import static dev.evictd.ruleset.lint.CompiledClassNames.locate;
import static dev.evictd.ruleset.lint.CompiledClassNames.ownedBy;
import static dev.evictd.ruleset.lint.CompiledClassNames.ruleClasses;
import static dev.evictd.ruleset.lint.InterpretedMvelWalk.interpreted;

import java.util.ArrayList;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import org.drools.base.definitions.InternalKnowledgePackage;
import org.drools.base.definitions.rule.impl.RuleImpl;
import org.drools.base.rule.DialectRuntimeData;
import org.drools.core.rule.JavaDialectRuntimeData;
import org.kie.api.KieBase;
import org.kie.api.definition.KiePackage;
import org.kie.api.definition.rule.Rule;

/**
 * The second line of defence, on what the engine compiled for the whole rule base:
 *
 * <ul>
 *   <li>the bytecode of the rules' consequences, functions, {@code eval}s and accumulate
 *       expressions (the Java dialect's classes) and of their declared types, read with ASM: every
 *       class, method, field, method handle and bootstrap an instruction names must be on the
 *       {@link PolicyAllowlist}, or be one of the few engine members generated code needs; a call
 *       to {@code StreamSupport.stream} must pass the constant {@code false}; a declared type's
 *       field initialiser, which Drools leaves to {@code MVEL.eval} at run time, is checked as an
 *       expression;
 *   <li>every expression MVEL interprets at run time — pattern constraints, {@code from},
 *       accumulate arguments, salience and {@code enabled} — found by walking each compiled rule
 *       and checked, on the exact text MVEL compiles, by the same checks as the lint's ({@link
 *       CodeCheck}); MVEL consequences and {@code eval}s are refused outright. A {@code matches}
 *       the engine left to MVEL (inside {@code ||}) would run on java.util.regex and is refused.
 * </ul>
 *
 * Drools' own invoker classes (generated from templates, with no rule text in them) are not read.
 *
 * <p>This class goes over what the engine compiled (the Java dialect's classes, the declared types'
 * classes, the events, the rules) and gathers the findings; {@link CompiledClassNames} says which
 * rule, function or declared type a compiled class belongs to, {@link BytecodeInspector} reads a
 * class file, {@link CompiledCodeRefusals} says what compiled code may not name, and {@link
 * InterpretedMvelWalk} finds the MVEL text in a compiled rule.
 */
public final class CompiledCodeCheck {
  private CompiledCodeCheck() {}

  /** Checks every rule, function and declared type of a compiled rule set. */
  public static List<PolicyFinding> check(KieBase kbase, PolicyLint.Report report, String source) {
    Set<PolicyFinding> out = new LinkedHashSet<>();
    for (KiePackage p : kbase.getKiePackages()) {
      if (!(p instanceof InternalKnowledgePackage ip)) {
        continue;
      }
      DialectRuntimeData data = ip.getDialectRuntimeRegistry().getDialectData("java");
      if (data instanceof JavaDialectRuntimeData java) {
        javaClasses(p, java.getStore(), report, source, out);
      }
      declaredTypes(kbase, report, out);
      events(ip, report, source, out);
      for (Rule r : p.getRules()) {
        if (r instanceof RuleImpl ri) {
          PolicyLint.Location at = report.rules().get(r.getName());
          if (at == null) {
            at = new PolicyLint.Location(source, 0, "rule \"" + r.getName() + "\"");
          }
          interpreted(ri, at, report, out);
        }
      }
    }
    return new ArrayList<>(out);
  }

  private static void javaClasses(
      KiePackage p,
      Map<String, byte[]> store,
      PolicyLint.Report report,
      String source,
      Set<PolicyFinding> out) {
    Map<String, PolicyLint.Location> ruleClasses = ruleClasses(p, report);
    for (Map.Entry<String, byte[]> e : new TreeMap<>(store).entrySet()) {
      if (!e.getKey().endsWith(".class")) {
        continue;
      }
      String className =
          e.getKey().substring(0, e.getKey().length() - ".class".length()).replace('/', '.');
      String simple = className.substring(className.lastIndexOf('.') + 1);
      if (isInvoker(simple) || ownedBy(simple, report.declaredTypes()) != null) {
        continue;
      }
      String function = ownedBy(simple, report.functions().keySet());
      PolicyLint.Location at =
          function != null ? report.functions().get(function) : locate(simple, ruleClasses, report);
      if (at == null) {
        at = new PolicyLint.Location(source, 0, "compiled class " + simple);
      }
      for (String[] problem : problems(e.getValue(), function != null)) {
        out.add(compiled(at, problem));
      }
    }
  }

  private static PolicyFinding compiled(PolicyLint.Location at, String[] problem) {
    return new PolicyFinding(
        at.file(), at.line(), at.where(), problem[0] + " (compiled code)", problem[1]);
  }

  /**
   * The classes Drools generated for the rules' declared types (kept by the rule base's class
   * loader): their bytecode, and the initialiser text they pass to {@code MVEL.eval}.
   */
  private static void declaredTypes(
      KieBase kbase, PolicyLint.Report report, Set<PolicyFinding> out) {
    if (report.declaredTypes().isEmpty()
        || !(kbase instanceof org.drools.core.impl.InternalRuleBase rb)
        || !(rb.getRootClassLoader()
            instanceof org.drools.wiring.api.classloader.ProjectClassLoader pcl)
        || pcl.getStore() == null) {
      return;
    }
    for (Map.Entry<String, byte[]> e : new TreeMap<>(pcl.getStore()).entrySet()) {
      String name = e.getKey();
      if (!name.endsWith(".class")) {
        continue;
      }
      String binary = name.substring(0, name.length() - ".class".length()).replace('/', '.');
      if (!PolicyAllowlist.isRulePackage(PolicyAllowlist.packageOf(binary))) {
        continue;
      }
      String simple = binary.substring(binary.lastIndexOf('.') + 1);
      String owner = ownedBy(simple, report.declaredTypes());
      if (owner == null) {
        continue;
      }
      PolicyLint.Location at = report.declarations().get(owner);
      if (at == null) {
        at = new PolicyLint.Location("rules", 0, "declare " + owner);
      }
      BytecodeInspector inspector = new BytecodeInspector(false, true);
      read(e.getValue(), inspector);

      for (String[] problem : inspector.problems) {
        out.add(compiled(at, problem));
      }
      for (String init : inspector.evaluated) {
        expression(init, at, report, out);
      }
    }
  }

  /**
   * Type declarations the engine compiled as events (with a timestamp, duration or expiry): the
   * lint refuses their annotations; this catches them however they were declared.
   */
  private static void events(
      InternalKnowledgePackage p, PolicyLint.Report report, String source, Set<PolicyFinding> out) {
    for (org.drools.base.rule.TypeDeclaration td : p.getTypeDeclarations().values()) {
      boolean event = td.getRole() == org.kie.api.definition.type.Role.Type.EVENT;
      if (!event && td.getExpirationOffset() < 0 && td.getTimestampAttribute() == null) {
        continue;
      }
      String simple = td.getTypeName();
      PolicyLint.Location at = report.declarations().get(simple);
      if (at == null) {
        at = new PolicyLint.Location(source, 0, "declare " + simple);
      }
      out.add(
          new PolicyFinding(
              at.file(),
              at.line(),
              at.where(),
              "event " + simple + " (compiled code)",
              "event metadata (events expire on the engine's clock, outside the sync)"));
    }
  }

  /** Checks MVEL text the engine compiled as the lint checks an expression. */
  static void expression(
      String text, PolicyLint.Location at, PolicyLint.Report report, Set<PolicyFinding> out) {
    List<PolicyFinding> found = new ArrayList<>();
    CodeCheck.expression(
        text, new CodeCheck.Origin(at.file(), at.line(), at.where()), report.names(), found);
    for (PolicyFinding f : found) {
      out.add(
          new PolicyFinding(
              f.file(), f.line(), f.where(), f.name() + " (compiled code)", f.reason()));
    }
  }

  /** The refused references of one class file: {name, reason} pairs. */
  static List<String[]> problems(byte[] classFile, boolean functionClass) {
    return BytecodeInspector.problems(classFile, functionClass);
  }

  /** The class names in a method or field descriptor (array element types included). */
  static List<String> descriptorTypes(String descriptor) {
    return CompiledCodeRefusals.descriptorTypes(descriptor);
  }
}
