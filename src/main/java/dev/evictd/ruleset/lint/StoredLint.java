package dev.evictd.ruleset.lint;

import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * A {@link PolicyLint.Report} as plain values, for the rule-set cache to store: what the lint
 * found, where each rule, function and declared type is, and how the rule set's names resolve (its
 * imports and declared types), which the compiled-code check needs to check the expressions the
 * engine compiled. Reading it back gives a report equal to the one the lint made.
 *
 * @param findings what the lint refused
 * @param rules rule name to its place
 * @param functions function class simple name to its place
 * @param declaredTypes the types the rules declare
 * @param unparsed files the DRL parser could not read
 * @param declarations declared type to its place
 * @param rulePackage the rules' package
 * @param ruleTypes the simple names of the rules' own types
 * @param singleImports simple name to the class a single-type import names
 * @param wildcardPrefixes the packages (with a trailing dot) wildcard imports name
 */
public record StoredLint(
    List<PolicyFinding> findings,
    Map<String, PolicyLint.Location> rules,
    Map<String, PolicyLint.Location> functions,
    Set<String> declaredTypes,
    List<String> unparsed,
    Map<String, PolicyLint.Location> declarations,
    String rulePackage,
    Set<String> ruleTypes,
    Map<String, String> singleImports,
    List<String> wildcardPrefixes) {
  public StoredLint {
    findings = List.copyOf(findings);
    rules = Map.copyOf(rules);
    functions = Map.copyOf(functions);
    declaredTypes = Set.copyOf(declaredTypes);
    unparsed = List.copyOf(unparsed);
    declarations = Map.copyOf(declarations);
    ruleTypes = Set.copyOf(ruleTypes);
    singleImports = Map.copyOf(singleImports);
    wildcardPrefixes = List.copyOf(wildcardPrefixes);
  }

  /** The values of a report. */
  public static StoredLint of(PolicyLint.Report r) {
    RuleNames n = r.names();
    return new StoredLint(
        r.findings(),
        r.rules(),
        r.functions(),
        r.declaredTypes(),
        r.unparsed(),
        r.declarations(),
        n.rulePackage(),
        n.ruleTypes(),
        n.singleImports(),
        n.wildcardPrefixes());
  }

  /** The report again, its names resolving on evictd's class loader as the lint's do. */
  public PolicyLint.Report toReport() {
    RuleNames names =
        new RuleNames(
            PolicyLint.class.getClassLoader(),
            rulePackage,
            ruleTypes,
            singleImports,
            wildcardPrefixes);
    return new PolicyLint.Report(
        findings, rules, functions, declaredTypes, unparsed, declarations, names);
  }
}
