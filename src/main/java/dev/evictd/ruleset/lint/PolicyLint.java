package dev.evictd.ruleset.lint;

import dev.evictd.engine.RuleSource;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.drools.drl.ast.descr.EnumDeclarationDescr;
import org.drools.drl.ast.descr.FunctionDescr;
import org.drools.drl.ast.descr.ImportDescr;
import org.drools.drl.ast.descr.PackageDescr;
import org.drools.drl.ast.descr.QueryDescr;
import org.drools.drl.ast.descr.RuleDescr;
import org.drools.drl.ast.descr.TypeDeclarationDescr;
import org.drools.drl.parser.DrlParser;
import org.drools.drl.parser.DroolsParserException;

/**
 * The policy lint: refuses a rule set whose code reaches outside the {@link PolicyAllowlist} — I/O,
 * networking, processes, reflection, class loading, threads, JVM exit, engine internals — or that
 * the lint cannot check (MVEL dialect, custom accumulate code, unparsable fragments, escapes that
 * hide code from review).
 *
 * <p>Each file is parsed with the parser the rule compiler uses ({@link DrlParser}); every piece of
 * code in the resulting package description — imports, globals, functions, declared types, rule
 * attributes, patterns and their constraints, {@code from}/{@code eval}/accumulate expressions,
 * consequences — is parsed again with Drools' DRLX/Java parser and its names resolved against the
 * file's imports. {@link CompiledCodeCheck} then checks what the Java compiler produced, as a
 * second line of defence.
 *
 * <p>This class parses the files and indexes what belongs to the package (imports, declared types,
 * functions, rules) into the {@link Report}; {@link DrlFileCheck} checks each construct of a parsed
 * file.
 */
public final class PolicyLint {
  private PolicyLint() {}

  /**
   * What the lint learned about a rule set: its findings, and where each rule and function is (for
   * the compiled-code check to name them).
   *
   * @param findings what is refused, in file and line order
   * @param rules rule name to its file and line
   * @param functions function class simple name ({@code SoftEvictionGracePeriod}) to its file and
   *     line
   * @param declaredTypes simple names of the types the rules declare
   * @param unparsed files the DRL parser could not read (the rule compiler reports their errors)
   * @param declarations declared type simple name to its file and line
   * @param names how the rule set's names resolve (for checking the expressions the engine
   *     compiled)
   */
  public record Report(
      List<PolicyFinding> findings,
      Map<String, Location> rules,
      Map<String, Location> functions,
      Set<String> declaredTypes,
      List<String> unparsed,
      Map<String, Location> declarations,
      RuleNames names) {
    public Report {
      findings = List.copyOf(findings);
      rules = Map.copyOf(rules);
      functions = Map.copyOf(functions);
      declaredTypes = Set.copyOf(declaredTypes);
      unparsed = List.copyOf(unparsed);
      declarations = Map.copyOf(declarations);
    }

    /** Whether nothing is refused. */
    public boolean passed() {
      return findings.isEmpty();
    }
  }

  /**
   * A place in a rule file.
   *
   * @param file the file as shown in messages
   * @param line the line
   * @param where {@code rule "name"} or {@code function name}
   */
  public record Location(String file, int line, String where) {}

  /** Parsed file: its source and package description. */
  public record Parsed(RuleSource source, PackageDescr pkg) {}

  /**
   * The parse step of the rule-set pipeline: each file read by the parser the rule compiler uses,
   * after the checks that keep a parser from seeing what it cannot take (nesting, cost).
   *
   * @param sources the set's files, in load order
   * @param errors the parser's own errors, as {@code file:line:col: message}: a set with any is
   *     refused with these alone
   * @param findings what the checks before parsing refused: code hidden from review (those files
   *     are parsed), nesting and cost (those are not)
   * @param parsed the files that were parsed, in load order
   * @param unparsed files the parser returned nothing for
   */
  public record Parse(
      List<RuleSource> sources,
      List<String> errors,
      List<PolicyFinding> findings,
      List<Parsed> parsed,
      List<String> unparsed) {}

  /** Checks the sources of a rule set: {@link #parse}, then {@link #check(Parse)}. */
  public static Report check(List<RuleSource> sources) {
    return check(parse(sources));
  }

