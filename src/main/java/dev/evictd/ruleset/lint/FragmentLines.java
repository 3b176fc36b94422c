package dev.evictd.ruleset.lint;

/**
 * The file lines of one fragment of rule code: Drools' parser keeps no positions, so the line of a
 * finding is found by searching the fragment's text for the word it names.
 */
final class FragmentLines {
  private final String text;
  private final int firstLine;
  private int cursor;

  FragmentLines(String text, int firstLine) {
    this.text = text;
    this.firstLine = firstLine;
  }

  /**
   * The file line of a finding at {@code needle} (the word as written): Drools' parser keeps no
   * positions, so the fragment's text is searched, from where the previous finding was (nodes are
   * visited in source order), else from its start.
   */
  int lineOf(String needle) {
    int at = needle.isEmpty() ? -1 : indexOfWord(needle, cursor);
    if (at < 0 && !needle.isEmpty()) {
      at = indexOfWord(needle, 0);
    }
    if (at >= 0) {
      cursor = at;
    }
    int pos = at >= 0 ? at : cursor;
    int line = firstLine;
    for (int i = 0; i < pos && i < text.length(); i++) {
      if (text.charAt(i) == '\n') {
        line++;
      }
    }
    return line;
  }

  private int indexOfWord(String word, int from) {
    for (int i = text.indexOf(word, from); i >= 0; i = text.indexOf(word, i + 1)) {
      boolean start = i == 0 || !Character.isJavaIdentifierPart(text.charAt(i - 1));
      int end = i + word.length();
      boolean stop = end >= text.length() || !Character.isJavaIdentifierPart(text.charAt(end));
      if (start && stop) {
        return i;
      }
    }
    return -1;
  }
}
