package dev.evictd.ruleset;

import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.Assertions.assertThrows;

import dev.evictd.api.RulesException;
import dev.evictd.engine.RuleSet;
import dev.evictd.engine.RuleSource;
import dev.evictd.ruleset.lint.ModelCodeCheck;
import java.io.ByteArrayInputStream;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.stream.Stream;
import java.util.zip.ZipEntry;
import java.util.zip.ZipInputStream;
import java.util.zip.ZipOutputStream;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.objectweb.asm.ClassWriter;
import org.objectweb.asm.MethodVisitor;
import org.objectweb.asm.Opcodes;

/**
 * Operators' rule sets as executable models: built once in a real child process, cached by the
 * SHA-256 of their sources, loaded from the cache after, and every cached entry checked on every
 * load: its owner and mode, its digest, its sources' hash, its lint result, and each class with
 * ASM. Whatever is refused is built again or compiled as before; a child that fails or runs too
 * long is killed and the set compiled in the process.
 */
class ModelCacheTest {
  static final Path QOS = Path.of("fixtures/examples/qos-ranking/rules");
  static final Path PSI = Path.of("fixtures/examples/psi-eviction/rules");

  private static RuleCompiler.Options options(Path cache) {
    return RuleCompiler.Options.STRICT.withCache(RuleSetCache.at(cache));
  }

  private static Path onlyModel(Path cache) throws IOException {
    try (Stream<Path> s = Files.list(cache)) {
      List<Path> entries = s.filter(p -> p.toString().endsWith(".model")).toList();
      assertThat(entries).hasSize(1);
      return entries.get(0);
    }
  }

  private static String sha(Path dir) {
    return RuleCompiler.sha256(RuleCompiler.read(dir));
  }

  @AfterEach
  void noChildIsLeftRunning() {
    assertThat(children()).isEmpty();
  }

  /** This JVM's child processes that build models. */
  static List<ProcessHandle> children() {
    return ProcessHandle.current()
        .descendants()
        .filter(
            p ->
                p.info().arguments().stream()
                    .flatMap(java.util.Arrays::stream)
                    .anyMatch(a -> a.equals(ModelBuild.class.getName())))
        .toList();
  }

  @Test
  void anOperatorsSetIsBuiltOnceInAChildProcessThenLoadedFromTheCache(@TempDir Path tmp)
      throws IOException {
    Path cache = tmp.resolve("cache");
    long before = ModelBuildChild.childBuilds();
    RuleSet first = RuleCompiler.compile(QOS, options(cache));
    assertThat(ModelBuildChild.childBuilds()).isEqualTo(before + 1);
    assertThat(PrebuiltModelParityTest.fromModel(first.kieBase())).isTrue();
    Path model = onlyModel(cache);
    assertThat(PosixFilePermissions.toString(Files.getPosixFilePermissions(model)))
        .isEqualTo("rw-r--r--");
    // the child left nothing behind it but the entries
    try (Stream<Path> s = Files.list(cache)) {
      assertThat(s.map(p -> p.getFileName().toString()))
          .allMatch(n -> n.endsWith(".model") || n.endsWith(".entry"))
          .hasSize(2);
    }

    RuleSet second = RuleCompiler.compile(QOS, options(cache));
    assertThat(ModelBuildChild.childBuilds()).isEqualTo(before + 1);
    assertThat(PrebuiltModelParityTest.fromModel(second.kieBase())).isTrue();
    assertThat(second.sha256()).isEqualTo(first.sha256()).isEqualTo(sha(QOS));
    assertThat(second.files()).isEqualTo(first.files());
    assertThat(RuleCompiler.ruleCount(second))
        .isEqualTo(RuleCompiler.ruleCount(RuleCompiler.compile(QOS)));
    // its lint result is there too: rules check answers without compiling
    assertThat(RuleCompiler.check(QOS, options(cache)).cached()).isTrue();
  }

