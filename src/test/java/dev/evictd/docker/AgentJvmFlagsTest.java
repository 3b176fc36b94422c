package dev.evictd.docker;

import static org.assertj.core.api.Assertions.assertThat;

import dev.evictd.config.YamlNode;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;

/**
 * The agent's heap sizing: the DaemonSet's {@code JDK_JAVA_OPTIONS} on top of the image's {@code
 * JAVA_TOOL_OPTIONS}, checked in a child JVM started with both in its environment as the container
 * gets them, so the DaemonSet's values are the ones in force (and bench/run.sh, which reads both
 * files, measures what runs).
 */
class AgentJvmFlagsTest {
  private static final long MI = 1024 * 1024;

  /** The image's JAVA_TOOL_OPTIONS without its archive path (not present outside the image). */
  static String imageFlags() throws Exception {
    for (String line : Files.readAllLines(DockerManifestsTest.DOCKER.resolve("Dockerfile"))) {
      if (line.startsWith("ENV JAVA_TOOL_OPTIONS=\"")) {
        return line.substring(line.indexOf('"') + 1, line.lastIndexOf('"'))
            .replaceAll(" *-XX:SharedArchiveFile=\\S*", "");
      }
    }
    throw new AssertionError("no JAVA_TOOL_OPTIONS in docker/Dockerfile");
  }

  /**
   * The image's own JDK_JAVA_OPTIONS: the CLI's compile thresholds, which the DaemonSet's variable
   * replaces for the agent.
   */
  static String imageCliFlags() throws Exception {
    for (String line : Files.readAllLines(DockerManifestsTest.DOCKER.resolve("Dockerfile"))) {
      if (line.startsWith("ENV JDK_JAVA_OPTIONS=\"")) {
        return line.substring(line.indexOf('"') + 1, line.lastIndexOf('"'));
      }
    }
    throw new AssertionError("no JDK_JAVA_OPTIONS in docker/Dockerfile");
  }

  /** The DaemonSet container's JDK_JAVA_OPTIONS. */
  static String agentFlags() throws Exception {
    for (YamlNode e : DockerManifestsTest.at(DockerManifestsTest.container(), "env").asList()) {
      if (DockerManifestsTest.at(e, "name").asText().equals("JDK_JAVA_OPTIONS")) {
        return DockerManifestsTest.at(e, "value").asText();
      }
    }
    throw new AssertionError("no JDK_JAVA_OPTIONS in the DaemonSet's env");
  }

  /** The final values of the named flags in a child JVM with this environment. */
  static Map<String, String> finalFlags(Map<String, String> env) throws Exception {
    String out = javaOutput(env, "-XX:+PrintFlagsFinal", "-version");
    Map<String, String> flags = new HashMap<>();
    Matcher m = Pattern.compile("(?m)^\\s*\\S+\\s+(\\w+)\\s+:?=\\s+(\\S+)").matcher(out);
    while (m.find()) {
      flags.put(m.group(1), m.group(2));
    }
    return flags;
  }

  /** What {@code java -version} prints (stdout and stderr) with this environment. */
  static String javaVersionOutput(Map<String, String> env) throws Exception {
    return javaOutput(env, "-version");
  }

  private static String javaOutput(Map<String, String> env, String... args) throws Exception {
    List<String> cmd = new ArrayList<>();
    cmd.add(Path.of(System.getProperty("java.home"), "bin", "java").toString());
    cmd.addAll(List.of(args));
    ProcessBuilder pb = new ProcessBuilder(cmd).redirectErrorStream(true);
    pb.environment().remove("JAVA_TOOL_OPTIONS");
    pb.environment().remove("JDK_JAVA_OPTIONS");
    pb.environment().putAll(env);
    Process p = pb.start();
    String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
    assertThat(p.waitFor(60, TimeUnit.SECONDS)).isTrue();
    assertThat(p.exitValue()).as(out).isZero();
    return out;
  }

  @Test
  void theDaemonSetsHeapSizingWinsOverTheImagesForTheAgent() throws Exception {
    Map<String, String> agent =
        finalFlags(Map.of("JAVA_TOOL_OPTIONS", imageFlags(), "JDK_JAVA_OPTIONS", agentFlags()));
    assertThat(agent.get("UseSerialGC")).isEqualTo("true");
    // a young generation of fixed size, smaller than the image's 8 MiB: agent/EdenHeadroom keeps
    // its
    // collections out of an event's sync, and it acts only on an eden of fixed size
    assertThat(agent.get("NewSize")).isEqualTo(String.valueOf(5 * MI));
    assertThat(agent.get("MaxNewSize")).isEqualTo(String.valueOf(5 * MI));
    assertThat(agent.get("InitialHeapSize")).isEqualTo(String.valueOf(32 * MI));
    assertThat(agent.get("MinHeapFreeRatio")).isEqualTo("10");
    assertThat(agent.get("MaxHeapFreeRatio")).isEqualTo("20");
    // the rest of the image's flags still apply to the agent
    assertThat(agent.get("TieredStopAtLevel")).isEqualTo("1");
    assertThat(agent.get("TrimNativeHeapInterval")).isEqualTo("5000");
    // the CLI's compile thresholds and inlining limits (the image's JDK_JAVA_OPTIONS) do not: the
    // DaemonSet's variable replaces the image's, and the agent keeps the JVM's own
    assertThat(agent.get("CompileThresholdScaling")).isEqualTo("1.000000");
    assertThat(agent.get("C1MaxInlineSize")).isEqualTo("35");
    assertThat(agent.get("C1MaxInlineLevel")).isEqualTo("9");
  }

