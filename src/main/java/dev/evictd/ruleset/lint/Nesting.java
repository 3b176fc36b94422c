package dev.evictd.ruleset.lint;

/**
 * Bounds what parsing a rule set's nested parentheses and brackets may cost, before any parser sees
 * them.
 *
 * <p>Drools' DRLX/Java parser, with which the lint parses every fragment of rule code (and Drools
 * builds executable models), takes time exponential in how deeply parentheses and brackets nest:
 * its syntactic lookahead reads each level again about three times (one expression nested 10 deep
 * takes about 0.3 s, 15 deep 20 s, 20 deep hours). Drools' DRL parser and compiler recurse once per
 * level, and run out of stack some thousands deep. So:
 *
 * <ul>
 *   <li>a file whose parentheses and brackets nest deeper than {@link #MAX_DEPTH} anywhere, or a
 *       set whose files cost more than {@link #MAX_COST} to parse, is refused before any parser
 *       sees it ({@link #file}, with DRL's lexical rules: the DRL parser reads the whole file; it
 *       also takes exponential time on runs of casts, {@code (int)(int)(int) x}, and nested type
 *       arguments);
 *   <li>every fragment of code the checks parse costs its rule set what {@link #cost} says (with
 *       Java's lexical rules: the fragment is exactly what the DRLX parser reads), and a fragment
 *       that would take the set past {@link #MAX_COST} is refused without being parsed ({@link
 *       Budget}).
 * </ul>
 *
 * <p>Both scans are conservative: text they cannot tell is a comment or a string (unclosed, or with
 * an escape the lexer would reject) is counted as code.
 */
final class Nesting {
  /** How deeply parentheses and brackets may nest in a rule file (the default rules: 5). */
  static final int MAX_DEPTH = 10;

  /**
   * What parsing a rule set's code may cost in all: {@link #cost} summed over every fragment the
   * checks parse (the default rules: about 1,500), a few seconds of parsing at worst.
   */
  static final long MAX_COST = 100_000;

  /** What a set that costs too much to parse is refused as. */
  static final String TOO_COSTLY = "too many deeply nested expressions";

  /** Why. */
  static final String TOO_COSTLY_WHY =
      "checking them would take too long: each parenthesis, bracket or type argument inside n"
          + " others (or after n casts) costs 3^n, and a rule set may cost "
          + MAX_COST
          + "; flatten the most deeply nested ones";

  /** 3^n up to where it saturates. */
  private static final long[] POW3 = new long[40];

  static {
    POW3[0] = 1;
    for (int i = 1; i < POW3.length; i++) {
      POW3[i] = POW3[i - 1] * 3;
    }
  }

  /** The escapes DRL's lexer accepts after a backslash in a string (DRL6Lexer.EscapeSequence). */
  private static final String DRL_ESCAPES = "bBtnfr\"'\\.oxaecdDsSwWpAGZzQE*[]()$^{}?+-&|u01234567";

  /** The escapes Java's lexer accepts after a backslash in a string or character literal. */
  private static final String JAVA_ESCAPES = "btnfrs\"'\\u01234567";

  private Nesting() {}

  /**
   * What a rule file's text comes to: the line where its parentheses and brackets first nest deeper
   * than {@link #MAX_DEPTH} (0 if they do not), what parsing it costs, and the line where that
   * takes its set past {@link #MAX_COST} (0 if it does not).
   */
  record Shape(int tooDeepAt, long cost, int overBudgetAt, int longNameAt) {}

  /**
   * How long a name may be: a class file holds at most 65,535 bytes of one (a longer rule name
   * failed the compiler with no file or line).
   */
  static final int MAX_NAME = 1000;

  /**
   * Reads a rule file as DRL's lexer reads it: {@code //} and {@code /* *}{@code /} comments,
   * strings in double or single quotes that may span lines.
   */
  static Shape file(String text, long spentBefore) {
    Scan s = new Scan(text, true);
    s.cost = spentBefore;
    s.run();
    return new Shape(s.tooDeepAt, s.cost - spentBefore, s.overBudgetAt, s.longNameAt);
  }

  /**
   * What parsing a fragment of code costs, read as Java's lexer reads it: comments, strings and
   * character literals on one line, text blocks.
   */
  static long cost(String code) {
    Scan s = new Scan(code, false);
    s.run();
    return s.cost;
  }