  @Test
  void aSetTheChecksRefuseIsRefusedByTheChildWithTheCompilersOwnMessage(@TempDir Path tmp) {
    Path hostile = Path.of("src/test/resources/hostile-rules/process-runtime-fqn.drl");
    String fresh =
        assertThrows(
                RulesException.class,
                () -> RuleCompiler.compileFile(hostile, RuleCompiler.Options.STRICT))
            .getMessage();
    long before = ModelBuildChild.childBuilds();
    RulesException e =
        assertThrows(
            RulesException.class,
            () -> RuleCompiler.compileFile(hostile, options(tmp.resolve("cache"))));
    assertThat(ModelBuildChild.childBuilds()).isEqualTo(before + 1);
    assertThat(e.getMessage()).isEqualTo(fresh).contains("java.lang.Runtime");
  }

  @Test
  void aChildThatRunsTooLongIsKilledAndTheSetCompiledHere(@TempDir Path tmp) throws IOException {
    Duration was = ModelBuildChild.timeout;
    ModelBuildChild.timeout = Duration.ofMillis(200);
    RuleSet rs;
    try {
      rs = RuleCompiler.compile(QOS, options(tmp.resolve("cache")));
    } finally {
      ModelBuildChild.timeout = was;
    }
    assertThat(PrebuiltModelParityTest.fromModel(rs.kieBase())).isFalse();
    assertThat(children()).isEmpty();
    try (Stream<Path> s = Files.list(tmp.resolve("cache"))) {
      // no model, no build directory left; the compiled set's lint result is stored as before
      assertThat(s.map(p -> p.getFileName().toString())).allMatch(n -> n.endsWith(".entry"));
    }
  }

  @Test
  void aSetThatDeclaresTypesGetsAModelWhoseTypesAreCheckedAsAnyClass(@TempDir Path tmp)
      throws IOException {
    Path cache = tmp.resolve("cache");
    RuleSet rs = RuleCompiler.compile(PSI, RuleCompiler.Options.STRICT.withCache(inProcess(cache)));
    assertThat(PrebuiltModelParityTest.fromModel(rs.kieBase())).isTrue();
    ModelCache.Verified v = ModelCache.read(onlyModel(cache), "psi", sha(PSI));
    assertThat(v.model().drlOnly()).isNull();
    assertThat(v.model().classes()).containsKey("dev/evictd/rules/MemoryStallStreak.class");
    // the fact interfaces are allowed on the declared types' own classes only
    assertThat(ModelCodeCheck.check(v.model().classes(), "dev.evictd.rules"))
        .anyMatch(
            l -> l.contains("MemoryStallStreak.class: org.drools.base.factmodel.AccessibleFact"));
    assertThat(
            ModelCodeCheck.check(
                v.model().classes(),
                "dev.evictd.rules",
                Set.of("MemoryStallStreak", "PsiEvictionSelected")))
        .isEmpty();
    // and what a declared type's field initialiser runs is checked as any code
    String hostile =
        """
        package dev.evictd.rules;
        import dev.evictd.api.*;
        declare Spawned
            p : int = Runtime.getRuntime().availableProcessors()
        end
        rule "spawns"
        ruleflow-group "observe"
        when
            SyncClock()
        then
            insert(new Spawned());
        end
        """;
    Map<String, byte[]> classes = new TreeMap<>();
    PrebuiltModelWriter.generate(List.of(new RuleSource("d.drl", "d.drl", hostile)), classes);
    assertThat(ModelCodeCheck.check(classes, "dev.evictd.rules", Set.of("Spawned")))
        .anyMatch(l -> l.startsWith("dev/evictd/rules/Spawned.class: java.lang.Runtime"));
  }

  private static RuleSetCache inProcess(Path cache) {
    return RuleSetCache.at(cache).withModelBuilds(RuleSetCache.ModelBuilds.IN_PROCESS);
  }

  /** The verified entry of a set built in this process into {@code cache}. */
  private static byte[] built(Path cache) throws IOException {
    RuleCompiler.compile(QOS, RuleCompiler.Options.STRICT.withCache(inProcess(cache)));
    return Files.readAllBytes(onlyModel(cache));
  }

