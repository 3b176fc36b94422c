package dev.evictd.ruleset.lint;

import static dev.evictd.ruleset.lint.PolicyLint.existing;
import static dev.evictd.ruleset.lint.PolicyLint.where;

import dev.evictd.engine.RuleSource;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.drools.drl.ast.descr.AccumulateDescr;
import org.drools.drl.ast.descr.AccumulateImportDescr;
import org.drools.drl.ast.descr.AndDescr;
import org.drools.drl.ast.descr.AttributeDescr;
import org.drools.drl.ast.descr.BaseDescr;
import org.drools.drl.ast.descr.BindingDescr;
import org.drools.drl.ast.descr.CollectDescr;
import org.drools.drl.ast.descr.ConditionalBranchDescr;
import org.drools.drl.ast.descr.EntryPointDescr;
import org.drools.drl.ast.descr.EnumDeclarationDescr;
import org.drools.drl.ast.descr.EnumLiteralDescr;
import org.drools.drl.ast.descr.EvalDescr;
import org.drools.drl.ast.descr.ExistsDescr;
import org.drools.drl.ast.descr.ExprConstraintDescr;
import org.drools.drl.ast.descr.ForallDescr;
import org.drools.drl.ast.descr.FromDescr;
import org.drools.drl.ast.descr.FunctionDescr;
import org.drools.drl.ast.descr.FunctionImportDescr;
import org.drools.drl.ast.descr.GlobalDescr;
import org.drools.drl.ast.descr.GroupByDescr;
import org.drools.drl.ast.descr.ImportDescr;
import org.drools.drl.ast.descr.NamedConsequenceDescr;
import org.drools.drl.ast.descr.NotDescr;
import org.drools.drl.ast.descr.OrDescr;
import org.drools.drl.ast.descr.PackageDescr;
import org.drools.drl.ast.descr.PatternDescr;
import org.drools.drl.ast.descr.QualifiedName;
import org.drools.drl.ast.descr.QueryDescr;
import org.drools.drl.ast.descr.RuleDescr;
import org.drools.drl.ast.descr.TypeDeclarationDescr;
import org.drools.drl.ast.descr.TypeFieldDescr;
import org.drools.drl.ast.descr.WindowReferenceDescr;

/**
 * The checks of one parsed DRL file, construct by construct: its package, attributes, imports,
 * globals, declared types and enums, functions, rules and queries (their attributes, patterns,
 * sources, accumulates and consequences); each fragment of code goes to {@link CodeCheck}. Findings
 * go to the list {@link PolicyLint} sorts into its report.
 */
final class DrlFileCheck {
  /**
   * The accumulate functions Drools provides; custom ones are classes on the class path and are
   * refused.
   */
  static final Set<String> ACCUMULATE_FUNCTIONS =
      Set.of(
          "average",
          "averageBD",
          "collectList",
          "collectSet",
          "count",
          "max",
          "maxN",
          "maxI",
          "maxL",
          "maxBI",
          "maxBD",
          "min",
          "minN",
          "minI",
          "minL",
          "minBI",
          "minBD",
          "sum",
          "sumI",
          "sumL",
          "sumBI",
          "sumBD",
          "variance",
          "standardDeviation");

  /** Rule attributes that schedule firings on a timer thread, outside the planner's sync. */
  private static final Set<String> SCHEDULING_ATTRIBUTES = Set.of("timer", "duration", "calendars");

  /** Type annotations that make facts events, with a timestamp, duration or expiry. */
  private static final Set<String> EVENT_METADATA =
      Set.of("role", "expires", "timestamp", "duration");

  /** Rule attributes whose value is an expression evaluated at runtime. */
  private static final Set<String> EXPRESSION_ATTRIBUTES = Set.of("salience", "enabled");

  private final RuleSource source;
  private final PackageDescr pkg;
  private final RuleNames names;
  private final List<PolicyFinding> out;
  private final String[] lines;

