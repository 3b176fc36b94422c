package dev.evictd.ruleset.lint;

import static org.assertj.core.api.Assertions.assertThat;

import org.junit.jupiter.api.Test;

class CompiledCodeCheckTest {
  @Test
  void descriptorTypesNameEveryClassOfAMethodDescriptorInOrder() {
    assertThat(
            CompiledCodeCheck.descriptorTypes(
                "(ILjava/lang/String;[[Ljava/io/File;J[I)Ljava/util/Map$Entry;"))
        .containsExactly("java.lang.String", "java.io.File", "java.util.Map$Entry");
  }

  @Test
  void descriptorTypesOfAFieldDescriptor() {
    assertThat(CompiledCodeCheck.descriptorTypes("Ljava/lang/Runtime;"))
        .containsExactly("java.lang.Runtime");
    assertThat(CompiledCodeCheck.descriptorTypes("[Ljava/lang/ProcessBuilder;"))
        .containsExactly("java.lang.ProcessBuilder");
    assertThat(CompiledCodeCheck.descriptorTypes("J")).isEmpty();
  }

  @Test
  void aClassFileIsReadWithAsmAndItsReferencesRefused() throws Exception {
    byte[] bytes;
    try (var in = ClassLoader.getSystemResourceAsStream("java/lang/ProcessBuilder.class")) {
      bytes = in.readAllBytes();
    }
    // ProcessBuilder names java.io.File in its fields and methods: file access is refused
    assertThat(CompiledCodeCheck.problems(bytes, false))
        .extracting(p -> p[0])
        .anyMatch(n -> n.startsWith("java.io.File"));
  }

  @Test
  void anUnreadableClassFileIsAProblemNotACrash() {
    assertThat(CompiledCodeCheck.problems(new byte[] {(byte) 0xCA, (byte) 0xFE, 0, 1}, false))
        .extracting(p -> p[0])
        .containsExactly("unreadable class file");
  }
}
