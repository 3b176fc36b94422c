package dev.evictd.ruleset.lint;

import dev.evictd.engine.RuleSource;
import java.util.ArrayDeque;
import java.util.Deque;
import java.util.List;
import org.drools.drl.ast.descr.AccumulateDescr;
import org.drools.drl.ast.descr.AndDescr;
import org.drools.drl.ast.descr.BaseDescr;
import org.drools.drl.ast.descr.CollectDescr;
import org.drools.drl.ast.descr.ConditionalBranchDescr;
import org.drools.drl.ast.descr.ConditionalElementDescr;
import org.drools.drl.ast.descr.EnumDeclarationDescr;
import org.drools.drl.ast.descr.FunctionDescr;
import org.drools.drl.ast.descr.OrDescr;
import org.drools.drl.ast.descr.PackageDescr;
import org.drools.drl.ast.descr.PatternDescr;
import org.drools.drl.ast.descr.RuleDescr;
import org.drools.drl.ast.descr.TypeDeclarationDescr;

/**
 * How much a rule set may hold, so that checking and compiling it take seconds at most: Drools
 * compiles each function to a class that imports all the others (1,000 functions took a minute),
 * each declared type to a class (about 8 ms each), each rule, condition and constraint to code of
 * its own. The limits are far above what a policy needs (the default rules: 39 rules, 8 functions,
 * no declared types, about 300 conditions and constraints) and are counted on the parsed files,
 * before any piece of their code is parsed or compiled.
 */
public final class SetLimits {
  /** Rules and queries. */
  static final int MAX_RULES = 1000;

  /** Functions and declared types (and enums): each is a class. */
  static final int MAX_CLASSES = 200;

  /** The conditions of all rules: patterns, their constraints, evals, from, not, exists... */
  static final int MAX_CONDITIONS = 5000;

  /**
   * The largest set an executable model is built for ({@code ModelCache}): building one takes time
   * that grows faster than the set (a rule of 1,000 patterns: 9 s; of 5,000: over two minutes; a
   * consequence of 12,000 statements: 80 s; 200 declared types: 20 s; the default rules: 4-10 s). A
   * larger set is compiled from its DRL whenever it is loaded, which takes seconds.
   */
  static final int MODEL_MAX_BYTES = 64 * 1024;

  static final int MODEL_MAX_RULES = 250;

  static final int MODEL_MAX_CLASSES = 50;

  static final int MODEL_MAX_CONDITIONS = 1000;

  private SetLimits() {}

  /** Why no executable model is built for a parsed set (see {@link #MODEL_MAX_BYTES}), or null. */
  public static String tooLargeForAModel(PolicyLint.Parse parse) {
    long bytes = 0;
    for (RuleSource s : parse.sources()) {
      bytes += s.text().getBytes(java.nio.charset.StandardCharsets.UTF_8).length;
    }
    int rules = 0;
    int classes = 0;
    int conditions = 0;
    for (PolicyLint.Parsed p : parse.parsed()) {
      PackageDescr pkg = p.pkg();
      classes +=
          pkg.getFunctions().size()
              + pkg.getTypeDeclarations().size()
              + pkg.getEnumDeclarations().size();
      for (RuleDescr r : pkg.getRules()) {
        rules++;
        conditions += conditions(r.getLhs());
      }
    }
    return bytes > MODEL_MAX_BYTES
            || rules > MODEL_MAX_RULES
            || classes > MODEL_MAX_CLASSES
            || conditions > MODEL_MAX_CONDITIONS
        ? tooLargeForAModel()
        : null;
  }

  private static String tooLargeForAModel() {
    return "none is built for a set of more than "
        + (MODEL_MAX_BYTES / 1024)
        + " KiB, "
        + MODEL_MAX_RULES
        + " rules, "
        + MODEL_MAX_CLASSES
        + " functions and declared types or "
        + MODEL_MAX_CONDITIONS
        + " conditions and constraints";
  }

  /** The first limit the parsed files of a set go past, at the element that does; or null. */
  static PolicyFinding check(List<RuleSource> sources, List<PackageDescr> packages) {
    int rules = 0;
    int classes = 0;
    int conditions = 0;
    for (int i = 0; i < sources.size(); i++) {
      String file = sources.get(i).path();
      PackageDescr pkg = packages.get(i);
      for (FunctionDescr f : pkg.getFunctions()) {
        if (++classes > MAX_CLASSES) {
          return tooMany(file, f.getLine(), MAX_CLASSES, "functions and declared types");
        }
      }
      for (TypeDeclarationDescr t : pkg.getTypeDeclarations()) {
        if (++classes > MAX_CLASSES) {
          return tooMany(file, t.getLine(), MAX_CLASSES, "functions and declared types");
        }
      }
      for (EnumDeclarationDescr e : pkg.getEnumDeclarations()) {
        if (++classes > MAX_CLASSES) {
          return tooMany(file, e.getLine(), MAX_CLASSES, "functions and declared types");
        }
      }
      for (RuleDescr r : pkg.getRules()) {
        if (r.getName().length() > Nesting.MAX_NAME) {
          return new PolicyFinding(
              file,
              r.getLine(),
              "",
              "a rule name longer than " + Nesting.MAX_NAME + " characters",
              "names may have at most " + Nesting.MAX_NAME);
        }
        if (++rules > MAX_RULES) {
          return tooMany(file, r.getLine(), MAX_RULES, "rules and queries");
        }
        conditions += conditions(r.getLhs());
        if (conditions > MAX_CONDITIONS) {
          return tooMany(file, r.getLine(), MAX_CONDITIONS, "conditions and constraints");
        }
      }
    }
    return null;
  }

  private static PolicyFinding tooMany(String file, int line, int max, String what) {
    return new PolicyFinding(
        file,
        line,
        "",
        "more than " + max + " " + what,
        "a rule set may hold " + max + ": checking and compiling more takes too long");
  }

  /** The conditions under an element of a rule's left-hand side, without recursion. */
  static int conditions(BaseDescr lhs) {
    int n = 0;
    Deque<BaseDescr> todo = new ArrayDeque<>();
    if (lhs != null) {
      todo.push(lhs);
    }
    while (!todo.isEmpty()) {
      BaseDescr d = todo.pop();
      if (d instanceof PatternDescr p) {
        n += 1 + p.getConstraint().getDescrs().size();
        if (p.getSource() != null) {
          todo.push(p.getSource());
        }
      } else if (d instanceof AccumulateDescr a) {
        n += 1 + a.getFunctions().size();
        if (a.getInput() != null) {
          todo.push(a.getInput());
        }
      } else if (d instanceof CollectDescr c) {
        n += 1;
        if (c.getInputPattern() != null) {
          todo.push(c.getInputPattern());
        }
      } else if (d instanceof ConditionalBranchDescr b) {
        n += 1;
        if (b.getCondition() != null) {
          todo.push(b.getCondition());
        }
        if (b.getElseBranch() != null) {
          todo.push(b.getElseBranch());
        }
      } else if (d instanceof ConditionalElementDescr ce) {
        n += d instanceof AndDescr || d instanceof OrDescr ? 0 : 1;
        for (Object c : ce.getDescrs()) {
          if (c instanceof BaseDescr b) {
            todo.push(b);
          }
        }
      } else {
        n += 1; // eval, from, a named consequence...
      }
    }
    return n;
  }
}