  @Test
  void anEntryGroupOrOthersCanWriteIsRefusedAndBuiltAgain(@TempDir Path tmp) throws IOException {
    Path cache = tmp.resolve("cache");
    built(cache);
    Path model = onlyModel(cache);
    assertThat(ModelCache.read(model, "qos", sha(QOS))).isNotNull();
    Files.setPosixFilePermissions(model, PosixFilePermissions.fromString("rw-rw-r--"));
    assertThat(ModelCache.read(model, "qos", sha(QOS))).isNull();
    Files.setPosixFilePermissions(model, PosixFilePermissions.fromString("rw-r--rw-"));
    assertThat(ModelCache.read(model, "qos", sha(QOS))).isNull();
    // the set still loads from a model, built afresh, and the entry is written anew
    RuleSet rs = RuleCompiler.compile(QOS, RuleCompiler.Options.STRICT.withCache(inProcess(cache)));
    assertThat(PrebuiltModelParityTest.fromModel(rs.kieBase())).isTrue();
    assertThat(PosixFilePermissions.toString(Files.getPosixFilePermissions(model)))
        .isEqualTo("rw-r--r--");
    assertThat(ModelCache.read(model, "qos", sha(QOS))).isNotNull();
  }

  @Test
  void anEntryInADirectoryOthersCanWriteIsRefused(@TempDir Path tmp) throws IOException {
    Path cache = tmp.resolve("cache");
    built(cache);
    Files.setPosixFilePermissions(cache, PosixFilePermissions.fromString("rwxrwxr-x"));
    assertThat(ModelCache.read(onlyModel(cache), "qos", sha(QOS))).isNull();
    RuleSet rs = RuleCompiler.compile(QOS, RuleCompiler.Options.STRICT.withCache(inProcess(cache)));
    assertThat(PrebuiltModelParityTest.fromModel(rs.kieBase())).isFalse();
  }

  @Test
  void anEntryForOtherSourcesIsRefused(@TempDir Path tmp) throws IOException {
    Path cache = tmp.resolve("cache");
    byte[] bytes = built(cache);
    assertThat(ModelCache.verify("x", "qos", sha(QOS), bytes)).isNotNull();
    // the same entry under the name of another set (what a copied file would be)
    assertThat(ModelCache.verify("x", "other", sha(PSI), bytes)).isNull();
    // its sources' hash rewritten, the digest still right: its lint entry holds for other sources
    ModelEntry m = ModelEntry.decode(bytes);
    ModelEntry forged =
        new ModelEntry(
            sha(PSI),
            m.evictdVersion(),
            m.droolsVersion(),
            null,
            m.lintEntry(),
            m.models(),
            m.factClasses(),
            m.factClassesSha256(),
            m.classes());
    assertThat(ModelCache.verify("x", "psi", sha(PSI), forged.encode())).isNull();
  }

  @Test
  void anEntryOfAnotherEvictdOrDroolsVersionOrOtherFactClassesIsRefused(@TempDir Path tmp)
      throws IOException {
    ModelEntry m = ModelEntry.decode(built(tmp.resolve("cache")));
    String s = sha(QOS);
    assertThat(ModelCache.verify("x", "qos", s, with(m, "0.0.1+old", null, null).encode()))
        .isNull();
    assertThat(ModelCache.verify("x", "qos", s, with(m, null, "7.0.0", null).encode())).isNull();
    assertThat(ModelCache.verify("x", "qos", s, with(m, null, null, "0".repeat(64)).encode()))
        .isNull();
    assertThat(ModelCache.verify("x", "qos", s, with(m, null, null, null).encode())).isNotNull();
  }

  private static ModelEntry with(ModelEntry m, String evictd, String drools, String facts) {
    return new ModelEntry(
        m.sourcesSha256(),
        evictd != null ? evictd : m.evictdVersion(),
        drools != null ? drools : m.droolsVersion(),
        m.drlOnly(),
        m.lintEntry(),
        m.models(),
        m.factClasses(),
        facts != null ? facts : m.factClassesSha256(),
        m.classes());
  }

  @Test
  void anEntryWhoseClassBytesWereChangedIsRefused(@TempDir Path tmp) throws IOException {
    byte[] bytes = built(tmp.resolve("cache"));
    // one byte of one class changed in the zip, its digest left as it was
    Map<String, byte[]> files = unzip(bytes);
    String victim =
        files.keySet().stream()
            .filter(n -> n.endsWith(".class"))
            .sorted()
            .findFirst()
            .orElseThrow();
    byte[] b = files.get(victim).clone();
    b[b.length / 2] ^= 0x01;
    files.put(victim, b);
    assertThat(ModelCache.verify("x", "qos", sha(QOS), zip(files))).isNull();
    assertThrows(IOException.class, () -> ModelEntry.decode(zip(files)));
  }

