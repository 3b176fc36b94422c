package dev.evictd.testing;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Map;
import java.util.TreeMap;
import org.junit.platform.engine.TestExecutionResult;
import org.junit.platform.engine.TestTag;
import org.junit.platform.launcher.TestExecutionListener;
import org.junit.platform.launcher.TestIdentifier;
import org.junit.platform.launcher.TestPlan;

/**
 * Counts, per JUnit tag, the tests that ran and those skipped (an assumption that failed, or
 * disabled), and writes them to {@code target/test-tags/<pid>.tsv} as {@code tag ran skipped
 * first-skip-reason}: {@code .ci/check-tags} fails CI when a tag its machine can run ran no test,
 * so a green run cannot hide a silent skip. Registered through {@code META-INF/services}; the
 * counts are the JVM's (a launcher started by a test adds to them) and each plan's end rewrites the
 * file.
 */
public final class TagCounts implements TestExecutionListener {
  private static final Path DIR = Path.of("target", "test-tags");
  private static final Map<String, long[]> COUNTS = new TreeMap<>();
  private static final Map<String, String> FIRST_SKIP = new TreeMap<>();
  private TestPlan plan;

  @Override
  public void testPlanExecutionStarted(TestPlan plan) {
    this.plan = plan;
  }

  @Override
  public void executionSkipped(TestIdentifier test, String reason) {
    count(test, false, reason);
  }

  @Override
  public void executionFinished(TestIdentifier test, TestExecutionResult result) {
    boolean aborted = result.getStatus() == TestExecutionResult.Status.ABORTED;
    String reason =
        result.getThrowable().map(t -> String.valueOf(t.getMessage())).orElse("aborted");
    count(test, !aborted, reason);
  }

  @Override
  public void testPlanExecutionFinished(TestPlan plan) {
    StringBuilder out = new StringBuilder();
    synchronized (COUNTS) {
      COUNTS.forEach(
          (tag, n) ->
              out.append(tag)
                  .append('\t')
                  .append(n[0])
                  .append('\t')
                  .append(n[1])
                  .append('\t')
                  .append(FIRST_SKIP.getOrDefault(tag, "").replaceAll("\\s+", " "))
                  .append('\n'));
    }
    try {
      Files.createDirectories(DIR);
      Files.writeString(DIR.resolve(ProcessHandle.current().pid() + ".tsv"), out);
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }

  private void count(TestIdentifier test, boolean ran, String reason) {
    if (!test.isTest()) {
      if (!ran
          && plan != null) { // a skipped class is reported once, for itself: its tests did not run
        plan.getDescendants(test).stream()
            .filter(TestIdentifier::isTest)
            .forEach(t -> count(t, false, reason));
      }
      return;
    }
    synchronized (COUNTS) {
      for (TestTag tag : test.getTags()) {
        COUNTS.computeIfAbsent(tag.getName(), t -> new long[2])[ran ? 0 : 1]++;
        if (!ran) {
          FIRST_SKIP.putIfAbsent(tag.getName(), reason);
        }
      }
    }
  }
}