  /** Parses the sources of a rule set (see {@link Parse}). */
  public static Parse parse(List<RuleSource> sources) {
    List<PolicyFinding> findings = new ArrayList<>();
    List<String> errors = new ArrayList<>();
    List<String> unparsed = new ArrayList<>();
    List<Parsed> parsed = new ArrayList<>();
    // No parser sees a set nested too deeply: the DRL parser recurses once per level, and its
    // time and the DRLX parser's grow exponentially with the levels (Nesting).
    long cost = 0;
    boolean overBudget = false;
    List<RuleSource> shallow = new ArrayList<>();
    for (RuleSource s : sources) {
      rawText(s, findings);
      Nesting.Shape shape = Nesting.file(s.text(), cost);
      if (shape.tooDeepAt() > 0) {
        findings.add(
            new PolicyFinding(
                s.path(),
                shape.tooDeepAt(),
                "",
                "expression nested deeper than " + Nesting.MAX_DEPTH,
                "parentheses and brackets; split it, with bindings, local variables or functions"));
      } else if (shape.longNameAt() > 0) {
        findings.add(
            new PolicyFinding(
                s.path(),
                shape.longNameAt(),
                "",
                "a name longer than " + Nesting.MAX_NAME + " characters",
                "names may have at most " + Nesting.MAX_NAME));
      } else if (shape.overBudgetAt() > 0 && !overBudget) {
        overBudget = true;
        findings.add(
            new PolicyFinding(
                s.path(), shape.overBudgetAt(), "", Nesting.TOO_COSTLY, Nesting.TOO_COSTLY_WHY));
      } else {
        cost += shape.cost();
        shallow.add(s);
      }
    }
    if (overBudget) {
      shallow.clear();
    }
    for (RuleSource s : shallow) {
      PackageDescr pkg;
      try {
        DrlParser parser = new DrlParser();
        pkg = parser.parse(null, s.text());
        if (parser.hasErrors()) {
          parser.getErrors().forEach(e -> errors.add(parseError(s, e)));
          unparsed.add(s.path());
          continue;
        }
      } catch (DroolsParserException | RuntimeException e) {
        pkg = null;
      } catch (StackOverflowError e) {
        findings.add(
            new PolicyFinding(
                s.path(), 0, "", "the whole file", "cannot be analysed: " + CodeCheck.failure(e)));
        continue;
      }
      if (pkg == null) {
        unparsed.add(s.path());
      } else {
        parsed.add(new Parsed(s, pkg));
      }
    }
    List<String> order = sources.stream().map(RuleSource::path).toList();
    findings.sort(
        Comparator.comparingInt((PolicyFinding f) -> order.indexOf(f.file()))
            .thenComparingInt(PolicyFinding::line));
    return new Parse(List.copyOf(sources), errors, findings, parsed, unparsed);
  }

  /** A parser error as {@code file:line:col: message} (the message names the line again). */
  private static String parseError(RuleSource s, org.drools.drl.parser.DroolsError e) {
    StringBuilder sb = new StringBuilder(s.path());
    int[] at = e.getLines();
    int line = at != null && at.length > 0 ? at[0] : 0;
    if (e instanceof org.drools.drl.parser.ParserError pe) {
      line = pe.getRow();
      if (line > 0) {
        sb.append(':').append(line);
        if (pe.getCol() >= 0) {
          // as Drools counts it, from 0, like the compiler's own columns
          sb.append(':').append(pe.getCol());
        }
      }
    } else if (line > 0) {
      sb.append(':').append(line);
    }
    String text = e.getMessage() == null ? "syntax error" : e.getMessage().trim();
    // the parser's own failures come with its exception and stack trace: the position is the news
    int internal = text.indexOf(". Exception: ");
    if (internal > 0) {
      text = text.substring(0, internal);
    }
    return sb.append(": ").append(text.replaceAll("\\s*\\n\\s*", " ")).toString();
  }

