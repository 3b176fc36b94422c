package dev.evictd.ruleset.lint;

import com.github.javaparser.ast.Node;
import com.github.javaparser.ast.body.TypeDeclaration;
import com.github.javaparser.ast.expr.AnnotationExpr;
import com.github.javaparser.ast.expr.BooleanLiteralExpr;
import com.github.javaparser.ast.expr.ClassExpr;
import com.github.javaparser.ast.expr.EnclosedExpr;
import com.github.javaparser.ast.expr.Expression;
import com.github.javaparser.ast.expr.FieldAccessExpr;
import com.github.javaparser.ast.expr.MethodCallExpr;
import com.github.javaparser.ast.expr.MethodReferenceExpr;
import com.github.javaparser.ast.expr.NameExpr;
import com.github.javaparser.ast.expr.ObjectCreationExpr;
import com.github.javaparser.ast.expr.TypeExpr;
import com.github.javaparser.ast.stmt.DoStmt;
import com.github.javaparser.ast.stmt.ForStmt;
import com.github.javaparser.ast.stmt.LocalClassDeclarationStmt;
import com.github.javaparser.ast.stmt.LocalRecordDeclarationStmt;
import com.github.javaparser.ast.stmt.SynchronizedStmt;
import com.github.javaparser.ast.stmt.WhileStmt;
import com.github.javaparser.ast.type.ClassOrInterfaceType;
import java.util.ArrayList;
import java.util.Collection;
import java.util.List;
import java.util.Set;
import org.drools.mvel.parser.DrlxParser;
import org.drools.mvel.parser.MvelParser;
import org.drools.mvel.parser.ast.expr.DrlNameExpr;

/**
 * Checks one fragment of rule code — a consequence or function body (Java), or a constraint, {@code
 * from}, {@code eval} or attribute expression (the DRL expression language) — against the {@link
 * PolicyAllowlist}. Fragments are parsed with Drools' own DRLX/Java parser; a fragment that does
 * not parse is refused, never skipped.
 *
 * <p>This class walks the parsed Java; {@link DrlExpressionNodes} walks the nodes of Drools'
 * expression language, and {@link FragmentLines} finds the file line a finding is on.
 */
final class CodeCheck {
  /**
   * Where a fragment sits in its rule file.
   *
   * @param file the file as shown in messages
   * @param firstLine the file line of the fragment's first line
   * @param where the rule, function or declaration it belongs to
   */
  record Origin(String file, int firstLine, String where) {}

  /** Variables the engine puts in every consequence; only their fact operations are allowed. */
  private static final Set<String> ENGINE_VARIABLES =
      Set.of("drools", "kcontext", "consequenceCtx");

  /** Engine facades a consequence could name; none is allowed. */
  private static final Set<String> ENGINE_FACADES = Set.of("channels", "entryPoints", "exitPoints");

  /** What a consequence may do to the engine: change facts. */
  private static final Set<String> FACT_OPERATIONS =
      Set.of("insert", "insertLogical", "update", "delete", "retract");

  private final RuleNames names;
  private final Origin origin;
  private final Collection<PolicyFinding> out;
  private final FragmentLines lines;

  /**
   * Whether the fragment is an expression of the DRL language (MVEL runs it): no bytecode check
   * follows, so calls whose receiver the lint cannot type are judged by name alone.
   */
  private boolean expression;

  private CodeCheck(String text, RuleNames names, Origin origin, Collection<PolicyFinding> out) {
    this.lines = new FragmentLines(text, origin.firstLine());
    this.names = names;
    this.origin = origin;
    this.out = out;
  }

  /** Checks a block of Java statements (a consequence or a function body). */
  static void block(String code, Origin origin, RuleNames names, Collection<PolicyFinding> out) {
    CodeCheck c = new CodeCheck(code, names, origin, out);
    if (!c.affordable(code)) {
      return;
    }
    Node n;
    try {
      // the newline keeps a trailing line comment from swallowing the closing brace
      n = MvelParser.parseBlock("{" + code + "\n}");
    } catch (RuntimeException | Error e) {
      c.unparsable(PolicyFinding.NOT_JAVA.substring("cannot be analysed: not ".length()), e);
      return;
    }
    c.guardedVisit(n);
  }