  @Test
  void aClassCallingRuntimeExecInjectedIntoAnEntryIsRefusedByTheBytecodeCheck(@TempDir Path tmp)
      throws IOException {
    Path cache = tmp.resolve("cache");
    ModelEntry m = ModelEntry.decode(built(cache));
    // one of the model's own classes replaced by one of the same name that runs a process, and
    // the entry's digest recomputed (as only someone who may write the cache could)
    String victim = m.models().get(0).replace('.', '/');
    Map<String, byte[]> classes = new HashMap<>(m.classes());
    classes.put(victim + ".class", execClass(victim));
    ModelEntry forged =
        new ModelEntry(
            m.sourcesSha256(),
            m.evictdVersion(),
            m.droolsVersion(),
            null,
            m.lintEntry(),
            m.models(),
            m.factClasses(),
            m.factClassesSha256(),
            classes);
    List<String> refused = ModelCodeCheck.check(forged.classes(), "dev.evictd.rules");
    assertThat(refused).anyMatch(l -> l.contains("java.lang.Runtime"));
    assertThat(ModelCache.verify("x", "qos", sha(QOS), forged.encode())).isNull();
    // written into the cache, it is refused there too, and the set is built afresh
    Files.write(onlyModel(cache), forged.encode());
    assertThat(ModelCache.read(onlyModel(cache), "qos", sha(QOS))).isNull();
    RuleSet rs = RuleCompiler.compile(QOS, RuleCompiler.Options.STRICT.withCache(inProcess(cache)));
    assertThat(PrebuiltModelParityTest.fromModel(rs.kieBase())).isTrue();
    ModelEntry rebuilt = ModelEntry.decode(Files.readAllBytes(onlyModel(cache)));
    assertThat(ModelCodeCheck.check(rebuilt.classes(), "dev.evictd.rules")).isEmpty();
    assertThat(rebuilt.classes().values())
        .noneMatch(b -> java.util.Arrays.equals(b, execClass(victim)));
  }

  /** A class that calls {@code Runtime.getRuntime().exec("true")} when it is made. */
  static byte[] execClass(String internalName) {
    ClassWriter cw = new ClassWriter(ClassWriter.COMPUTE_FRAMES | ClassWriter.COMPUTE_MAXS);
    cw.visit(Opcodes.V17, Opcodes.ACC_PUBLIC, internalName, null, "java/lang/Object", null);
    MethodVisitor mv = cw.visitMethod(Opcodes.ACC_PUBLIC, "<init>", "()V", null, null);
    mv.visitCode();
    mv.visitVarInsn(Opcodes.ALOAD, 0);
    mv.visitMethodInsn(Opcodes.INVOKESPECIAL, "java/lang/Object", "<init>", "()V", false);
    mv.visitMethodInsn(
        Opcodes.INVOKESTATIC, "java/lang/Runtime", "getRuntime", "()Ljava/lang/Runtime;", false);
    mv.visitLdcInsn("true");
    mv.visitMethodInsn(
        Opcodes.INVOKEVIRTUAL,
        "java/lang/Runtime",
        "exec",
        "(Ljava/lang/String;)Ljava/lang/Process;",
        false);
    mv.visitInsn(Opcodes.POP);
    mv.visitInsn(Opcodes.RETURN);
    mv.visitMaxs(0, 0);
    mv.visitEnd();
    cw.visitEnd();
    return cw.toByteArray();
  }