  DrlFileCheck(RuleSource source, PackageDescr pkg, RuleNames names, List<PolicyFinding> out) {
    this.source = source;
    this.pkg = pkg;
    this.names = names;
    this.out = out;
    this.lines = source.text().split("\n", -1);
  }

  void run() {
    packageDeclaration();
    for (AttributeDescr a : pkg.getAttributes()) {
      attribute(a, a.getLine(), "package");
    }
    for (ImportDescr i : pkg.getImports()) {
      importDeclaration(i);
    }
    for (FunctionImportDescr i : pkg.getFunctionImports()) {
      functionImport(i);
    }
    for (AccumulateImportDescr i : pkg.getAccumulateImports()) {
      refuse(
          i.getLine(),
          "import",
          "import accumulate " + i.getTarget(),
          "custom accumulate function");
    }
    for (GlobalDescr g : pkg.getGlobals()) {
      CodeCheck.type(g.getType(), origin(g.getLine(), "global " + g.getIdentifier()), names, out);
    }
    for (TypeDeclarationDescr t : pkg.getTypeDeclarations()) {
      typeDeclaration(t);
    }
    for (EnumDeclarationDescr e : pkg.getEnumDeclarations()) {
      enumDeclaration(e);
    }
    if (!pkg.getWindowDeclarations().isEmpty()) {
      refuse(
          pkg.getWindowDeclarations().iterator().next().getLine(),
          "declare window",
          "window",
          "time windows (expire on a timer thread)");
    }
    if (pkg.getUnit() != null) {
      refuse(
          pkg.getUnit().getLine(),
          "unit",
          "unit " + pkg.getUnit().getTarget(),
          "rule units (a Java class)");
    }
    for (FunctionDescr f : pkg.getFunctions()) {
      function(f);
    }
    for (RuleDescr r : pkg.getRules()) {
      rule(r);
    }
  }

  private void packageDeclaration() {
    String name = pkg.getName();
    if (!PolicyAllowlist.RULES_PACKAGE.equals(name)) {
      refuse(
          lineOf("package", 1),
          "",
          "package " + (name == null || name.isEmpty() ? "(none)" : name),
          "rules must be in package " + PolicyAllowlist.RULES_PACKAGE);
    }
  }

  private void attribute(AttributeDescr a, int line, String where) {
    String name = a.getName();
    String value = a.getValue() == null ? "" : a.getValue().trim();
    if (name.equals("dialect")) {
      if (!value.replace("\"", "").equals("java")) {
        refuse(
            line,
            where,
            "dialect \"" + value.replace("\"", "") + "\"",
            "MVEL dialect (dynamic code the lint cannot check)");
      }
    } else if (SCHEDULING_ATTRIBUTES.contains(name)) {
      refuse(line, where, name, "scheduled firing on a timer thread, outside the sync");
    } else if (EXPRESSION_ATTRIBUTES.contains(name) && !value.isEmpty()) {
      CodeCheck.expression(value, origin(line, where), names, out);
    }
  }

  private void importDeclaration(ImportDescr i) {
    String target = i.getTarget().trim();
    if (target.endsWith(".*")) {
      String base = target.substring(0, target.length() - 2);
      String asClass = names.binaryName(base);
      boolean ok =
          asClass != null
              ? PolicyAllowlist.allowed(asClass)
              : PolicyAllowlist.wildcardImportAllowed(base);
      if (!ok) {
        String reason = PolicyAllowlist.category(asClass != null ? asClass : base + ".*");
        refuse(i.getLine(), "import", target, reason);
      }
      return;
    }
    String binary = names.binaryName(target);
    if (binary == null) {
      refuse(i.getLine(), "import", target, PolicyFinding.UNKNOWN);
    } else if (!PolicyAllowlist.allowed(binary)) {
      refuse(i.getLine(), "import", target, PolicyAllowlist.category(binary));
    }
  }

