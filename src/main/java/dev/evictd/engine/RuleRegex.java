package dev.evictd.engine;

import com.google.re2j.Matcher;
import com.google.re2j.Pattern;
import com.google.re2j.PatternSyntaxException;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;

/**
 * Regular expressions for rules, on RE2/J: matching takes time linear in the input whatever the
 * pattern, so no pattern can backtrack for ever. The DRL {@code matches} operator runs here (see
 * {@link Re2ConstraintBuilder}); {@code String.matches}, {@code replaceAll}, {@code split} and
 * {@code java.util.regex} are refused by the policy lint, and rules call these methods instead. RE2
 * syntax has no back-references or look-around.
 */
public final class RuleRegex {
  /** Compiled patterns kept (cleared when full: rules use a handful). */
  private static final int CACHE_LIMIT = 256;

  /** Longest pattern accepted: RE2 compiles in time and memory linear in the pattern. */
  static final int MAX_PATTERN_LENGTH = 4_096;

  private static final Map<String, Pattern> CACHE = new ConcurrentHashMap<>();

  private RuleRegex() {}

  /** Whether the whole of {@code text} matches {@code regex} (false for a null text). */
  public static boolean matches(CharSequence text, String regex) {
    return text != null && compile(regex).matcher(text).matches();
  }

  /** Whether some part of {@code text} matches {@code regex} (false for a null text). */
  public static boolean find(CharSequence text, String regex) {
    return text != null && compile(regex).matcher(text).find();
  }

  /** {@code text} with every match of {@code regex} replaced ({@code $1} names a group). */
  public static String replaceAll(CharSequence text, String regex, String replacement) {
    Matcher m = compile(regex).matcher(text);
    return m.replaceAll(replacement);
  }

  /** {@code text} split around the matches of {@code regex} (trailing empty strings dropped). */
  public static List<String> split(CharSequence text, String regex) {
    return new ArrayList<>(List.of(compile(regex).split(text.toString())));
  }

  /**
   * The syntax error of a pattern RE2 does not accept, or null when it compiles (the policy lint
   * checks literal patterns with it).
   */
  public static String syntaxError(String regex) {
    try {
      compile(regex);
      return null;
    } catch (IllegalArgumentException e) {
      return e.getMessage() == null
          ? "not an RE2 pattern"
          : e.getMessage().lines().findFirst().get();
    }
  }

  /**
   * A pattern written for java.util.regex with its escapes of a backslash, u and four hex digits in
   * RE2's form (backslash, x{XXXX}): the one escape operators commonly use that RE2 spells
   * differently.
   */
  static String javaEscapes(String regex) {
    if (regex.indexOf('\\') < 0) {
      return regex;
    }
    StringBuilder sb = new StringBuilder(regex.length());
    for (int i = 0; i < regex.length(); i++) {
      char c = regex.charAt(i);
      if (c == '\\' && i + 1 < regex.length()) {
        char n = regex.charAt(i + 1);
        if (n == 'u'
            && i + 6 <= regex.length()
            && regex.substring(i + 2, i + 6).chars().allMatch(h -> Character.digit(h, 16) >= 0)) {
          sb.append("\\x{").append(regex, i + 2, i + 6).append('}');
          i += 5;
        } else {
          sb.append(c).append(n);
          i++;
        }
      } else {
        sb.append(c);
      }
    }
    return sb.toString();
  }

  static Pattern compile(String regex) {
    if (regex == null) {
      throw new IllegalArgumentException("regular expression is null");
    }
    if (regex.length() > MAX_PATTERN_LENGTH) {
      throw new IllegalArgumentException(
          "regular expression of "
              + regex.length()
              + " characters (at most "
              + MAX_PATTERN_LENGTH
              + ")");
    }
    Pattern p = CACHE.get(regex);
    if (p == null) {
      try {
        p = Pattern.compile(javaEscapes(regex));
      } catch (PatternSyntaxException e) {
        throw new IllegalArgumentException(
            "not an RE2 regular expression: " + e.getDescription() + ": " + e.getPattern());
      }
      if (CACHE.size() >= CACHE_LIMIT) {
        CACHE.clear();
      }
      CACHE.put(regex, p);
    }
    return p;
  }
}