  @Test
  void anEntryWhoseLintResultRecordsFindingsIsRefused(@TempDir Path tmp) throws IOException {
    ModelEntry m = ModelEntry.decode(built(tmp.resolve("cache")));
    RuleSetCache.Entry lint = RuleSetCache.verified("x", "qos", sha(QOS), m.lintEntry(), false);
    var finding =
        new dev.evictd.ruleset.lint.PolicyFinding(
            "r.drl", 3, "rule \"x\"", "java.lang.Runtime", "processes");
    RuleSetCache.Entry withFinding =
        new RuleSetCache.Entry(
            lint.format(),
            lint.evictdVersion(),
            lint.droolsVersion(),
            lint.sourcesSha256(),
            lint.files(),
            lint.rules(),
            lint.lint(),
            List.of(finding));
    ModelEntry forged =
        new ModelEntry(
            m.sourcesSha256(),
            m.evictdVersion(),
            m.droolsVersion(),
            null,
            RuleSetCache.encode(withFinding),
            m.models(),
            m.factClasses(),
            m.factClassesSha256(),
            m.classes());
    assertThat(ModelCache.verify("x", "qos", sha(QOS), forged.encode())).isNull();
  }

  @Test
  void matchesOnTheModelPathWouldRunOnJavaUtilRegexSoSuchASetStaysOnTheDrlPath(@TempDir Path tmp)
      throws IOException {
    String literal =
        """
        package dev.evictd.rules;
        import dev.evictd.api.*;
        rule "literal matches"
        ruleflow-group "observe"
        when
            PodFact(name matches "web-.*")
        then
        end
        """;
    String variable =
        """
        package dev.evictd.rules;
        import dev.evictd.api.*;
        rule "matches another field"
        ruleflow-group "observe"
        when
            PodFact($n: namespace)
            PodFact(name matches $n)
        then
        end
        """;
    for (String drl : List.of(literal, variable)) {
      Map<String, byte[]> classes = new TreeMap<>();
      PrebuiltModelWriter.generate(List.of(new RuleSource("m.drl", "m.drl", drl)), classes);
      assertThat(ModelCodeCheck.check(classes, "dev.evictd.rules"))
          .as(drl)
          .anyMatch(l -> l.contains("java.util.regex") || l.contains("matches on java.util.regex"));
      List<RuleSource> sources = new ArrayList<>(RuleCompiler.readDefault());
      sources.add(new RuleSource("m.drl", "m.drl", drl));
      Path cache = tmp.resolve("cache" + drl.length());
      RuleSet rs =
          RuleCompiler.compile(
              "m", sources, RuleCompiler.Options.STRICT.withCache(inProcess(cache)));
      assertThat(PrebuiltModelParityTest.fromModel(rs.kieBase())).isFalse();
      assertThat(
              ModelCache.read(onlyModel(cache), "m", RuleCompiler.sha256(sources))
                  .model()
                  .drlOnly())
          .contains("java.util.regex");
    }
  }

  @Test
  void aMalformedEntryIsRefusedNotThrown(@TempDir Path tmp) throws IOException {
    assertThat(ModelCache.verify("x", "qos", sha(QOS), new byte[] {1, 2, 3})).isNull();
    assertThat(ModelCache.verify("x", "qos", sha(QOS), zip(Map.of("a", new byte[] {1})))).isNull();
    Path cache = tmp.resolve("cache");
    built(cache);
    Files.write(onlyModel(cache), new byte[] {'P', 'K', 3, 4, 0});
    RuleSet rs = RuleCompiler.compile(QOS, RuleCompiler.Options.STRICT.withCache(inProcess(cache)));
    assertThat(PrebuiltModelParityTest.fromModel(rs.kieBase())).isTrue();
  }

  static Map<String, byte[]> unzip(byte[] bytes) throws IOException {
    Map<String, byte[]> out = new TreeMap<>();
    try (ZipInputStream z = new ZipInputStream(new ByteArrayInputStream(bytes))) {
      for (ZipEntry e = z.getNextEntry(); e != null; e = z.getNextEntry()) {
        out.put(e.getName(), z.readAllBytes());
      }
    }
    return out;
  }

  static byte[] zip(Map<String, byte[]> files) throws IOException {
    ByteArrayOutputStream out = new ByteArrayOutputStream();
    try (ZipOutputStream z = new ZipOutputStream(out)) {
      for (Map.Entry<String, byte[]> e : new TreeMap<>(files).entrySet()) {
        z.putNextEntry(new ZipEntry(e.getKey()));
        z.write(e.getValue());
        z.closeEntry();
      }
    }
    return out.toByteArray();
  }
}
