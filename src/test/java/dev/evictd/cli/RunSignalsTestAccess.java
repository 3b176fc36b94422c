package dev.evictd.cli;

import java.nio.file.Path;
import java.time.Duration;

/** The child-process helpers of {@link RunSignalsTest}, for tests of other packages. */
public final class RunSignalsTestAccess {
  private RunSignalsTestAccess() {}

  public static String agentClassPath() {
    return RunSignalsTest.agentClassPath();
  }

  public static boolean await(java.util.function.BooleanSupplier c, Duration timeout)
      throws InterruptedException {
    return RunSignalsTest.await(c, timeout);
  }

  public static int boundPort(Path log) {
    return RunSignalsTest.boundPort(log);
  }

  public static String read(Path log) {
    return RunSignalsTest.read(log);
  }

  public static void signal(Process p, String sig) throws Exception {
    RunSignalsTest.signal(p, sig);
  }

  public static int status(int port, String path) {
    return RunSignalsTest.status(port, path);
  }
}