  /** Checks an expression of the DRL expression language (constraint, from, eval, salience...). */
  static void expression(
      String code, Origin origin, RuleNames names, Collection<PolicyFinding> out) {
    CodeCheck c = new CodeCheck(code, names, origin, out);
    c.expression = true;
    if (!c.affordable(code)) {
      return;
    }
    Node n;
    try {
      n = DrlxParser.parseExpression(DrlxParser.buildDrlxParserWithArguments(List.of()), code);
    } catch (RuntimeException | Error e) {
      c.unparsable("a DRL expression", e);
      return;
    }
    c.guardedVisit(n);
  }

  /** Checks a type name as written in DRL (pattern type, parameter, global, declared field). */
  static void type(String typeName, Origin origin, RuleNames names, Collection<PolicyFinding> out) {
    CodeCheck c = new CodeCheck(typeName, names, origin, out);
    if (!c.affordable(typeName)) {
      return;
    }
    Node n;
    try {
      n = MvelParser.parseType(typeName);
    } catch (RuntimeException | Error e) {
      c.unparsable("a type", e);
      return;
    }
    c.guardedVisit(n);
  }

  /**
   * Charges the rule set's parse budget for a fragment ({@link Nesting}): false when it must not be
   * parsed, refused (the first fragment past the budget) or skipped (the set is refused already).
   */
  private boolean affordable(String code) {
    switch (names.parseBudget().charge(Nesting.cost(code))) {
      case PARSE:
        return true;
      case REFUSE:
        refuse("", Nesting.TOO_COSTLY, Nesting.TOO_COSTLY_WHY);
        return false;
      default:
        return false;
    }
  }

  /** Visits a parsed fragment; a walk that fails refuses the fragment (fail closed). */
  private void guardedVisit(Node n) {
    try {
      visit(n);
    } catch (RuntimeException | StackOverflowError e) {
      refuse("", "code the lint cannot walk", "cannot be analysed: " + failure(e));
    }
  }

  /** What went wrong, for a message: never a Java class name. */
  static String failure(Throwable e) {
    return e instanceof StackOverflowError
        ? "nested too deeply (the stack ran out)"
        : "the lint failed on it";
  }

  private void unparsable(String what, Throwable e) {
    String m =
        e.getMessage() == null || e instanceof StackOverflowError
            ? failure(e)
            : e.getMessage().lines().findFirst().orElse("");
    m = m.replaceAll("\\(line \\d+,\\s*col \\d+\\)", "").trim();
    refuse("", "code the lint cannot parse", "cannot be analysed: not " + what + ": " + m);
  }

  /**
   * Records a finding at the line where {@code needle} (the word as written) occurs (see {@link
   * FragmentLines#lineOf}).
   */
  void refuse(String needle, String name, String reason) {
    out.add(new PolicyFinding(origin.file(), lines.lineOf(needle), origin.where(), name, reason));
  }

  void visit(Node n) {
    if (n != null) {
      visitAt(n);
    }
  }

  private void visitAt(Node n) {
    if (n.getClass().getPackageName().startsWith("org.drools.mvel.parser")
        && !(n instanceof DrlNameExpr)) {
      DrlExpressionNodes.drl(this, n);
      return;
    }
    if (n instanceof ClassOrInterfaceType t) {
      type(t);
      return;
    }
    if (n instanceof ClassExpr c) {
      refuse("class", c.getType().asString() + ".class", "reflection");
      return;
    }
    if (n instanceof LocalClassDeclarationStmt
        || n instanceof LocalRecordDeclarationStmt
        || n instanceof TypeDeclaration<?>) {
      refuse("class", "local class", "class declarations (code called back outside the rules)");
      return;
    }
    if (n instanceof ObjectCreationExpr o && o.getAnonymousClassBody().isPresent()) {
      refuse(
          o.getType().getNameAsString(),
          "new " + o.getType().getNameAsString() + "() {...}",
          "anonymous class (code called back outside the rules)");
      return;
    }
    if (n instanceof AnnotationExpr a) {
      checkTypeName(a.getNameAsString());
      return;
    }
    if (n instanceof SynchronizedStmt) {
      refuse("synchronized", "synchronized", "threads");
    }
    if (n instanceof WhileStmt w && isTrue(w.getCondition())) {
      refuse("while", "while (true)", "a loop that never ends");
    }
    if (n instanceof DoStmt d && isTrue(d.getCondition())) {
      refuse("do", "do ... while (true)", "a loop that never ends");
    }
    if (n instanceof ForStmt f && (f.getCompare().isEmpty() || isTrue(f.getCompare().get()))) {
      refuse("for", "for (;;)", "a loop that never ends");
    }
    if (n instanceof MethodCallExpr m) {
      call(m);
      return;
    }
    if (n instanceof FieldAccessExpr f) {
      List<String> segments = segments(f);
      if (segments != null) {
        chain(segments, null);
      } else {
        visit(f.getScope());
        member(null, f.getNameAsString(), true);
      }
      return;
    }
    if (n instanceof NameExpr ne) {
      chain(List.of(ne.getNameAsString()), null);
      return;
    }
    if (n instanceof MethodReferenceExpr r) {
      methodReference(r);
      return;
    }
    for (Node c : new ArrayList<>(n.getChildNodes())) {
      visit(c);
    }
  }

