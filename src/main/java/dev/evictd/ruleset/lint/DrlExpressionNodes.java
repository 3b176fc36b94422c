package dev.evictd.ruleset.lint;

import com.github.javaparser.ast.Node;
import com.github.javaparser.ast.expr.Expression;
import dev.evictd.engine.Re2ConstraintBuilder;
import dev.evictd.engine.RuleRegex;
import java.util.List;
import org.drools.mvel.parser.ast.expr.BigDecimalLiteralExpr;
import org.drools.mvel.parser.ast.expr.BigIntegerLiteralExpr;
import org.drools.mvel.parser.ast.expr.DrlxExpression;
import org.drools.mvel.parser.ast.expr.FullyQualifiedInlineCastExpr;
import org.drools.mvel.parser.ast.expr.HalfBinaryExpr;
import org.drools.mvel.parser.ast.expr.HalfPointFreeExpr;
import org.drools.mvel.parser.ast.expr.InlineCastExpr;
import org.drools.mvel.parser.ast.expr.ListCreationLiteralExpression;
import org.drools.mvel.parser.ast.expr.ListCreationLiteralExpressionElement;
import org.drools.mvel.parser.ast.expr.MapCreationLiteralExpression;
import org.drools.mvel.parser.ast.expr.MapCreationLiteralExpressionKeyValuePair;
import org.drools.mvel.parser.ast.expr.ModifyStatement;
import org.drools.mvel.parser.ast.expr.NullSafeFieldAccessExpr;
import org.drools.mvel.parser.ast.expr.NullSafeMethodCallExpr;
import org.drools.mvel.parser.ast.expr.OOPathChunk;
import org.drools.mvel.parser.ast.expr.OOPathExpr;
import org.drools.mvel.parser.ast.expr.PointFreeExpr;
import org.drools.mvel.parser.ast.expr.RegexExpr;
import org.drools.mvel.parser.ast.expr.TemporalChunkExpr;
import org.drools.mvel.parser.ast.expr.TemporalLiteralExpr;
import org.drools.mvel.parser.ast.expr.WithStatement;

/**
 * The part of {@link CodeCheck}'s walk over the nodes of Drools' expression language (point-free
 * operators, inline casts, null-safe access, list and map literals, OOPath, {@code modify} and
 * {@code with} blocks), which JavaParser does not walk; and the RE2 check of a {@code matches}
 * pattern.
 */
final class DrlExpressionNodes {
  private DrlExpressionNodes() {}

  /**
   * The nodes of Drools' expression language (and its modify/with blocks), which JavaParser does
   * not walk.
   */
  static void drl(CodeCheck check, Node n) {
    if (n instanceof DrlxExpression d) {
      check.visit(d.getExpr());
    } else if (n instanceof PointFreeExpr p) {
      check.visit(p.getLeft());
      p.getRight().forEach(check::visit);
      visitAll(check, p.getArg1(), p.getArg2(), p.getArg3(), p.getArg4());
      pattern(check, p.getOperator().asString(), p.getRight());
    } else if (n instanceof HalfPointFreeExpr p) {
      p.getRight().forEach(check::visit);
      visitAll(check, p.getArg1(), p.getArg2(), p.getArg3(), p.getArg4());
      pattern(check, p.getOperator().asString(), p.getRight());
    } else if (n instanceof HalfBinaryExpr h) {
      check.visit(h.getRight());
    } else if (n instanceof InlineCastExpr c) {
      check.visit(c.getType());
      check.visit(c.getExpression());
    } else if (n instanceof FullyQualifiedInlineCastExpr c) {
      check.visit(c.getScope());
      check.checkTypeName(c.getName().asString());
      c.getArguments().forEach(check::visit);
    } else if (n instanceof NullSafeFieldAccessExpr f) {
      check.visit(f.getScope());
      check.member(null, f.getNameAsString(), true);
    } else if (n instanceof NullSafeMethodCallExpr m) {
      m.getScope().ifPresent(check::visit);
      m.getArguments().forEach(check::visit);
      check.member(null, m.getNameAsString(), false);
    } else if (n instanceof ListCreationLiteralExpression l) {
      l.getExpressions().forEach(check::visit);
    } else if (n instanceof ListCreationLiteralExpressionElement e) {
      check.visit(e.getValue());
    } else if (n instanceof MapCreationLiteralExpression m) {
      m.getExpressions().forEach(check::visit);
    } else if (n instanceof MapCreationLiteralExpressionKeyValuePair kv) {
      check.visit(kv.getKey());
      check.visit(kv.getValue());
    } else if (n instanceof OOPathExpr o) {
      o.getChunks().forEach(check::visit);
    } else if (n instanceof OOPathChunk c) {
      check.member(null, c.getField().asString(), true);
      if (c.getInlineCast() != null) {
        check.checkTypeName(c.getInlineCast().asString());
      }
      c.getConditions().forEach(check::visit);
    } else if (n instanceof ModifyStatement m) {
      check.visit(m.getModifyObject());
      m.getExpressions().forEach(check::visit);
    } else if (n instanceof WithStatement w) {
      check.visit(w.getWithObject());
      w.getExpressions().forEach(check::visit);
    } else if (!(n instanceof RegexExpr
        || n instanceof TemporalLiteralExpr
        || n instanceof TemporalChunkExpr
        || n instanceof BigDecimalLiteralExpr
        || n instanceof BigIntegerLiteralExpr)) {
      check.refuse("", n.getClass().getSimpleName(), "cannot be analysed: unknown expression form");
    }
  }

  /**
   * The literal pattern of a {@code matches}: RE2/J runs it (see {@link Re2ConstraintBuilder}), so
   * it must be RE2 syntax (no back-references, no look-around).
   */
  private static void pattern(CodeCheck check, String operator, List<Expression> right) {
    if (!operator.equals("matches")) {
      return;
    }
    for (Expression e : right) {
      if (e instanceof com.github.javaparser.ast.expr.StringLiteralExpr lit) {
        String error = RuleRegex.syntaxError(lit.asString());
        if (error != null) {
          check.refuse(
              "matches",
              "matches \"" + lit.getValue() + "\"",
              "not a regular expression RE2/J accepts: " + error);
        }
      }
    }
  }

  private static void visitAll(CodeCheck check, Node... nodes) {
    for (Node n : nodes) {
      check.visit(n);
    }
  }
}