  /**
   * One pass over a text. Each opening parenthesis, bracket or angle bracket of type arguments
   * costs 3^n, where n counts what it is inside: the parentheses, brackets and angle brackets open
   * around it, and the casts it follows directly ({@code (int)(int)(int) x}: each cast's operand is
   * parsed ahead once for every cast before it). An angle bracket is type arguments when it follows
   * a name directly ({@code List<String>}; {@code a<b} is counted too); those opened inside a
   * parenthesis end with it.
   */
  private static final class Scan {
    private final String t;
    private final boolean drl;
    private int line = 1;
    private int depth;
    private int angles;
    private int[] anglesOutside = new int[16];

    /** The cast run of each open parenthesis: how many casts directly before it. */
    private int[] castsAt = new int[16];

    /** The cast runs of the open parentheses, summed: their content is parsed once per cast. */
    private int casts;

    /** The cast run of the parenthesis that closed last. */
    private int closedCasts;

    private boolean afterClose;
    private int tooDeepAt;
    private int overBudgetAt;
    private int longNameAt;
    private int nameLength;
    private long cost;

    Scan(String t, boolean drl) {
      this.t = t;
      this.drl = drl;
    }

    void run() {
      int n = t.length();
      for (int i = 0; i < n; i++) {
        char c = t.charAt(i);
        int skip = skip(i, c);
        if (skip > i) {
          line += newlines(t, i, skip);
          i = skip - 1;
          nameLength = 0;
          if (c != '/') {
            afterClose = false; // a string or character literal
          }
          continue;
        }
        if (Character.isJavaIdentifierPart(c)) {
          if (++nameLength > MAX_NAME && longNameAt == 0) {
            longNameAt = line;
          }
        } else {
          nameLength = 0;
        }
        if (c == '\n') {
          line++;
          continue;
        }
        if (Character.isWhitespace(c)) {
          continue;
        }
        if (c == '(' || c == '[') {
          int run = afterClose && c == '(' ? closedCasts + 1 : 0;
          afterClose = false;
          open(run);
          if (depth == anglesOutside.length) {
            anglesOutside = java.util.Arrays.copyOf(anglesOutside, depth * 2);
            castsAt = java.util.Arrays.copyOf(castsAt, depth * 2);
          }
          anglesOutside[depth] = angles;
          castsAt[depth] = run;
          casts += run;
          if (++depth > MAX_DEPTH && tooDeepAt == 0) {
            tooDeepAt = line;
          }
        } else if (c == ')' || c == ']') {
          if (depth > 0) {
            angles = anglesOutside[--depth];
            closedCasts = castsAt[depth];
            casts -= closedCasts;
          }
          afterClose = c == ')';
        } else if (c == '<' && typeArguments(i)) {
          afterClose = false;
          open(0);
          angles++;
        } else if (c == '>' && angles > anglesOutside(depth) && closesAngle(i)) {
          angles--;
        } else if (!(c == '-' || c == '+' || c == '!' || c == '~')) {
          afterClose = false; // an operand, or an operator: the run of casts ends
        }
      }
    }

    private void open(int run) {
      int n = depth + angles + casts + run;
      cost = saturated(cost + POW3[Math.min(n, POW3.length - 1)]);
      if (cost > MAX_COST && overBudgetAt == 0) {
        overBudgetAt = line;
      }
    }

    private int anglesOutside(int d) {
      return d == 0 ? 0 : anglesOutside[d];
    }

    /** {@code <} right after a name or a dot, not {@code <=} or {@code <<}. */
    private boolean typeArguments(int i) {
      if (i == 0 || i + 1 >= t.length()) {
        return false;
      }
      char before = t.charAt(i - 1);
      char after = t.charAt(i + 1);
      return (Character.isJavaIdentifierPart(before) || before == '.')
          && after != '='
          && after != '<';
    }

    /** {@code >} that is not part of {@code ->} or {@code >=}. */
    private boolean closesAngle(int i) {
      return (i == 0 || t.charAt(i - 1) != '-') && (i + 1 >= t.length() || t.charAt(i + 1) != '=');
    }