  private static boolean isTrue(Expression e) {
    Expression x = e;
    while (x instanceof EnclosedExpr en) {
      x = en.getInner();
    }
    return x instanceof BooleanLiteralExpr b && b.getValue();
  }

  /**
   * A dotted name ({@code a.b.c}) as its segments, or null when the expression is not a plain name.
   */
  private static List<String> segments(Expression e) {
    if (e instanceof NameExpr n) {
      List<String> l = new ArrayList<>();
      l.add(n.getNameAsString());
      return l;
    }
    if (e instanceof FieldAccessExpr f) {
      List<String> l = segments(f.getScope());
      if (l != null) {
        l.add(f.getNameAsString());
      }
      return l;
    }
    return null;
  }

  private void call(MethodCallExpr m) {
    String name = m.getNameAsString();
    m.getTypeArguments().ifPresent(ts -> ts.forEach(this::visit));
    m.getArguments().forEach(this::visit);
    if (m.getScope().isEmpty()) {
      member(null, name, false);
      return;
    }
    Expression scope = m.getScope().get();
    List<String> segments = segments(scope);
    if (segments != null) {
      parallelFlag(segments, m);
      chain(segments, name);
    } else {
      visit(scope);
      member(null, name, false);
      unknownReceiver(name);
    }
  }

  /**
   * Refuses {@code StreamSupport.stream(spliterator, parallel)} (and its int, long and double
   * forms) unless {@code parallel} is the literal {@code false}: a parallel stream runs the rules'
   * lambdas on the common fork-join pool, outside the rule thread and its budget.
   */
  private void parallelFlag(List<String> segments, MethodCallExpr m) {
    String name = m.getNameAsString();
    if (!name.equals("stream") && !name.endsWith("Stream") || m.getArguments().size() < 2) {
      return;
    }
    for (RuleNames.Resolved r : names.resolve(segments)) {
      if (r.rest().isEmpty() && r.className().equals(PolicyAllowlist.STREAM_SUPPORT)) {
        Expression flag = m.getArgument(m.getArguments().size() - 1);
        while (flag instanceof EnclosedExpr en) {
          flag = en.getInner();
        }
        if (!(flag instanceof BooleanLiteralExpr b) || b.getValue()) {
          refuse(
              name,
              "StreamSupport." + name + "(..., " + shown(flag) + ")",
              "threads (a parallel stream runs on the fork-join pool; pass false)");
        }
        return;
      }
    }
  }

  /**
   * A short text for an argument in a message (DRL nodes do not print with JavaParser's printer).
   */
  private static String shown(Expression e) {
    if (e instanceof BooleanLiteralExpr b) {
      return Boolean.toString(b.getValue());
    }
    if (e instanceof NameExpr n) {
      return n.getNameAsString();
    }
    return "an expression";
  }

  /**
   * In an expression, a call the lint cannot type: refused when its name reads the wall clock (Java
   * lets a static {@code now()} be called on any instance of its class).
   */
  private void unknownReceiver(String method) {
    if (expression && method.equals("now")) {
      refuse(method, "now()", PolicyAllowlist.WALL_CLOCK);
    }
  }

