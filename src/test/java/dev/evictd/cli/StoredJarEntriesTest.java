package dev.evictd.cli;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.FileTime;
import java.security.CodeSigner;
import java.util.ArrayList;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.jar.Attributes;
import java.util.jar.JarEntry;
import java.util.jar.JarFile;
import java.util.jar.Manifest;
import java.util.zip.ZipEntry;
import java.util.zip.ZipFile;
import java.util.zip.ZipOutputStream;
import org.eclipse.jdt.internal.compiler.Compiler;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class StoredJarEntriesTest {

  @TempDir Path dir;

  @Test
  void storesEveryEntryButTheClassFilesAndKeepsTheirBytesAndOrder() throws IOException {
    Path jar = dir.resolve("lib.jar");
    Map<String, byte[]> written = new LinkedHashMap<>();
    written.put("META-INF/MANIFEST.MF", manifest());
    written.put(
        "META-INF/services/org.slf4j.spi.SLF4JServiceProvider", "a.B\n".repeat(50).getBytes());
    written.put("a/", new byte[0]);
    written.put("a/B.class", "not really a class, but compressible ".repeat(40).getBytes());
    written.put("a/b.properties", "k=v\n".repeat(100).getBytes());
    written.put("META-INF/jandex.idx", "index ".repeat(20_000).getBytes()); // over 64 KiB
    writeDeflated(jar, written);

    assertThat(StoredJarEntries.rewrite(jar)).isTrue();

    try (ZipFile zip = new ZipFile(jar.toFile())) {
      List<String> names = new ArrayList<>();
      for (ZipEntry e : Collections.list(zip.entries())) {
        names.add(e.getName());
        try (InputStream in = zip.getInputStream(e)) {
          assertThat(in.readAllBytes()).as(e.getName()).isEqualTo(written.get(e.getName()));
        }
        boolean resource =
            !e.isDirectory() && !e.getName().endsWith(".class") && e.getSize() <= 64 * 1024;
        assertThat(e.getMethod())
            .as(e.getName())
            .isEqualTo(resource ? ZipEntry.STORED : ZipEntry.DEFLATED);
      }
      assertThat(names).containsExactlyElementsOf(written.keySet());
    }
    try (JarFile jf = new JarFile(jar.toFile())) {
      assertThat(jf.getManifest().getMainAttributes().getValue("Class-Path"))
          .isEqualTo("lib/x.jar");
    }
  }

  @Test
  void leavesAJarWhoseResourcesAreStoredAsItIs() throws IOException {
    Path jar = dir.resolve("lib.jar");
    writeDeflated(jar, Map.of("META-INF/MANIFEST.MF", manifest()));
    assertThat(StoredJarEntries.rewrite(jar)).isTrue();
    FileTime before = FileTime.fromMillis(1_000_000_000_000L);
    Files.setLastModifiedTime(jar, before);
    byte[] bytes = Files.readAllBytes(jar);

    assertThat(StoredJarEntries.rewrite(jar)).isFalse();

    assertThat(Files.readAllBytes(jar)).isEqualTo(bytes);
    assertThat(Files.getLastModifiedTime(jar)).isEqualTo(before);
  }

  @Test
  void aSignedJarStillVerifies() throws Exception {
    // ECJ is a signed jar of the class path (the rule compiler's): its signatures cover the
    // entries' bytes,
    // which do not change
    Path ecj = Path.of(Compiler.class.getProtectionDomain().getCodeSource().getLocation().toURI());
    Path jar = dir.resolve("ecj.jar");
    Files.copy(ecj, jar);

    assertThat(StoredJarEntries.rewrite(jar)).isTrue();

    int signedClasses = 0;
    try (JarFile jf = new JarFile(jar.toFile(), true)) {
      for (JarEntry e : Collections.list(jf.entries())) {
        try (InputStream in = jf.getInputStream(e)) {
          in.readAllBytes(); // verifies the entry against its digest; a mismatch throws
        }
        CodeSigner[] signers = e.getCodeSigners();
        if (e.getName().endsWith(".class") && signers != null && signers.length > 0) {
          signedClasses++;
        }
      }
    }
    assertThat(signedClasses).isGreaterThan(100);
  }

  @Test
  void aFileThatIsNotAJarFailsTheBuildNamingIt() throws IOException {
    Path jar = dir.resolve("broken.jar");
    Files.writeString(jar, "not a zip");

    assertThatThrownBy(() -> StoredJarEntries.rewrite(jar))
        .isInstanceOf(IOException.class)
        .hasMessageStartingWith(jar + ": cannot store its entries");
    assertThat(Files.readString(jar)).isEqualTo("not a zip");
    assertThat(dir.resolve("broken.jar.tmp")).doesNotExist();
  }

  private static byte[] manifest() throws IOException {
    Manifest m = new Manifest();
    m.getMainAttributes().put(Attributes.Name.MANIFEST_VERSION, "1.0");
    m.getMainAttributes().put(Attributes.Name.CLASS_PATH, "lib/x.jar");
    java.io.ByteArrayOutputStream out = new java.io.ByteArrayOutputStream();
    m.write(out);
    return out.toByteArray();
  }

  private static void writeDeflated(Path jar, Map<String, byte[]> entries) throws IOException {
    try (OutputStream file = Files.newOutputStream(jar);
        ZipOutputStream out = new ZipOutputStream(file)) {
      for (Map.Entry<String, byte[]> e : entries.entrySet()) {
        ZipEntry entry = new ZipEntry(e.getKey());
        entry.setMethod(ZipEntry.DEFLATED);
        out.putNextEntry(entry);
        out.write(e.getValue());
        out.closeEntry();
      }
    }
    assertThat(new String(Files.readAllBytes(jar), StandardCharsets.ISO_8859_1)).startsWith("PK");
  }
}
