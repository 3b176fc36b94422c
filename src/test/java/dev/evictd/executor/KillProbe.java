package dev.evictd.executor;

import dev.evictd.linux.Cgroups;
import java.util.List;

/** The kill evictor with a signaller that records what it sends (for the cgroup v2 VM checks). */
public final class KillProbe {
  private KillProbe() {}

  /**
   * A kill evictor that sends real signals and adds {@code "pid:signal"} to {@code sent} for each.
   */
  public static CgroupKillEvictor recording(Cgroups cgroups, List<String> sent) {
    return new CgroupKillEvictor(
        cgroups,
        (pid, sig) -> {
          sent.add(pid + ":" + sig);
          return dev.evictd.linux.Processes.signal(pid, sig);
        });
  }
}