  /** The lint step of the rule-set pipeline, over what {@link #parse} read. */
  public static Report check(Parse parse) {
    List<RuleSource> sources = parse.sources();
    List<PolicyFinding> findings = new ArrayList<>(parse.findings());
    List<String> unparsed = parse.unparsed();
    List<Parsed> parsed = new ArrayList<>(parse.parsed());

    PolicyFinding tooMany =
        SetLimits.check(
            parsed.stream().map(Parsed::source).toList(),
            parsed.stream().map(Parsed::pkg).toList());
    if (tooMany != null) {
      // checked before any piece of code is parsed: the set is refused
      findings.add(tooMany);
      parsed.clear();
    }

    // Imports, declared types and functions belong to the package, whichever file declares them.
    Set<String> ruleTypes = new LinkedHashSet<>();
    Set<String> declared = new LinkedHashSet<>();
    Map<String, Location> functions = new LinkedHashMap<>();
    Map<String, Location> rules = new LinkedHashMap<>();
    Map<String, Location> declarations = new LinkedHashMap<>();
    Map<String, String> singleImports = new HashMap<>();
    List<String> wildcards = new ArrayList<>();
    RuleNames bootstrap = names(Set.of(), Map.of(), List.of());
    for (Parsed p : parsed) {
      for (TypeDeclarationDescr t : p.pkg().getTypeDeclarations()) {
        if (existing(bootstrap, t).isEmpty()) {
          ruleTypes.add(t.getTypeName());
          declared.add(t.getTypeName());
          declarations.put(
              t.getTypeName(),
              new Location(p.source().path(), t.getLine(), "declare " + t.getTypeName()));
        }
      }
      for (EnumDeclarationDescr e : p.pkg().getEnumDeclarations()) {
        ruleTypes.add(e.getTypeName());
        declared.add(e.getTypeName());
        declarations.put(
            e.getTypeName(),
            new Location(p.source().path(), e.getLine(), "declare enum " + e.getTypeName()));
      }
      for (FunctionDescr f : p.pkg().getFunctions()) {
        String cls = Character.toUpperCase(f.getName().charAt(0)) + f.getName().substring(1);
        ruleTypes.add(cls);
        functions.put(cls, new Location(p.source().path(), f.getLine(), "function " + f.getName()));
      }
      for (RuleDescr r : p.pkg().getRules()) {
        rules.put(r.getName(), new Location(p.source().path(), r.getLine(), where(r)));
      }
      for (ImportDescr i : p.pkg().getImports()) {
        String target = i.getTarget().trim();
        if (target.endsWith(".*")) {
          String base = target.substring(0, target.length() - 2);
          String asClass = bootstrap.binaryName(base);
          wildcards.add(asClass != null ? asClass + "$" : base + ".");
        } else {
          String binary = bootstrap.binaryName(target);
          String simple = target.substring(target.lastIndexOf('.') + 1);
          singleImports.put(simple, binary != null ? binary : target);
        }
      }
    }
    RuleNames names = names(ruleTypes, singleImports, wildcards);
    for (Parsed p : parsed) {
      try {
        new DrlFileCheck(p.source(), p.pkg(), names, findings).run();
      } catch (StackOverflowError e) {
        findings.add(
            new PolicyFinding(
                p.source().path(),
                0,
                "",
                "the whole file",
                "cannot be analysed: " + CodeCheck.failure(e)));
      }
    }
    List<PolicyFinding> sorted = new ArrayList<>(new LinkedHashSet<>(findings));
    List<String> order = sources.stream().map(RuleSource::path).toList();
    sorted.sort(
        Comparator.comparingInt((PolicyFinding f) -> order.indexOf(f.file()))
            .thenComparingInt(PolicyFinding::line));
    return new Report(sorted, rules, functions, declared, unparsed, declarations, names);
  }

  private static RuleNames names(
      Set<String> ruleTypes, Map<String, String> imports, List<String> wildcards) {
    return new RuleNames(
        PolicyLint.class.getClassLoader(),
        PolicyAllowlist.RULES_PACKAGE,
        ruleTypes,
        imports,
        wildcards);
  }

  /**
   * The existing classes a {@code declare} names (by its simple or its full name); empty for a new
   * type.
   */
  static Set<String> existing(RuleNames names, TypeDeclarationDescr t) {
    Set<String> out = new LinkedHashSet<>();
    for (RuleNames.Resolved r : names.resolve(List.of(t.getTypeName().split("\\.")))) {
      if (r.rest().isEmpty()) {
        out.add(r.className());
      }
    }
    String full = t.getFullTypeName();
    String binary = full == null ? null : names.binaryName(full);
    if (binary != null) {
      out.add(binary);
    }
    return out;
  }

  static String where(RuleDescr r) {
    return (r instanceof QueryDescr ? "query \"" : "rule \"") + r.getName() + "\"";
  }

  /**
   * Checks the raw text: unicode escapes and bidirectional controls make the code a reviewer reads
   * differ from the code the compiler sees (a {@code \u000a} ends a {@code //} comment for javac,
   * not for a reader).
   */
  private static void rawText(RuleSource s, List<PolicyFinding> findings) {
    String t = s.text();
    int line = 1;
    int backslashes = 0;
    for (int i = 0; i < t.length(); i++) {
      char c = t.charAt(i);
      if (c == '\n') {
        line++;
      }
      if (c == 'u' && backslashes % 2 == 1) {
        int j = i;
        while (j < t.length() && t.charAt(j) == 'u') {
          j++;
        }
        if (j + 4 <= t.length()
            && t.substring(j, j + 4).chars().allMatch(h -> Character.digit(h, 16) >= 0)) {
          findings.add(
              new PolicyFinding(
                  s.path(),
                  line,
                  "",
                  "\\" + t.substring(i, j + 4),
                  "unicode escape (hides code from review; write the character itself)"));
        }
      }
      if ((c >= '\u202a' && c <= '\u202e')
          || (c >= '\u2066' && c <= '\u2069')
          || c == '\u200e'
          || c == '\u200f'
          || c == '\u061c') {
        findings.add(
            new PolicyFinding(
                s.path(),
                line,
                "",
                String.format("U+%04X", (int) c),
                "bidirectional control character (hides code from review)"));
      }
      if (c == '\ufeff' || c == '\u200b' || c == '\u2060') {
        // invisible; the lint's parser reads U+FEFF as a space, the Java compiler as part of a
        // name (a byte-order mark at the start of a file is dropped when it is read)
        findings.add(
            new PolicyFinding(
                s.path(),
                line,
                "",
                String.format("U+%04X", (int) c),
                "zero-width character (hides code from review)"));
      }
      backslashes = c == '\\' ? backslashes + 1 : 0;
    }
  }
}
