package dev.evictd.linux;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

/**
 * The native layer under the container image's JVM flags (docker/Dockerfile's {@code
 * JAVA_TOOL_OPTIONS}), in a child JVM: the flags turn off jnr-ffi's x86 stub assembler (its one
 * huge method costs the JIT about 12 MiB of compiler arenas at start-up) and every call evictd
 * makes still works through jffi's generic invokers.
 */
class ImageFlagsNativeTest {
  /** The child: each native call evictd makes, once; prints "native ok". */
  public static final class Child {
    public static void main(String[] args) throws Exception {
      int fd = Native.eventfd();
      Native.signalEventfd(fd, 3);
      if (Native.readEventfd(fd) != 3) {
        throw new AssertionError("eventfd read back another value");
      }
      int[] fds = {fd};
      short[] revents = new short[1];
      Native.poll(fds, new short[] {Native.POLLIN}, revents, 0);
      if (Native.close(fd) != null) {
        throw new AssertionError("close failed");
      }
      if (Native.statvfs(Path.of("/")).blocks() <= 0) {
        throw new AssertionError("statvfs of / gave no blocks");
      }
      if (!Native.kill((int) ProcessHandle.current().pid(), 0)) {
        throw new AssertionError("kill(self, 0) said no such process");
      }
      System.out.println("native ok");
    }
  }

  /** The class of an assembled stub: loaded with the first one. */
  static final String STUB = " jnr.ffi.provider.jffi.AbstractX86StubCompiler$Stub ";

  /** The image's JVM flags, as bench/run.sh reads them (without the image's archive path). */
  static List<String> imageFlags() throws Exception {
    for (String line : Files.readAllLines(Path.of("docker/Dockerfile"))) {
      if (line.startsWith("ENV JAVA_TOOL_OPTIONS=\"")) {
        String v = line.substring(line.indexOf('"') + 1, line.lastIndexOf('"'));
        return Arrays.stream(v.split(" "))
            .filter(f -> !f.startsWith("-XX:SharedArchiveFile="))
            .toList();
      }
    }
    throw new AssertionError("no JAVA_TOOL_OPTIONS in docker/Dockerfile");
  }

  /** Runs the child with these flags, class loading logged; returns its output. */
  static String child(List<String> flags) throws Exception {
    List<String> cmd = new ArrayList<>();
    cmd.add(Path.of(System.getProperty("java.home"), "bin", "java").toString());
    cmd.addAll(flags);
    cmd.add("-Xlog:class+load=info:stdout");
    cmd.add("-cp");
    cmd.add(System.getProperty("java.class.path"));
    cmd.add(Child.class.getName());
    Process p = new ProcessBuilder(cmd).redirectErrorStream(true).start();
    byte[] out = p.getInputStream().readAllBytes();
    assertThat(p.waitFor(60, TimeUnit.SECONDS)).isTrue();
    String text = new String(out, StandardCharsets.UTF_8);
    assertThat(p.exitValue()).as("child output:\n%s", tail(text)).isZero();
    return text;
  }

  static String tail(String s) {
    return s.length() > 4000 ? s.substring(s.length() - 4000) : s;
  }

  @Test
  void everyNativeCallWorksUnderTheImageFlagsWithoutTheStubAssembler() throws Exception {
    List<String> flags = imageFlags();
    assertThat(flags).contains("-Djnr.ffi.x86asm.enabled=false");
    String out = child(flags);
    assertThat(out).contains("native ok");
    // no stub is assembled (the assembler's classes are still loaded, its instructions are not)
    assertThat(out).contains(" jnr.ffi.").doesNotContain(STUB).doesNotContain(" jnr.x86asm.Util ");
    // the same child without that one flag assembles its stubs: the flag is what keeps it out
    List<String> without =
        flags.stream().filter(f -> !f.equals("-Djnr.ffi.x86asm.enabled=false")).toList();
    String before = child(without);
    assertThat(before).contains("native ok").contains(STUB).contains(" jnr.x86asm.Util ");
  }
}
