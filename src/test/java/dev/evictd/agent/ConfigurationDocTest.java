package dev.evictd.agent;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;

/**
 * docs/configuration.md lists every configuration key as {@link AgentConfig}'s {@link Setting}s
 * declare it: the table between its markers is the one {@link #table()} makes (copy it from the
 * failure when a key changes).
 */
class ConfigurationDocTest {
  private static final Path DOC = Path.of("docs/configuration.md");
  private static final String BEGIN =
      "<!-- keys: made from AgentConfig's @Setting declarations -->";
  private static final String END = "<!-- /keys -->";

  /** The table of keys, in declaration order. */
  static String table() {
    StringBuilder b = new StringBuilder();
    b.append("| Key | Flag of `evictd run` | Meaning |\n|---|---|---|\n");
    for (ConfigKey k : ConfigKey.ALL) {
      String flag =
          k.setting().fileOnly()
              ? "(file only)"
              : "`" + k.flag() + (k.isSwitch() ? "" : " " + k.label()) + "`";
      String help = k.help();
      if (k.setting().group().equals("kubelet")) {
        help += " Also a flag of `evictd capture`.";
      }
      b.append("| `")
          .append(k.key())
          .append("` | ")
          .append(flag)
          .append(" | ")
          .append(help.replace("|", "\\|"))
          .append(" |\n");
    }
    return b.toString();
  }

  @Test
  void theDocumentListsEveryKeyAsDeclared() throws IOException {
    String doc = Files.readString(DOC);
    int from = doc.indexOf(BEGIN);
    int to = doc.indexOf(END);
    assertThat(from).as("%s has the marker %s", DOC, BEGIN).isNotNegative();
    assertThat(to).as("%s has the marker %s", DOC, END).isGreaterThan(from);
    assertThat(doc.substring(from + BEGIN.length(), to).strip())
        .as("the table of keys in %s", DOC)
        .isEqualTo(table().strip());
  }
}