  private void functionImport(FunctionImportDescr i) {
    String target = i.getTarget().trim();
    int dot = target.lastIndexOf('.');
    String owner = dot < 0 ? target : target.substring(0, dot);
    String member = dot < 0 ? "" : target.substring(dot + 1);
    String binary = names.binaryName(owner);
    if (binary == null) {
      refuse(i.getLine(), "import", "function " + target, PolicyFinding.UNKNOWN);
    } else if (!PolicyAllowlist.allowed(binary)) {
      refuse(i.getLine(), "import", "function " + target, PolicyAllowlist.category(binary));
    } else if (binary.equals(PolicyAllowlist.STREAM_SUPPORT)) {
      refuse(
          i.getLine(),
          "import",
          "function " + target,
          "threads (StreamSupport's parallel flag must be seen at each call)");
    } else {
      PolicyAllowlist.refusedMember(binary, member)
          .ifPresent(r -> refuse(i.getLine(), "import", "function " + target, r));
    }
  }

  private void typeDeclaration(TypeDeclarationDescr t) {
    String where = "declare " + t.getTypeName();
    int line = t.getLine();
    eventMetadata(t, line, where);
    for (String c : existing(names, t)) {
      // "declare SomeClass" adds metadata to an existing class: it must be one rules may use
      if (!PolicyAllowlist.allowed(c)) {
        refuse(line, where, c.replace('$', '.'), PolicyAllowlist.category(c));
      }
    }
    for (QualifiedName s : t.getSuperTypes()) {
      CodeCheck.type(s.getFullName(), origin(line, where), names, out);
    }
    fields(t.getFields(), line, where);
  }

  /**
   * Refuses event metadata: on evictd's own types it breaks the planner's facts (an expired
   * EvictionAttempt), and on any type it hands expiry to the engine's clock, outside the sync.
   */
  private void eventMetadata(TypeDeclarationDescr t, int line, String where) {
    boolean own =
        existing(names, t).stream()
            .anyMatch(c -> !PolicyAllowlist.isRulePackage(PolicyAllowlist.packageOf(c)));
    for (org.drools.drl.ast.descr.AnnotationDescr a : t.getAnnotations()) {
      String n = a.getName();
      if (!EVENT_METADATA.contains(n)) {
        continue;
      }
      if (n.equals("role") && !String.valueOf(a.getSingleValueAsString()).contains("event")) {
        continue;
      }
      int at = a.getLine() > 0 ? a.getLine() : line;
      refuse(
          at,
          where,
          "@" + n,
          own
              ? "event metadata on evictd's own type "
                  + t.getTypeName()
                  + " (the planner keeps and retracts its facts itself)"
              : "event metadata (events expire on the engine's clock, outside the sync)");
    }
  }

  private void enumDeclaration(EnumDeclarationDescr e) {
    String where = "declare enum " + e.getTypeName();
    fields(e.getFields(), e.getLine(), where);
    for (EnumLiteralDescr l : e.getLiterals()) {
      for (String arg : l.getConstructorArgs()) {
        CodeCheck.expression(
            arg, origin(l.getLine() > 0 ? l.getLine() : e.getLine(), where), names, out);
      }
    }
  }

  private void fields(Map<String, TypeFieldDescr> fields, int line, String where) {
    for (TypeFieldDescr f : fields.values()) {
      int at = f.getLine() > 0 ? f.getLine() : line;
      if (f.getPattern() != null) {
        CodeCheck.type(f.getPattern().getObjectType(), origin(at, where), names, out);
      }
      if (f.getInitExpr() != null && !f.getInitExpr().isBlank()) {
        CodeCheck.expression(f.getInitExpr(), origin(at, where), names, out);
      }
    }
  }

