package dev.evictd.ruleset;

import static org.assertj.core.api.Assertions.assertThat;

import dev.evictd.engine.RuleSource;
import java.io.OutputStream;
import java.net.URL;
import java.net.URLClassLoader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.Callable;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.jar.JarEntry;
import java.util.jar.JarOutputStream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** The packaged default rules read from a jar, as the packaged evictd reads them. */
class RuleSetReaderJarTest {
  @TempDir Path dir;

  @Test
  void threadsReadingTheDefaultsFromAJarAtOnceAllGetThem() throws Exception {
    Path jar = dir.resolve("rules.jar");
    try (OutputStream o = Files.newOutputStream(jar);
        JarOutputStream j = new JarOutputStream(o)) {
      j.putNextEntry(new JarEntry(RuleCompiler.DEFAULT_RULES_RESOURCE + "/"));
      for (String name : List.of("a.drl", "b.drl")) {
        j.putNextEntry(new JarEntry(RuleCompiler.DEFAULT_RULES_RESOURCE + "/" + name));
        j.write(("package p; // " + name + "\n").getBytes(StandardCharsets.UTF_8));
      }
    }
    try (URLClassLoader loader = new URLClassLoader(new URL[] {jar.toUri().toURL()}, null)) {
      ExecutorService pool = Executors.newFixedThreadPool(4);
      try {
        List<Callable<List<RuleSource>>> reads = new ArrayList<>();
        for (int i = 0; i < 200; i++) {
          reads.add(() -> RuleSetReader.readDefault(loader));
        }
        for (Future<List<RuleSource>> f : pool.invokeAll(reads)) {
          assertThat(f.get())
              .extracting(RuleSource::name, RuleSource::path)
              .containsExactly(
                  org.assertj.core.groups.Tuple.tuple("a.drl", "default:a.drl"),
                  org.assertj.core.groups.Tuple.tuple("b.drl", "default:b.drl"));
        }
      } finally {
        pool.shutdownNow();
      }
    }
  }

  /** What the reader gave for a jar's defaults, or its error's message. */
  private static Object read(Path jar) throws Exception {
    try (URLClassLoader loader = new URLClassLoader(new URL[] {jar.toUri().toURL()}, null)) {
      return RuleSetReader.readDefault(loader).stream()
          .map(s -> s.name() + "|" + s.path() + "|" + s.text())
          .toList();
    } catch (dev.evictd.api.RulesException e) {
      return e.getMessage();
    }
  }

  /**
   * The reference: the directory as a zip file system lists it (how the reader read it before),
   * each file's size and text checked as the reader checks them.
   */
  private static Object viaZipFileSystem(Path jar) throws Exception {
    try (java.nio.file.FileSystem fs =
        java.nio.file.FileSystems.newFileSystem(jar, (ClassLoader) null)) {
      Path d = fs.getPath("/" + RuleCompiler.DEFAULT_RULES_RESOURCE);
      List<Path> files;
      try (java.util.stream.Stream<Path> s = Files.list(d)) {
        files = s.filter(f -> f.getFileName().toString().endsWith(".drl")).sorted().toList();
      }
      if (files.isEmpty()) {
        return d + ": no .drl rule files";
      }
      List<String> out = new ArrayList<>();
      for (Path f : files) {
        try {
          String name = f.getFileName().toString();
          out.add(name + "|default:" + name + "|" + RuleSetReader.readText(f));
        } catch (dev.evictd.api.RulesException e) {
          return e.getMessage();
        }
      }
      return out;
    }
  }

  private Path jar(String name, List<String> entries, byte[] content) throws Exception {
    Path jar = dir.resolve(name);
    try (OutputStream o = Files.newOutputStream(jar);
        JarOutputStream j = new JarOutputStream(o)) {
      for (String e : entries) {
        j.putNextEntry(new JarEntry(e));
        if (!e.endsWith("/")) {
          j.write(
              content != null
                  ? content
                  : ("rule text of " + e + "\n").getBytes(StandardCharsets.UTF_8));
        }
      }
    }
    return jar;
  }

  @Test
  void readsAJarsDefaultsAsItsZipFileSystemListsThem() throws Exception {
    String d = RuleCompiler.DEFAULT_RULES_RESOURCE + "/";
    List<List<String>> jars =
        List.of(
            // unsorted, upper case and punctuation, files beside and below (the class loader finds
            // the directory by its own entry, as the build writes it)
            List.of(
                d,
                d + "z.drl",
                d + "B.drl",
                d + "a-b.drl",
                d + "a_b.drl",
                d + "a.drl",
                d + "\u00e9t\u00e9.drl",
                d + "notes.md",
                d + "x.drl.txt",
                d + "sub/",
                d + "sub/deep.drl",
                "other/c.drl",
                "evictd-rules2/d.drl",
                "e.drl"),
            List.of(d, d + "only.drl"),
            List.of(d, d + "notes.md", d + "sub/x.drl"), // none directly in it
            List.of(d, d + "sub/", d + "sub/x.drl", d + "y.drl"));
    int i = 0;
    for (List<String> entries : jars) {
      Path jar = jar("j" + i++ + ".jar", entries, null);
      assertThat(read(jar)).as(entries.toString()).isEqualTo(viaZipFileSystem(jar));
    }
    // what the checks of each file refuse, worded as before
    for (byte[] content : List.of(new byte[] {'a', (byte) 0xff, 'b'}, new byte[5 * 1024 * 1024])) {
      Path jar = jar("j" + i++ + ".jar", List.of(d, d + "a.drl"), content);
      assertThat(read(jar)).isInstanceOf(String.class).isEqualTo(viaZipFileSystem(jar));
    }
  }
}
