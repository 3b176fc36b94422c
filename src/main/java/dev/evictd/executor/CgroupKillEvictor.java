package dev.evictd.executor;

import dev.evictd.api.EvictionDecision;
import dev.evictd.api.EvictionOutcome;
import dev.evictd.linux.Cgroups;
import dev.evictd.linux.Processes;
import dev.evictd.ports.PodEvictor;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The {@code kill} eviction method: the local last resort when the API server cannot be reached. It
 * finds the pod's cgroup from its UID (the same lookup as the host stats: cgroupfs or systemd
 * naming, any QoS class), sends SIGTERM to every process in it and below it, and SIGKILL once the
 * decision's grace period has passed.
 *
 * <p>The caller is never blocked for the grace period: {@link #evict} signals SIGTERM and returns;
 * the SIGKILL is a task on one scheduler thread that re-reads the cgroup when it runs, so processes
 * forked meanwhile die too. A second decision for a pod whose SIGKILL is pending does not postpone
 * it. A zero grace period kills at once. {@link #close()} sends the pending SIGKILLs at once (an
 * eviction decided is carried out) and stops the scheduler.
 *
 * <p>On cgroup v2 the SIGKILL is one write of {@code 1} to the pod cgroup's {@code cgroup.kill}
 * (Linux 5.14+): the kernel kills every process of the subtree, including ones forking meanwhile.
 * The signal sweep stays the fallback, where the file is missing or the write is refused, and the
 * safety net when processes are still listed a second after the write.
 *
 * <p>Outcomes: {@code EVICTED} when the processes were signalled (or the cgroup had none left),
 * {@code NOT_FOUND} when the pod has no cgroup on this node, {@code FAILED} when a signal could not
 * be sent (EPERM, libc not bound, an unreadable cgroup).
 */
public final class CgroupKillEvictor implements PodEvictor, AutoCloseable {
  private static final Logger LOG = LoggerFactory.getLogger(CgroupKillEvictor.class);
  private static final int KILL_SWEEPS = 20;
  private static final int KILL_SWEEP_MILLIS = 10;
  private static final String CGROUP_KILL = "cgroup.kill";
  private static final long CGROUP_KILL_WAIT_MILLIS = 1000;

  /** Sends a signal to a process; false when the process is gone. Overridable for tests. */
  @FunctionalInterface
  interface Signaller {
    /** Sends {@code signal} to {@code pid}; returns false when the process no longer exists. */
    boolean signal(int pid, int signal) throws IOException;
  }

  private final Cgroups cgroups;
  private final Signaller signaller;
  private final ScheduledExecutorService scheduler;
  private final Map<String, Pending> pending = new ConcurrentHashMap<>();

  private record Pending(Path cgroup, ScheduledFuture<?> future) {}

  /** An evictor for the pod cgroups below {@code cgroups}' pods cgroup. */
  public CgroupKillEvictor(Cgroups cgroups) {
    this(cgroups, Processes::signal);
  }

  CgroupKillEvictor(Cgroups cgroups, Signaller signaller) {
    this.cgroups = cgroups;
    this.signaller = signaller;
    this.scheduler =
        Executors.newSingleThreadScheduledExecutor(
            r -> {
              Thread t = new Thread(r, "cgroup-kill");
              t.setDaemon(true);
              return t;
            });
  }

  @Override
  public EvictionOutcome evict(EvictionDecision decision) {
    String uid = decision.pod().uid();
    Optional<Path> cgroup = cgroups.podCgroup(uid);
    if (cgroup.isEmpty()) {
      LOG.info(
          "kill {}: no cgroup for pod uid {} under {}",
          decision.pod(),
          uid,
          cgroups.podsCgroup().orElse(null));
      return EvictionOutcome.NOT_FOUND;
    }
    Path cg = cgroup.get();
    long grace = Math.max(0, decision.gracePeriodSeconds());
    try {
      if (grace == 0) {
        int n = killAll(cg);
        LOG.info(
            "kill {}: SIGKILL to {} processes in {}{}",
            decision.pod(),
            n,
            cg,
            Files.isRegularFile(cg.resolve(CGROUP_KILL)) ? " (cgroup.kill)" : "");
        return EvictionOutcome.EVICTED;
      }
      int n = signalAll(cg, Processes.SIGTERM);
      LOG.info(
          "kill {}: SIGTERM to {} processes in {}; SIGKILL in {} s", decision.pod(), n, cg, grace);
    } catch (IOException | UncheckedIOException | IllegalStateException e) {
      LOG.warn("kill {}: {}", decision.pod(), e.getMessage());
      return EvictionOutcome.FAILED;
    }
    pending.computeIfAbsent(
        uid,
        u -> new Pending(cg, scheduler.schedule(() -> killNow(u, cg), grace, TimeUnit.SECONDS)));
    return EvictionOutcome.EVICTED;
  }

  /** Whether a SIGKILL for the pod with {@code uid} is still scheduled. */
  public boolean killPending(String uid) {
    return pending.containsKey(uid);
  }

  private void killNow(String uid, Path cgroup) {
    pending.remove(uid);
    try {
      int n = killAll(cgroup);
      if (n > 0) {
        LOG.info(
            "kill pod uid {}: grace period over, SIGKILL to {} processes in {}", uid, n, cgroup);
      }
    } catch (IOException | RuntimeException e) {
      LOG.warn("kill pod uid {}: SIGKILL failed: {}", uid, e.getMessage());
    }
  }

  /**
   * SIGKILLs the cgroup tree until it holds no process: a process may fork between reading
   * cgroup.procs and the signal, so the sweep repeats (at most {@value #KILL_SWEEPS} times, {@value
   * #KILL_SWEEP_MILLIS} ms apart).
   */
  private int killAll(Path cgroup) throws IOException {
    int killed = cgroupKill(cgroup);
    if (killed >= 0 && Cgroups.processes(cgroup).isEmpty()) {
      return killed;
    }
    int n = Math.max(0, killed);
    for (int i = 0; i < KILL_SWEEPS; i++) {
      int k = signalAll(cgroup, Processes.SIGKILL);
      if (k == 0) {
        break;
      }
      n += k;
      try {
        Thread.sleep(KILL_SWEEP_MILLIS);
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
        break;
      }
    }
    return n;
  }

  /**
   * Writes {@code 1} to the cgroup's {@code cgroup.kill} and waits until its tree holds no process
   * (at most {@value #CGROUP_KILL_WAIT_MILLIS} ms); returns how many processes it held, or -1 when
   * there is no such file or the kernel refused the write (the caller then signals).
   */
  private static int cgroupKill(Path cgroup) {
    Path file = cgroup.resolve(CGROUP_KILL);
    if (!Files.isRegularFile(file)) {
      return -1;
    }
    int before = Cgroups.processes(cgroup).size();
    try {
      Files.writeString(file, "1", StandardOpenOption.WRITE);
    } catch (IOException e) {
      LOG.warn("cannot write {}: {}; signalling each process instead", file, e.getMessage());
      return -1;
    }
    long end = System.nanoTime() + CGROUP_KILL_WAIT_MILLIS * 1_000_000;
    while (!Cgroups.processes(cgroup).isEmpty() && System.nanoTime() < end) {
      try {
        Thread.sleep(KILL_SWEEP_MILLIS);
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
        break;
      }
    }
    LOG.debug("{} written: {} processes before", file, before);
    return before;
  }

  /**
   * Signals every process in the cgroup tree; returns how many were signalled; throws on the first
   * failure.
   */
  private int signalAll(Path cgroup, int signal) throws IOException {
    Set<Integer> pids = Cgroups.processes(cgroup);
    int n = 0;
    List<String> failures = new ArrayList<>();
    for (int pid : pids) {
      try {
        if (signaller.signal(pid, signal)) {
          n++;
        }
      } catch (IOException e) {
        failures.add(e.getMessage());
      }
    }
    if (!failures.isEmpty()) {
      throw new IOException(String.join("; ", failures));
    }
    return n;
  }

  /** Sends the pending SIGKILLs now and stops the scheduler. Idempotent. */
  @Override
  public void close() {
    for (Map.Entry<String, Pending> e : Map.copyOf(pending).entrySet()) {
      if (e.getValue().future().cancel(false)) {
        killNow(e.getKey(), e.getValue().cgroup());
      }
    }
    scheduler.shutdown();
  }
}
