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
}