    /** The end of the comment or literal that starts at {@code i}, or -1. */
    private int skip(int i, char c) {
      int n = t.length();
      if (c == '/' && i + 1 < n && t.charAt(i + 1) == '/') {
        return lineEnd(t, i);
      }
      if (c == '/' && i + 1 < n && t.charAt(i + 1) == '*') {
        int end = t.indexOf("*/", i + 2);
        return end < 0 ? -1 : end + 2;
      }
      if (drl) {
        return c == '"' || c == '\'' ? quoted(t, i, c, DRL_ESCAPES, true) : -1;
      }
      if (c == '"' && t.startsWith("\"\"\"", i) && textBlockOpens(t, i + 3)) {
        return textBlockEnd(t, i + 3);
      }
      if (c == '"') {
        return quoted(t, i, c, JAVA_ESCAPES, false);
      }
      return c == '\'' ? charLiteral(t, i) : -1;
    }
  }

  /**
   * What the checks of one rule set have spent on parsing: shared by the lint and the check of the
   * compiled code, which parse the same code.
   */
  static final class Budget {
    private long spent;
    private boolean exhausted;

    /** What became of a fragment's charge. */
    enum Charge {
      /** Within the budget: parse it. */
      PARSE,
      /** This fragment took the set past the budget: refuse it, unparsed. */
      REFUSE,
      /** The set is past the budget already (and refused): skip it, unparsed. */
      SKIP
    }

    /** Charges a fragment's {@link #cost}. */
    synchronized Charge charge(long cost) {
      if (exhausted) {
        return Charge.SKIP;
      }
      spent = saturated(spent + cost);
      if (spent > MAX_COST) {
        exhausted = true;
        return Charge.REFUSE;
      }
      return Charge.PARSE;
    }

    /** What was spent so far (for tests). */
    synchronized long spent() {
      return spent;
    }
  }

  private static long saturated(long v) {
    return v < 0 || v > Long.MAX_VALUE / 4 ? Long.MAX_VALUE / 4 : v;
  }

  private static int lineEnd(String t, int i) {
    int end = t.indexOf('\n', i);
    return end < 0 ? t.length() : end;
  }

  private static int newlines(String t, int from, int to) {
    int k = 0;
    for (int i = from; i < to; i++) {
      if (t.charAt(i) == '\n') {
        k++;
      }
    }
    return k;
  }

  /**
   * The end (exclusive) of the string that opens at {@code i} with {@code q}; -1 when it does not
   * close, runs past a line end where that is not allowed, or holds an escape not in {@code
   * escapes}: the lexer would fail there and read on as code.
   */
  private static int quoted(String t, int i, char q, String escapes, boolean multiLine) {
    int n = t.length();
    for (int j = i + 1; j < n; j++) {
      char c = t.charAt(j);
      if (c == '\\') {
        if (j + 1 >= n || escapes.indexOf(t.charAt(j + 1)) < 0) {
          return -1;
        }
        j++;
      } else if (c == q) {
        return j + 1;
      } else if (!multiLine && (c == '\n' || c == '\r')) {
        return -1;
      }
    }
    return -1;
  }

  /** The end of a Java character literal at {@code i} ({@code 'x'}, {@code '\n'}); -1 if none. */
  private static int charLiteral(String t, int i) {
    int n = t.length();
    int j = i + 1;
    if (j >= n || t.charAt(j) == '\'' || t.charAt(j) == '\n' || t.charAt(j) == '\r') {
      return -1;
    }
    if (t.charAt(j) == '\\') {
      if (j + 1 >= n || JAVA_ESCAPES.indexOf(t.charAt(j + 1)) < 0) {
        return -1;
      }
      j += 2;
      // the rest of an octal or unicode escape: digits, letters, no quote
      while (j < n && j < i + 8 && Character.isLetterOrDigit(t.charAt(j))) {
        j++;
      }
    } else {
      j++;
    }
    return j < n && t.charAt(j) == '\'' ? j + 1 : -1;
  }

  /** Whether {@code """} before {@code i} opens a text block: blanks, then a line end. */
  private static boolean textBlockOpens(String t, int i) {
    int n = t.length();
    while (i < n && (t.charAt(i) == ' ' || t.charAt(i) == '\t' || t.charAt(i) == '\f')) {
      i++;
    }
    return i < n && (t.charAt(i) == '\n' || t.charAt(i) == '\r');
  }

  /** The end of a text block whose content starts at {@code i}; -1 if it does not close. */
  private static int textBlockEnd(String t, int i) {
    int n = t.length();
    for (int j = i; j < n; j++) {
      char c = t.charAt(j);
      if (c == '\\') {
        j++;
      } else if (c == '"' && t.startsWith("\"\"\"", j)) {
        return j + 3;
      }
    }
    return -1;
  }
}
