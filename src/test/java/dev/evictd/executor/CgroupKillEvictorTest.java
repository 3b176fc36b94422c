package dev.evictd.executor;

import static org.assertj.core.api.Assertions.assertThat;

import dev.evictd.api.EvictionDecision;
import dev.evictd.api.EvictionOutcome;
import dev.evictd.api.PodRef;
import dev.evictd.linux.Cgroups;
import dev.evictd.linux.Processes;
import dev.evictd.testing.Fixtures;
import dev.evictd.testing.TestCgroup;
import java.io.IOException;
import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

class CgroupKillEvictorTest {
  private static final String UID = "0c0c0c0c-1111-2222-3333-444444444444";
  private TestCgroup pods;
  private CgroupKillEvictor evictor;

  @AfterEach
  void cleanUp() throws Exception {
    if (evictor != null) {
      evictor.close();
    }
    if (pods != null) {
      pods.close();
    }
  }

  private static EvictionDecision decision(String uid, long grace) {
    return new EvictionDecision(
        new PodRef("default", "victim", uid),
        EvictionDecision.Kind.PRESSURE,
        "memory.available",
        grace,
        "The node was low on resource: memory.",
        null,
        null,
        null);
  }

  @Test
  @Tag("cgroup-v1")
  void sigtermFirstThenSigkillOnceTheGracePeriodIsOverWithoutBlockingTheCaller() throws Exception {
    TestCgroup.assumeRootWithCgroupV1();
    pods = TestCgroup.create("kill");
    Path pod = pods.mkdirs("burstable/pod" + UID);
    Path container = pods.mkdirs("burstable/pod" + UID + "/c1");
    Process polite = pods.startIn(pod, "exec sleep 600");
    Process stubborn = pods.startIn(container, "trap '' TERM; while :; do sleep 0.05; done");
    TestCgroup.awaitProcesses(pod, 1);
    TestCgroup.awaitProcesses(container, 1);
    // in the cgroup is not yet past the trap: a SIGTERM before it would end the shell
    TestCgroup.awaitIgnoring(stubborn, Processes.SIGTERM);
    evictor =
        new CgroupKillEvictor(
            Cgroups.detect(Path.of("/sys/fs/cgroup"), pods.dir().getFileName().toString()));

    assertThat(Processes.available()).isTrue(); // binds libc now, not inside the timed call

    long t0 = System.nanoTime();
    assertThat(evictor.evict(decision(UID, 2))).isEqualTo(EvictionOutcome.EVICTED);
    assertThat(System.nanoTime() - t0)
        .as("evict returns well before the 2 s grace period")
        .isLessThan(1_000_000_000L);
    assertThat(polite.waitFor(2, TimeUnit.SECONDS))
        .as("SIGTERM stops a process that honours it")
        .isTrue();
    assertThat(polite.exitValue()).isEqualTo(128 + Processes.SIGTERM);
    assertThat(stubborn.isAlive())
        .as("a process ignoring SIGTERM lives until the grace period ends")
        .isTrue();
    assertThat(evictor.killPending(UID)).isTrue();
    assertThat(stubborn.waitFor(6, TimeUnit.SECONDS)).as("SIGKILL after the grace period").isTrue();
    assertThat(System.nanoTime() - t0).isGreaterThanOrEqualTo(2_000_000_000L);
    long end = System.nanoTime() + 1_000_000_000L;
    while (!Cgroups.processes(pod).isEmpty() && System.nanoTime() < end) {
      Thread.sleep(10); // the SIGKILL sweep also takes the children the shell forked meanwhile
    }
    assertThat(Cgroups.processes(pod)).isEmpty();
    assertThat(evictor.killPending(UID)).isFalse();
  }

  /**
   * Fixture processes: each "dies" at its first SIGKILL (later signals find it gone); records what
   * was sent.
   */
  private static CgroupKillEvictor.Signaller fakeProcesses(List<String> sent) {
    java.util.Set<Integer> killed = java.util.concurrent.ConcurrentHashMap.newKeySet();
    return (pid, sig) -> {
      if (killed.contains(pid) || (sig == Processes.SIGKILL && !killed.add(pid))) {
        return false;
      }
      sent.add(pid + ":" + sig);
      return true;
    };
  }