  private void function(FunctionDescr f) {
    String where = "function " + f.getName();
    if (f.getDialect() != null && !f.getDialect().equals("java")) {
      refuse(
          f.getLine(),
          where,
          "dialect \"" + f.getDialect() + "\"",
          "MVEL dialect (dynamic code the lint cannot check)");
    }
    if (f.getReturnType() != null && !f.getReturnType().equals("void")) {
      CodeCheck.type(f.getReturnType(), origin(f.getLine(), where), names, out);
    }
    for (String p : f.getParameterTypes()) {
      CodeCheck.type(p, origin(f.getLine(), where), names, out);
    }
    String body = f.getBody() == null ? "" : f.getBody();
    CodeCheck.block(body, origin(lineOfText(body, f.getLine()), where), names, out);
  }

  private void rule(RuleDescr r) {
    String where = where(r);
    for (AttributeDescr a : r.getAttributes().values()) {
      attribute(a, a.getLine() > 0 ? a.getLine() : r.getLine(), where);
    }
    propagation(r, where);
    if (r instanceof QueryDescr q) {
      for (String t : q.getParameterTypes()) {
        CodeCheck.type(t, origin(q.getLine(), where), names, out);
      }
    }
    lhs(r.getLhs(), where);
    if (!r.isQuery()) {
      Object rhs = r.getConsequence();
      String text = rhs == null ? "" : rhs.toString();
      int from = r.getConsequenceLine() > 0 ? r.getConsequenceLine() : r.getLine();
      CodeCheck.block(text, origin(lineOfText(text, from), where), names, out);
      for (Map.Entry<String, Object> named : r.getNamedConsequences().entrySet()) {
        String t = String.valueOf(named.getValue());
        CodeCheck.block(t, origin(lineOfText(t, r.getLine()), where), names, out);
      }
    }
  }

  /**
   * A rule's {@code @Propagation} names one of the engine's propagation modes: the compiler reads
   * any other value with {@code valueOf} on a worker thread and fails the whole build with no file
   * or line ("Rules compilation failed or interrupted").
   */
  private void propagation(RuleDescr r, String where) {
    for (org.drools.drl.ast.descr.AnnotationDescr a : r.getAnnotations()) {
      if (!a.getName().equals("Propagation") && !a.getName().endsWith(".Propagation")) {
        continue;
      }
      String v = String.valueOf(a.getSingleValueAsString()).trim();
      boolean known =
          java.util.Arrays.stream(org.kie.api.definition.rule.Propagation.Type.values())
              .anyMatch(t -> t.name().equals(v));
      if (!known) {
        refuse(
            a.getLine() > 0 ? a.getLine() : r.getLine(),
            where,
            "@" + a.getName() + "(" + v + ")",
            "not a propagation mode (IMMEDIATE, EAGER or LAZY)");
      }
    }
  }

  private void lhs(BaseDescr d, String where) {
    if (d == null) {
      return;
    }
    int line = d.getLine() > 0 ? d.getLine() : 0;
    if (d instanceof AndDescr
        || d instanceof OrDescr
        || d instanceof NotDescr
        || d instanceof ExistsDescr
        || d instanceof ForallDescr) {
      for (BaseDescr c : ((org.drools.drl.ast.descr.ConditionalElementDescr) d).getDescrs()) {
        lhs(c, where);
      }
    } else if (d instanceof PatternDescr p) {
      pattern(p, where);
    } else if (d instanceof EvalDescr e) {
      CodeCheck.expression(String.valueOf(e.getContent()), origin(line, where), names, out);
    } else if (d instanceof ConditionalBranchDescr b) {
      lhs(b.getCondition(), where);
      lhs(b.getElseBranch(), where);
    } else if (d instanceof NamedConsequenceDescr) {
      // a reference to a named consequence, checked with the rule's consequences
    } else if (d instanceof AccumulateDescr a) {
      accumulate(a, where);
    } else {
      refuse(line, where, d.getClass().getSimpleName(), "cannot be analysed: unknown rule element");
    }
  }

