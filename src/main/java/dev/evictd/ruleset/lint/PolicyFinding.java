package dev.evictd.ruleset.lint;

/**
 * One thing the policy lint refuses in a rule set.
 *
 * @param file the rule file as shown in messages (e.g. {@code rules/evil.drl})
 * @param line the line in that file (0 when unknown)
 * @param where what holds it: {@code rule "name"}, {@code function name}, {@code import}, {@code
 *     declare Type}...
 * @param name the offending name ({@code java.lang.Runtime}, {@code getClass}, {@code dialect
 *     "mvel"}...)
 * @param reason the capability it gives, or why it cannot be checked
 */
public record PolicyFinding(String file, int line, String where, String name, String reason) {
  /** The reason given to a name that resolves to no class the lint knows. */
  static final String UNKNOWN = "unknown type (not on the allowlist)";

  /**
   * The reason given to a consequence or function body that is not plain Java to the lint's parser.
   */
  static final String NOT_JAVA = "cannot be analysed: not a block of Java statements";

  /**
   * Whether the compiler's own error would explain this better: a name the lint cannot resolve
   * (usually a typo), or Java the lint cannot parse (usually a syntax error). The rule set is
   * compiled first, and still refused when it compiles — compiling runs none of the rules' code.
   */
  public boolean deferToCompiler() {
    return reason.equals(UNKNOWN) || reason.startsWith(NOT_JAVA);
  }

  /** {@code rules/evil.drl:12: rule "x": refused: java.lang.Runtime (processes)}. */
  @Override
  public String toString() {
    StringBuilder sb = new StringBuilder(file);
    if (line > 0) {
      sb.append(':').append(line);
    }
    sb.append(": ");
    if (!where.isEmpty()) {
      sb.append(where).append(": ");
    }
    return sb.append("refused: ").append(name).append(" (").append(reason).append(')').toString();
  }
}
