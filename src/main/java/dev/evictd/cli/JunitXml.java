package dev.evictd.cli;

import dev.evictd.api.ConfigException;
import dev.evictd.config.IoErrors;
import dev.evictd.fixture.FixtureResult;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;

/**
 * A JUnit XML report of a fixture run: one testcase per fixture, failures carrying the first
 * mismatch.
 */
final class JunitXml {
  private record Case(String classname, String name, double seconds, String kind, String message) {}

  private final List<Case> cases = new ArrayList<>();

  void add(FixtureResult r) {
    String kind =
        switch (r.status()) {
          case PASSED -> null;
          case FAILED -> "failure";
          case ERROR -> "error";
        };
    cases.add(
        new Case(
            r.file().toString(),
            r.name(),
            r.millis() / 1000.0,
            kind,
            r.mismatch() == null ? null : r.mismatch().toString()));
  }

  void error(Path file, String name, String message, long millis) {
    cases.add(new Case(file.toString(), name, millis / 1000.0, "error", message));
  }

  void write(Path file) {
    long failures = cases.stream().filter(c -> "failure".equals(c.kind())).count();
    long errors = cases.stream().filter(c -> "error".equals(c.kind())).count();
    double time = cases.stream().mapToDouble(Case::seconds).sum();
    StringBuilder sb = new StringBuilder("<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n");
    sb.append(
        String.format(
            java.util.Locale.ROOT,
            "<testsuite name=\"evictd fixtures\" tests=\"%d\" failures=\"%d\" errors=\"%d\" skipped=\"0\" time=\"%.3f\">%n",
            cases.size(),
            failures,
            errors,
            time));
    for (Case c : cases) {
      sb.append(
          String.format(
              java.util.Locale.ROOT,
              "  <testcase classname=\"%s\" name=\"%s\" time=\"%.3f\"",
              esc(c.classname()),
              esc(c.name()),
              c.seconds()));
      if (c.kind() == null) {
        sb.append("/>\n");
      } else {
        sb.append(">\n    <")
            .append(c.kind())
            .append(" message=\"")
            .append(esc(c.message()))
            .append("\">")
            .append(esc(c.message()))
            .append("</")
            .append(c.kind())
            .append(">\n  </testcase>\n");
      }
    }
    sb.append("</testsuite>\n");
    try {
      Path parent = file.toAbsolutePath().getParent();
      if (parent != null) {
        Files.createDirectories(parent);
      }
      Files.writeString(file, sb.toString(), StandardCharsets.UTF_8);
    } catch (IOException e) {
      throw new ConfigException("--junit-xml " + file + ": " + IoErrors.cannotWrite(file, e));
    }
  }

  /** XML-escapes text, dropping characters XML 1.0 cannot carry. */
  static String esc(String s) {
    if (s == null) {
      return "";
    }
    StringBuilder sb = new StringBuilder(s.length());
    for (int i = 0; i < s.length(); i++) {
      char c = s.charAt(i);
      switch (c) {
        case '<' -> sb.append("&lt;");
        case '>' -> sb.append("&gt;");
        case '&' -> sb.append("&amp;");
        case '"' -> sb.append("&quot;");
        case '\'' -> sb.append("&apos;");
        default -> {
          if (c >= 0x20 || c == '\n' || c == '\t' || c == '\r') {
            sb.append(c);
          }
        }
      }
    }
    return sb.toString();
  }
}