  @Test
  void theCliInTheImageCompilesLaterAndInlinesLess() throws Exception {
    // the image's CLI (evictd plan, test, rules check) gets both variables: C1 compiles after three
    // times the usual calls and inlines less, for start-up (docs/performance.md)
    Map<String, String> cli =
        finalFlags(Map.of("JAVA_TOOL_OPTIONS", imageFlags(), "JDK_JAVA_OPTIONS", imageCliFlags()));
    assertThat(cli.get("CompileThresholdScaling")).isEqualTo("3.000000");
    assertThat(cli.get("C1MaxInlineSize")).isEqualTo("25");
    assertThat(cli.get("C1MaxInlineLevel")).isEqualTo("6");
    assertThat(cli.get("TieredStopAtLevel")).isEqualTo("1");
    assertThat(cli.get("UseSerialGC")).isEqualTo("true");
  }

  @Test
  void theDaemonSetCapsTheAgentsMallocArenasWithAValueGlibcTakes() throws Exception {
    // glibc reads MALLOC_ARENA_MAX as a decimal count and silently ignores anything else (and 0
    // means its default), so a typo would quietly undo the cap bench/run.sh measured
    String value = null;
    for (YamlNode e : DockerManifestsTest.at(DockerManifestsTest.container(), "env").asList()) {
      if (DockerManifestsTest.at(e, "name").asText().equals("MALLOC_ARENA_MAX")) {
        value = DockerManifestsTest.at(e, "value").asText();
      }
    }
    assertThat(value).as("MALLOC_ARENA_MAX in the DaemonSet's env").isNotNull();
    assertThat(value).matches("[1-9][0-9]*");
    assertThat(Integer.parseInt(value)).isLessThanOrEqualTo(4);
  }

  @Test
  void theCliInTheImageHasALargerYoungGenerationThanTheAgent() throws Exception {
    // without the DaemonSet's variable (evictd test, rules check in CI): a 16 MiB young generation
    // and the JVM's own 40-70 % free, fewer collections of a large fixture's parse
    Map<String, String> cli =
        finalFlags(Map.of("JAVA_TOOL_OPTIONS", imageFlags(), "JDK_JAVA_OPTIONS", imageCliFlags()));
    assertThat(cli.get("NewSize")).isEqualTo(String.valueOf(16 * MI));
    assertThat(cli.get("MaxNewSize")).isEqualTo(String.valueOf(16 * MI));
    assertThat(cli.get("MinHeapFreeRatio")).isEqualTo("40");
    assertThat(cli.get("MaxHeapFreeRatio")).isEqualTo("70");
  }

  @Test
  void theClisHeapSizesNeedNoLargerContainerThanTheImagesAndPrintNothing() throws Exception {
    // the JVM prints its heap-sizing warnings on stdout, where `evictd plan -o json` writes: at the
    // smallest heap -Xms32m allows (a 64 MiB container), the CLI's sizes must need no adjusting
    String flags = imageFlags() + " -XX:MaxRAM=64m";
    Map<String, String> cli =
        finalFlags(Map.of("JAVA_TOOL_OPTIONS", flags, "JDK_JAVA_OPTIONS", imageCliFlags()));
    assertThat(cli.get("MaxHeapSize")).isEqualTo(String.valueOf(32 * MI));
    assertThat(cli.get("NewSize")).isEqualTo(String.valueOf(16 * MI));
    assertThat(
            javaVersionOutput(
                Map.of("JAVA_TOOL_OPTIONS", flags, "JDK_JAVA_OPTIONS", imageCliFlags())))
        .doesNotContainIgnoringCase("warning");
  }

  @Test
  void theAgentsCompileThresholdAppliesToEvictdsOwnCodeOnly() throws Exception {
    // without "quiet" the JVM echoes each CompileCommand it parsed: a malformed pattern (or a
    // global scaling, which cost 8 MiB RSS) would show here
    String flags = agentFlags();
    assertThat(flags)
        .contains("-XX:CompileCommand=quiet")
        .doesNotContain("-XX:CompileThresholdScaling");
    List<String> cmd = new ArrayList<>();
    cmd.add(Path.of(System.getProperty("java.home"), "bin", "java").toString());
    cmd.add("-version");
    ProcessBuilder pb = new ProcessBuilder(cmd).redirectErrorStream(true);
    pb.environment().remove("JAVA_TOOL_OPTIONS");
    pb.environment().put("JDK_JAVA_OPTIONS", flags.replace("-XX:CompileCommand=quiet", ""));
    Process p = pb.start();
    String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
    assertThat(p.waitFor(60, TimeUnit.SECONDS)).isTrue();
    assertThat(p.exitValue()).as(out).isZero();
    assertThat(out)
        .contains(
            "CompileCommand: CompileThresholdScaling dev/evictd/*.* double"
                + " CompileThresholdScaling = 0.100000");
  }
}
