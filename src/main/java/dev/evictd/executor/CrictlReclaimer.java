package dev.evictd.executor;

import dev.evictd.api.ConfigException;
import dev.evictd.api.ReclaimAction;
import dev.evictd.ports.NodeReclaimer;
import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Node-level reclaim with the container runtime's own tool, {@code crictl}: exited containers are
 * listed ({@code crictl ps -a --state exited -q}) and removed ({@code crictl rm ID...}); unused
 * images are removed with {@code crictl rmi --prune}. Each command runs with a timeout; a command
 * that times out is killed with its child processes. Failures are logged and reported as {@code
 * false}, never thrown.
 */
public final class CrictlReclaimer implements NodeReclaimer {
  private static final Logger LOG = LoggerFactory.getLogger(CrictlReclaimer.class);
  private static final int MAX_IDS_PER_RM = 100;
  private static final int MAX_OUTPUT_IN_LOG = 500;

  private final List<String> command;
  private final Duration timeout;

  /**
   * Runs {@code crictl} (a path, or a name looked up on PATH) with {@code globalArgs} before each
   * subcommand (e.g. {@code --runtime-endpoint unix:///run/containerd/containerd.sock}); each
   * command may take {@code timeout}.
   */
  public CrictlReclaimer(String crictl, List<String> globalArgs, Duration timeout) {
    if (crictl == null || crictl.isBlank()) {
      throw new ConfigException("crictl command must not be empty");
    }
    if (timeout == null || timeout.isNegative() || timeout.isZero()) {
      throw new ConfigException("crictl timeout must be positive, got " + timeout);
    }
    List<String> c = new ArrayList<>();
    c.add(crictl);
    c.addAll(globalArgs);
    this.command = List.copyOf(c);
    this.timeout = timeout;
  }

  @Override
  public boolean reclaim(ReclaimAction action) {
    return switch (action) {
      case CONTAINERS -> removeExitedContainers();
      case IMAGES -> run("rmi", "--prune").ok();
    };
  }

  private boolean removeExitedContainers() {
    Result listed = run("ps", "-a", "--state", "exited", "-q");
    if (!listed.ok()) {
      return false;
    }
    List<String> ids =
        listed.stdout().lines().map(String::strip).filter(s -> !s.isEmpty()).toList();
    if (ids.isEmpty()) {
      LOG.info("reclaim containers: no exited containers");
      return true;
    }
    boolean ok = true;
    for (int i = 0; i < ids.size(); i += MAX_IDS_PER_RM) {
      List<String> args = new ArrayList<>();
      args.add("rm");
      args.addAll(ids.subList(i, Math.min(ids.size(), i + MAX_IDS_PER_RM)));
      ok &= run(args.toArray(String[]::new)).ok();
    }
    if (ok) {
      LOG.info("reclaim containers: removed {} exited containers", ids.size());
    }
    return ok;
  }

  /** What one command did. */
  private record Result(boolean ok, String stdout) {}

  private Result run(String... args) {
    List<String> cmd = new ArrayList<>(command);
    cmd.addAll(List.of(args));
    String what = String.join(" ", cmd);
    Process p;
    try {
      p = new ProcessBuilder(cmd).start();
      p.getOutputStream().close();
    } catch (IOException e) {
      LOG.warn("reclaim: cannot run {}: {}", what, e.getMessage());
      return new Result(false, "");
    }
    CompletableFuture<String> out = readAsync(p.getInputStream());
    CompletableFuture<String> err = readAsync(p.getErrorStream());
    try {
      if (!p.waitFor(timeout.toMillis(), TimeUnit.MILLISECONDS)) {
        kill(p);
        LOG.warn("reclaim: {} did not finish within {} ms; killed", what, timeout.toMillis());
        return new Result(false, "");
      }
      String stdout = out.get(1, TimeUnit.SECONDS);
      if (p.exitValue() != 0) {
        String stderr = shorten(err.get(1, TimeUnit.SECONDS));
        LOG.warn("reclaim: {} failed with exit code {}: {}", what, p.exitValue(), stderr);
        return new Result(false, stdout);
      }
      return new Result(true, stdout);
    } catch (InterruptedException e) {
      kill(p);
      Thread.currentThread().interrupt();
      return new Result(false, "");
    } catch (ExecutionException | TimeoutException e) {
      // the process exited but left its output open (a child still holds it): treat as failed
      kill(p);
      LOG.warn("reclaim: {}: output not readable: {}", what, e.toString());
      return new Result(false, "");
    }
  }

  private static void kill(Process p) {
    p.descendants().forEach(ProcessHandle::destroyForcibly);
    p.destroyForcibly();
  }

  private static CompletableFuture<String> readAsync(InputStream in) {
    CompletableFuture<String> f = new CompletableFuture<>();
    Thread t =
        new Thread(
            () -> {
              try (in) {
                f.complete(new String(in.readAllBytes(), StandardCharsets.UTF_8));
              } catch (IOException e) {
                f.completeExceptionally(e);
              }
            },
            "crictl-output");
    t.setDaemon(true);
    t.start();
    return f;
  }

  private static String shorten(String s) {
    String t = s.strip();
    return t.length() > MAX_OUTPUT_IN_LOG ? t.substring(0, MAX_OUTPUT_IN_LOG) + "..." : t;
  }
}