  @Test
  void aPodWithoutACgroupIsNotFound() {
    Cgroups fixture = Cgroups.detect(Fixtures.resource("hosts/v1/cgroup"), "kubepods");
    evictor =
        new CgroupKillEvictor(
            fixture,
            (pid, sig) -> {
              throw new AssertionError("no signal expected");
            });
    assertThat(evictor.evict(decision("ffffffff-0000-0000-0000-000000000000", 30)))
        .isEqualTo(EvictionOutcome.NOT_FOUND);
  }

  @Test
  void zeroGraceKillsEveryProcessOfThePodTreeAtOnce() {
    Cgroups fixture = Cgroups.detect(Fixtures.resource("hosts/v2/cgroup"), "kubepods");
    List<String> sent = new CopyOnWriteArrayList<>();
    evictor = new CgroupKillEvictor(fixture, fakeProcesses(sent));
    assertThat(evictor.evict(decision("dddddddd-1111-2222-3333-444444444444", 0)))
        .isEqualTo(EvictionOutcome.EVICTED);
    assertThat(sent).containsExactly("301:9", "302:9", "303:9");
    assertThat(evictor.killPending("dddddddd-1111-2222-3333-444444444444")).isFalse();
  }

  @Test
  void aSignalThatCannotBeSentFails() {
    Cgroups fixture = Cgroups.detect(Fixtures.resource("hosts/v1/cgroup"), "kubepods");
    evictor =
        new CgroupKillEvictor(
            fixture,
            (pid, sig) -> {
              throw new IOException(
                  "kill -" + sig + " " + pid + ": Operation not permitted (errno 1)");
            });
    assertThat(evictor.evict(decision("bbbbbbbb-0000-0000-0000-000000000002", 30)))
        .isEqualTo(EvictionOutcome.FAILED);
    assertThat(evictor.killPending("bbbbbbbb-0000-0000-0000-000000000002")).isFalse();
  }

  @Test
  void closeSendsThePendingSigkillsAtOnceAndARepeatedDecisionDoesNotPostponeThem() {
    Cgroups fixture = Cgroups.detect(Fixtures.resource("hosts/v1/cgroup"), "kubepods");
    List<String> sent = new CopyOnWriteArrayList<>();
    evictor = new CgroupKillEvictor(fixture, fakeProcesses(sent));
    String uid = "aaaaaaaa-0000-0000-0000-000000000001";
    assertThat(evictor.evict(decision(uid, 600))).isEqualTo(EvictionOutcome.EVICTED);
    assertThat(evictor.evict(decision(uid, 900))).isEqualTo(EvictionOutcome.EVICTED);
    assertThat(sent).containsExactly("101:15", "102:15", "103:15", "101:15", "102:15", "103:15");
    assertThat(evictor.killPending(uid)).isTrue();
    evictor.close();
    assertThat(sent.subList(6, sent.size())).containsExactly("101:9", "102:9", "103:9");
    assertThat(evictor.killPending(uid)).isFalse();
    evictor.close();
    assertThat(sent).hasSize(9);
  }

