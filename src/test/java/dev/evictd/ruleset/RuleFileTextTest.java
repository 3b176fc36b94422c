package dev.evictd.ruleset;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.evictd.api.RulesException;
import dev.evictd.engine.RuleSet;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** How the bytes of a rule file become its text: UTF-8, a leading byte-order mark dropped. */
class RuleFileTextTest {
  static final String SAFE =
      "package dev.evictd.rules;\nimport dev.evictd.api.*;\nrule \"r\" when PodFact() then end\n";
  static final byte[] BOM = {(byte) 0xEF, (byte) 0xBB, (byte) 0xBF};

  static byte[] concat(byte[]... parts) {
    ByteArrayOutputStream out = new ByteArrayOutputStream();
    for (byte[] p : parts) {
      out.writeBytes(p);
    }
    return out.toByteArray();
  }

  static Path set(Path parent, String name, byte[] drl) throws IOException {
    Path dir = Files.createDirectory(parent.resolve(name));
    Files.write(dir.resolve("r.drl"), drl);
    return dir;
  }

  @Test
  void aByteOrderMarkAtTheStartIsNoPartOfTheTextAndTheSetIsTheSame(@TempDir Path tmp)
      throws IOException {
    Path plain = set(tmp, "plain", SAFE.getBytes(StandardCharsets.UTF_8));
    Path marked = set(tmp, "bom", concat(BOM, SAFE.getBytes(StandardCharsets.UTF_8)));

    assertThat(RuleCompiler.read(marked)).singleElement().extracting("text").isEqualTo(SAFE);
    RuleSet withBom = RuleCompiler.compile(marked);
    assertThat(withBom.sha256()).isEqualTo(RuleCompiler.compile(plain).sha256());
    // one file checked on its own reads it the same way
    assertThat(
            RuleCompiler.checkFile(marked.resolve("r.drl"), RuleCompiler.Options.STRICT).sha256())
        .isEqualTo(withBom.sha256());
    // a pin taken from the file without the mark holds for the file with it
    assertThat(RuleCompiler.compile(marked, RuleCompiler.Options.STRICT.withPin(withBom.sha256())))
        .isNotNull();
  }

  @Test
  void aByteOrderMarkAnywhereElseIsStillText(@TempDir Path tmp) throws IOException {
    // only the first three bytes are a mark; a second one is U+FEFF in the text
    Path twice = set(tmp, "twice", concat(BOM, BOM, SAFE.getBytes(StandardCharsets.UTF_8)));
    assertThat(RuleCompiler.read(twice))
        .singleElement()
        .extracting("text")
        .isEqualTo("\uFEFF" + SAFE);
    // which the lint refuses: invisible, and read as a space by its parser, as part of a name by
    // the Java compiler
    assertThatThrownBy(() -> RuleCompiler.compile(twice))
        .isInstanceOf(RulesException.class)
        .hasMessage(
            twice.resolve("r.drl")
                + ":1: refused: U+FEFF (zero-width character (hides code from review))");
  }

  @Test
  void aUtf16FileIsRefusedWithWhatToDo(@TempDir Path tmp) throws IOException {
    byte[] le = concat(new byte[] {(byte) 0xFF, (byte) 0xFE}, SAFE.getBytes("UTF-16LE"));
    byte[] be = concat(new byte[] {(byte) 0xFE, (byte) 0xFF}, SAFE.getBytes("UTF-16BE"));
    for (Path dir : new Path[] {set(tmp, "le", le), set(tmp, "be", be)}) {
      assertThatThrownBy(() -> RuleCompiler.compile(dir))
          .isInstanceOf(RulesException.class)
          .hasMessage(
              dir.resolve("r.drl")
                  + ":1: a UTF-16 text file (it starts with a UTF-16 byte-order mark): rule files"
                  + " are UTF-8, save it as UTF-8");
    }
    // without a mark, UTF-16 of ASCII text is text with NUL bytes
    Path bare = set(tmp, "bare", SAFE.getBytes("UTF-16LE"));
    assertThatThrownBy(() -> RuleCompiler.compile(bare))
        .isInstanceOf(RulesException.class)
        .hasMessage(bare.resolve("r.drl") + ":1: not a text file (NUL byte)");
  }

  @Test
  void bytesThatAreNotUtf8AndNulBytesAreRefusedWithTheirLine(@TempDir Path tmp) throws IOException {
    byte[] head = SAFE.getBytes(StandardCharsets.UTF_8);
    Path latin1 =
        set(
            tmp,
            "latin1",
            concat(
                head, "// caf".getBytes(StandardCharsets.UTF_8), new byte[] {(byte) 0xE9, '\n'}));
    assertThatThrownBy(() -> RuleCompiler.compile(latin1))
        .isInstanceOf(RulesException.class)
        .hasMessage(
            latin1.resolve("r.drl")
                + ":4: not a UTF-8 text file (byte 0xE9 at offset "
                + (head.length + 6)
                + ")");
    Path nul = set(tmp, "nul", concat(head, new byte[] {'\n', 0, '\n'}));
    assertThatThrownBy(() -> RuleCompiler.compile(nul))
        .isInstanceOf(RulesException.class)
        .hasMessage(nul.resolve("r.drl") + ":5: not a text file (NUL byte)");
  }
}