  private void pattern(PatternDescr p, String where) {
    int line = p.getLine();
    if (!p.isQuery() && p.getObjectType() != null) {
      CodeCheck.type(p.getObjectType(), origin(line, where), names, out);
    }
    if (!p.getBehaviors().isEmpty()) {
      refuse(line, where, "over window", "time windows (expire on a timer thread)");
    }
    for (BaseDescr c : p.getConstraint().getDescrs()) {
      int at = c.getLine() > 0 ? c.getLine() : line;
      if (c instanceof ExprConstraintDescr e) {
        CodeCheck.expression(e.getExpression(), origin(at, where), names, out);
      } else if (c instanceof BindingDescr b) {
        CodeCheck.expression(b.getExpression(), origin(at, where), names, out);
      } else {
        refuse(at, where, c.getClass().getSimpleName(), "cannot be analysed: unknown constraint");
      }
    }
    var src = p.getSource();
    if (src == null || src instanceof EntryPointDescr || src instanceof WindowReferenceDescr) {
      return;
    }
    int at = src.getLine() > 0 ? src.getLine() : line;
    if (src instanceof FromDescr f) {
      CodeCheck.expression(f.getExpression(), origin(at, where), names, out);
    } else if (src instanceof CollectDescr c) {
      pattern(c.getInputPattern(), where);
    } else if (src instanceof AccumulateDescr a && !(src instanceof GroupByDescr)) {
      accumulate(a, where);
    } else {
      refuse(
          at,
          where,
          src.getClass().getSimpleName().replace("Descr", ""),
          "cannot be analysed: unknown source");
    }
  }

  private void accumulate(AccumulateDescr a, String where) {
    int line = a.getLine() > 0 ? a.getLine() : 0;
    if (a.getInitCode() != null
        || a.getActionCode() != null
        || a.getReverseCode() != null
        || a.getResultCode() != null) {
      refuse(line, where, "accumulate init/action/result", "custom accumulate code");
    }
    lhs(a.getInput(), where);
    for (AccumulateDescr.AccumulateFunctionCallDescr f : a.getFunctions()) {
      if (!ACCUMULATE_FUNCTIONS.contains(f.getFunction())) {
        refuse(
            line,
            where,
            "accumulate function " + f.getFunction(),
            "not a built-in accumulate function");
      }
      for (String param : f.getParams()) {
        CodeCheck.expression(param, origin(line, where), names, out);
      }
    }
  }

  private CodeCheck.Origin origin(int line, String where) {
    return new CodeCheck.Origin(source.path(), line, where);
  }

  private void refuse(int line, String where, String name, String reason) {
    out.add(new PolicyFinding(source.path(), line, where, name, reason));
  }

  /**
   * The file line of a fragment's first line: the fragment's first non-blank line is looked up at
   * or after {@code fromLine}, less the blank lines the fragment starts with.
   */
  private int lineOfText(String fragment, int fromLine) {
    int leading = 0;
    for (int i = 0; i < fragment.length() && Character.isWhitespace(fragment.charAt(i)); i++) {
      if (fragment.charAt(i) == '\n') {
        leading++;
      }
    }
    String head = fragment.strip();
    int nl = head.indexOf('\n');
    if (nl > 0) {
      head = head.substring(0, nl).strip();
    }
    if (head.isEmpty()) {
      return Math.max(fromLine, 1);
    }
    for (int i = Math.max(fromLine, 1) - 1; i < lines.length; i++) {
      if (lines[i].contains(head)) {
        return Math.max(1, i + 1 - leading);
      }
    }
    return Math.max(fromLine, 1);
  }

  private int lineOf(String keyword, int fallback) {
    for (int i = 0; i < lines.length; i++) {
      if (lines[i].strip().startsWith(keyword + " ") || lines[i].strip().equals(keyword)) {
        return i + 1;
      }
    }
    return fallback;
  }
}