  /**
   * A dotted name, possibly the receiver of a method call: the class it starts with must be
   * allowed, and no name after it may be a refused member.
   */
  private void chain(List<String> segments, String calledMethod) {
    String first = segments.get(0);
    if (ENGINE_VARIABLES.contains(first)
        || ENGINE_FACADES.contains(first)
        || first.endsWith("__Handle__")
        || first.contains("$eval$")) {
      boolean factOperation =
          ENGINE_VARIABLES.contains(first)
              && segments.size() == 1
              && calledMethod != null
              && FACT_OPERATIONS.contains(calledMethod);
      if (!factOperation) {
        String shown =
            first
                + (segments.size() > 1
                    ? "." + segments.get(1)
                    : calledMethod == null ? "" : "." + calledMethod);
        refuse(first, shown, "engine internals");
      }
      return;
    }
    List<RuleNames.Resolved> resolved = names.resolve(segments);
    if (resolved.isEmpty()) {
      // a variable or a property path, or a name that is no class the lint knows: fail closed on
      // the latter
      if (Character.isUpperCase(first.charAt(0)) && (segments.size() > 1 || calledMethod != null)) {
        refuse(first, first, PolicyFinding.UNKNOWN);
        return;
      }
      for (int i = 1; i < segments.size(); i++) {
        member(null, segments.get(i), true);
      }
      if (calledMethod != null) {
        member(null, calledMethod, false);
        unknownReceiver(calledMethod);
      }
      return;
    }
    int written = segments.size() - 1;
    for (RuleNames.Resolved r : resolved) {
      String needle = segments.get(Math.max(0, written - r.rest().size()));
      if (!checkClass(needle, r.className())) {
        continue;
      }
      String owner = r.className();
      for (int i = 0; i < r.rest().size(); i++) {
        member(i == 0 ? owner : null, r.rest().get(i), true);
      }
      if (calledMethod != null) {
        member(r.rest().isEmpty() ? owner : null, calledMethod, false);
      }
    }
  }

  private void methodReference(MethodReferenceExpr r) {
    Expression scope = r.getScope();
    String method = r.getIdentifier();
    if (scope instanceof TypeExpr t) {
      if (t.getType() instanceof ClassOrInterfaceType ct) {
        chain(List.of(ct.getNameWithScope().split("\\.")), method);
        ct.getTypeArguments().ifPresent(args -> args.forEach(this::visit));
      } else {
        visit(t.getType());
        member(null, method, false);
      }
      return;
    }
    List<String> segments = segments(scope);
    if (segments != null) {
      chain(segments, method);
    } else {
      visit(scope);
      member(null, method, false);
    }
  }

  /**
   * Refuses a member name that leads to a refused capability; with {@code property}, also its
   * getter forms.
   */
  void member(String owner, String name, boolean property) {
    if (name.equals("class")) {
      refuse("class", ".class", "reflection");
      return;
    }
    List<String> forms = new ArrayList<>(List.of(name));
    if (property && !name.isEmpty()) {
      String cap = Character.toUpperCase(name.charAt(0)) + name.substring(1);
      forms.add("get" + cap);
      forms.add("is" + cap);
    }
    for (String f : forms) {
      var reason = PolicyAllowlist.refusedMember(owner, f);
      if (reason.isPresent()) {
        refuse(name, owner == null ? name : owner.replace('$', '.') + "." + name, reason.get());
        return;
      }
    }
  }

  private void type(ClassOrInterfaceType t) {
    if (t.getScope().isEmpty()
        && t.getNameAsString().equals("var")
        && t.getTypeArguments().isEmpty()) {
      return; // local variable type inference: the initializer is checked
    }
    checkTypeName(t.getNameWithScope());
    t.getTypeArguments().ifPresent(args -> args.forEach(this::visit));
  }

  void checkTypeName(String dotted) {
    String needle = dotted.substring(dotted.lastIndexOf('.') + 1);
    List<RuleNames.Resolved> resolved = names.resolve(List.of(dotted.split("\\.")));
    if (resolved.isEmpty()) {
      refuse(needle, dotted, PolicyFinding.UNKNOWN);
      return;
    }
    for (RuleNames.Resolved r : resolved) {
      if (!r.rest().isEmpty()) {
        refuse(needle, dotted, PolicyFinding.UNKNOWN);
      } else {
        checkClass(needle, r.className());
      }
    }
  }

  /**
   * Refuses a class outside the allowlist (written as {@code needle}); returns whether it is
   * allowed.
   */
  private boolean checkClass(String needle, String className) {
    if (PolicyAllowlist.allowed(className)) {
      return true;
    }
    refuse(needle, className.replace('$', '.'), PolicyAllowlist.category(className));
    return false;
  }
}
