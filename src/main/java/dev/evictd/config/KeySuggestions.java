package dev.evictd.config;

import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Set;

/**
 * The hint after an unknown key in a configuration file: the known key it is most likely a typo of
 * ({@code (did you mean "interval"?)}), else the known keys when there are few.
 */
public final class KeySuggestions {
  private KeySuggestions() {}

  /**
   * Keys longer than this are no typo of a known key: no edit distance (it costs length x length).
   */
  private static final int MAX_SUGGESTION_KEY = 64;

  /** Known keys are listed only for small schemas (KubeletConfiguration has about a hundred). */
  private static final int MAX_LISTED_KEYS = 12;

  /** The hint for the unknown {@code key} among {@code allowed}; empty when there is none. */
  public static String suggestion(String key, Set<String> allowed) {
    if (key.length() > MAX_SUGGESTION_KEY) {
      return "";
    }
    String best = null;
    int bestDist = Integer.MAX_VALUE;
    for (String a : new java.util.TreeSet<>(allowed)) {
      int d =
          editDistance(
              key.toLowerCase(java.util.Locale.ROOT), a.toLowerCase(java.util.Locale.ROOT));
      if (d < bestDist) {
        bestDist = d;
        best = a;
      }
    }
    if (best != null && bestDist <= Math.max(2, key.length() / 4)) {
      return " (did you mean \"" + best + "\"?)";
    }
    if (allowed.size() > MAX_LISTED_KEYS) {
      return "";
    }
    List<String> sorted = new ArrayList<>(allowed);
    Collections.sort(sorted);
    return " (known keys: " + String.join(", ", sorted) + ")";
  }

  /**
   * Edit distance counting a swap of two adjacent letters as one edit (optimal string alignment).
   */
  private static int editDistance(String a, String b) {
    int[][] d = new int[a.length() + 1][b.length() + 1];
    for (int i = 0; i <= a.length(); i++) {
      d[i][0] = i;
    }
    for (int j = 0; j <= b.length(); j++) {
      d[0][j] = j;
    }
    for (int i = 1; i <= a.length(); i++) {
      for (int j = 1; j <= b.length(); j++) {
        int cost = a.charAt(i - 1) == b.charAt(j - 1) ? 0 : 1;
        d[i][j] = Math.min(Math.min(d[i - 1][j] + 1, d[i][j - 1] + 1), d[i - 1][j - 1] + cost);
        if (i > 1
            && j > 1
            && a.charAt(i - 1) == b.charAt(j - 2)
            && a.charAt(i - 2) == b.charAt(j - 1)) {
          d[i][j] = Math.min(d[i][j], d[i - 2][j - 2] + 1);
        }
      }
    }
    return d[a.length()][b.length()];
  }
}