  @Test
  @Tag("cgroup-v1")
  void everyPodOfASystemdDriverTreeIsFoundAndKilledWithPodsCgroupKubepodsSlice() throws Exception {
    TestCgroup.assumeRootWithCgroupV1();
    pods = TestCgroup.create("kill-systemd");
    String[] uids = {
      "0a0a0a0a-1111-2222-3333-444444444444",
      "0b0b0b0b-1111-2222-3333-444444444444",
      "0c0c0c0c-1111-2222-3333-444444444444"
    };
    String[] dirs = {
      "kubepods.slice/kubepods-pod" + uids[0].replace('-', '_') + ".slice",
      "kubepods.slice/kubepods-burstable.slice/kubepods-burstable-pod"
          + uids[1].replace('-', '_')
          + ".slice",
      "kubepods.slice/kubepods-besteffort.slice/kubepods-besteffort-pod"
          + uids[2].replace('-', '_')
          + ".slice"
    };
    List<Process> procs = new java.util.ArrayList<>();
    for (String d : dirs) {
      Path scope = pods.mkdirs(d + "/cri-containerd-1.scope");
      procs.add(pods.startIn(scope, "exec sleep 600"));
      TestCgroup.awaitProcesses(scope, 1);
    }
    // the name as the operator passes it on a systemd-driver node, here below the test cgroup
    Cgroups c =
        Cgroups.detect(Path.of("/sys/fs/cgroup"), pods.dir().getFileName() + "/kubepods.slice");
    assertThat(c.podCgroups()).containsOnlyKeys(uids);
    evictor = new CgroupKillEvictor(c);
    for (int i = 0; i < uids.length; i++) {
      assertThat(evictor.evict(decision(uids[i], 0)))
          .as(dirs[i])
          .isEqualTo(EvictionOutcome.EVICTED);
      assertThat(procs.get(i).waitFor(5, TimeUnit.SECONDS)).as(dirs[i]).isTrue();
      assertThat(Cgroups.processes(pods.dir().resolve(dirs[i]))).as(dirs[i]).isEmpty();
    }
  }

  private static Path v2PodTree(Path root, String uid, String procs) throws IOException {
    java.nio.file.Files.writeString(root.resolve("cgroup.controllers"), "cpu memory pids\n");
    Path pod =
        java.nio.file.Files.createDirectories(
            root.resolve(
                "kubepods.slice/kubepods-besteffort.slice/kubepods-besteffort-pod"
                    + uid.replace('-', '_')
                    + ".slice"));
    java.nio.file.Files.writeString(pod.resolve("cgroup.procs"), procs);
    java.nio.file.Files.writeString(pod.resolve("cgroup.kill"), "");
    return pod;
  }

  @Test
  void onCgroupV2OneWriteToCgroupKillKillsThePodWithoutASignal(
      @org.junit.jupiter.api.io.TempDir Path root) throws Exception {
    // the kernel empties cgroup.procs on the write; a fixture pod without processes stands for that
    Path pod = v2PodTree(root, UID, "");
    evictor =
        new CgroupKillEvictor(
            Cgroups.detect(root, "kubepods.slice"),
            (pid, sig) -> {
              throw new AssertionError("no signal expected, got " + sig + " for " + pid);
            });
    assertThat(evictor.evict(decision(UID, 0))).isEqualTo(EvictionOutcome.EVICTED);
    assertThat(java.nio.file.Files.readString(pod.resolve("cgroup.kill"))).isEqualTo("1");
  }

  @Test
  void signalsRemainTheSafetyNetWhenProcessesOutliveTheCgroupKillWrite(
      @org.junit.jupiter.api.io.TempDir Path root) throws Exception {
    Path pod = v2PodTree(root, UID, "701\n702\n");
    List<String> sent = new CopyOnWriteArrayList<>();
    evictor = new CgroupKillEvictor(Cgroups.detect(root, "kubepods"), fakeProcesses(sent));
    assertThat(evictor.evict(decision(UID, 0))).isEqualTo(EvictionOutcome.EVICTED);
    assertThat(java.nio.file.Files.readString(pod.resolve("cgroup.kill"))).isEqualTo("1");
    assertThat(sent).containsExactly("701:9", "702:9");
  }

  @Test
  void graceBeforeCgroupKillStillStartsWithSigterm(@org.junit.jupiter.api.io.TempDir Path root)
      throws Exception {
    Path pod = v2PodTree(root, UID, "801\n");
    List<String> sent = new CopyOnWriteArrayList<>();
    evictor = new CgroupKillEvictor(Cgroups.detect(root, "kubepods"), fakeProcesses(sent));
    assertThat(evictor.evict(decision(UID, 600))).isEqualTo(EvictionOutcome.EVICTED);
    assertThat(sent).containsExactly("801:15");
    assertThat(java.nio.file.Files.readString(pod.resolve("cgroup.kill"))).isEmpty();
    java.nio.file.Files.writeString(pod.resolve("cgroup.procs"), "");
    evictor.close();
    assertThat(java.nio.file.Files.readString(pod.resolve("cgroup.kill"))).isEqualTo("1");
    assertThat(sent).containsExactly("801:15");
  }
}
