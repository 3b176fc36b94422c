package dev.evictd.testing.prop;

import java.lang.reflect.Method;
import java.util.Arrays;
import org.junit.platform.engine.discovery.DiscoverySelectors;
import org.junit.platform.launcher.EngineFilter;
import org.junit.platform.launcher.LauncherDiscoveryRequest;
import org.junit.platform.launcher.core.LauncherDiscoveryRequestBuilder;
import org.junit.platform.launcher.core.LauncherFactory;
import org.junit.platform.launcher.listeners.SummaryGeneratingListener;
import org.junit.platform.launcher.listeners.TestExecutionSummary;

/**
 * Runs one jqwik property from a test, to look at what its failure reports (the shrunk case, the
 * message). The property lives in a class the build does not run by itself (a static nested class,
 * which neither engine discovers from the test class around it).
 */
public final class JqwikRun {
  private JqwikRun() {}

  /** Runs the property {@code method} of {@code container}: its failure, or null when it held. */
  public static Throwable failureOf(Class<?> container, String method) {
    Method m =
        Arrays.stream(container.getDeclaredMethods())
            .filter(x -> x.getName().equals(method))
            .findFirst()
            .orElseThrow(() -> new AssertionError("no method " + method + " in " + container));
    LauncherDiscoveryRequest request =
        LauncherDiscoveryRequestBuilder.request()
            .selectors(DiscoverySelectors.selectMethod(container, m))
            .filters(EngineFilter.includeEngines("jqwik"))
            .build();
    SummaryGeneratingListener listener = new SummaryGeneratingListener();
    LauncherFactory.create().execute(request, listener);
    TestExecutionSummary summary = listener.getSummary();
    if (summary.getTestsFoundCount() != 1) {
      throw new AssertionError(
          "jqwik found " + summary.getTestsFoundCount() + " properties for " + m);
    }
    return summary.getFailures().isEmpty() ? null : summary.getFailures().get(0).getException();
  }
}
