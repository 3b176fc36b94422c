package dev.evictd;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;

/**
 * The README and docs/ hold together: every relative link resolves (file and heading), the README
 * stays one sitting long, and its architecture table names exactly the packages there are.
 */
class DocsTest {
  private static final Pattern LINK = Pattern.compile("\\]\\(([^)\\s]+)\\)");
  private static final Pattern HEADING = Pattern.compile("(?m)^#{1,6} (.+)$");

  @Test
  void everyRelativeLinkOfTheReadmeAndDocsResolves() throws IOException {
    List<String> broken = new ArrayList<>();
    for (Path doc : documents()) {
      Matcher m = LINK.matcher(withoutCodeBlocks(Files.readString(doc)));
      while (m.find()) {
        String link = m.group(1);
        if (link.matches("^[a-z]+:.*")) {
          continue; // https:, mailto:
        }
        int hash = link.indexOf('#');
        String file = hash < 0 ? link : link.substring(0, hash);
        Path target = file.isEmpty() ? doc : doc.resolveSibling(file).normalize();
        if (!Files.exists(target)) {
          broken.add(doc + ": " + link + " (no file " + target + ")");
        } else if (hash >= 0 && !anchors(target).contains(link.substring(hash + 1))) {
          broken.add(doc + ": " + link + " (no such heading in " + target + ")");
        }
      }
    }
    assertThat(broken).as("links that do not resolve").isEmpty();
  }

  @Test
  void theReadmeIsOneSitting() throws IOException {
    assertThat(Files.readAllLines(Path.of("README.md"))).hasSizeLessThanOrEqualTo(400);
  }

  @Test
  void theArchitectureTableNamesEveryPackage() throws IOException {
    String readme = Files.readString(Path.of("README.md"));
    int from = readme.indexOf("\n## Architecture\n");
    assertThat(from).as("README has an Architecture section").isPositive();
    Set<String> listed = new TreeSet<>();
    Matcher row = Pattern.compile("(?m)^\\| `([a-z0-9]+)` \\|").matcher(readme.substring(from));
    while (row.find()) {
      listed.add(row.group(1));
    }
    Set<String> packages = new TreeSet<>();
    try (Stream<Path> dirs = Files.list(Path.of("src/main/java/dev/evictd"))) {
      dirs.filter(Files::isDirectory).forEach(d -> packages.add(d.getFileName().toString()));
    }
    assertThat(listed).isEqualTo(packages);
  }

  @Test
  void headingsBecomeGitHubAnchors() {
    assertThat(anchor("The eviction webhook (`docker/admission-webhook.yaml`)"))
        .isEqualTo("the-eviction-webhook-dockeradmission-webhookyaml");
    assertThat(anchor("Endpoints, start-up and signals"))
        .isEqualTo("endpoints-start-up-and-signals");
  }

  private static List<Path> documents() throws IOException {
    List<Path> docs = new ArrayList<>(List.of(Path.of("README.md"), Path.of("rules/README.md")));
    try (Stream<Path> files = Files.list(Path.of("docs"))) {
      files.filter(p -> p.toString().endsWith(".md")).sorted().forEach(docs::add);
    }
    return docs;
  }

  /** The anchors GitHub gives a Markdown file's headings (a repeated one gets -1, -2, ...). */
  private static Set<String> anchors(Path file) throws IOException {
    Set<String> anchors = new HashSet<>();
    if (!file.toString().endsWith(".md")) {
      return anchors;
    }
    Map<String, Integer> seen = new HashMap<>();
    Matcher h = HEADING.matcher(withoutCodeBlocks(Files.readString(file)));
    while (h.find()) {
      String a = anchor(h.group(1));
      int n = seen.merge(a, 1, Integer::sum) - 1;
      anchors.add(n == 0 ? a : a + "-" + n);
    }
    return anchors;
  }

  private static String anchor(String heading) {
    return heading
        .strip()
        .toLowerCase(Locale.ROOT)
        .replaceAll("[^\\p{L}\\p{N} _-]", "")
        .replace(' ', '-');
  }

  private static String withoutCodeBlocks(String markdown) {
    return markdown.replaceAll("(?s)\n```.*?\n```", "\n");
  }
}
