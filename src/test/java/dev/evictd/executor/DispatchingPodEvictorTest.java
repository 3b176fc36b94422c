package dev.evictd.executor;

import static dev.evictd.testing.TestPods.decision;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.evictd.api.ConfigException;
import dev.evictd.api.EvictionDecision;
import dev.evictd.api.EvictionMethod;
import dev.evictd.api.EvictionOutcome;
import dev.evictd.api.PodRef;
import dev.evictd.ports.PodEvictor;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

class DispatchingPodEvictorTest {
  private static final PodRef POD = new PodRef("ns", "web", "u1");

  /** Records which evictor got a decision and answers a fixed outcome. */
  private static final class Recording implements PodEvictor {
    final String name;
    final EvictionOutcome outcome;
    final List<String> log;

    Recording(String name, EvictionOutcome outcome, List<String> log) {
      this.name = name;
      this.outcome = outcome;
      this.log = log;
    }

    @Override
    public EvictionOutcome evict(EvictionDecision decision) {
      log.add(name + " " + decision.pod().key());
      return outcome;
    }
  }

  private final List<String> log = new ArrayList<>();
  private final PodEvictor delete = new Recording("delete", EvictionOutcome.EVICTED, log);
  private final PodEvictor evict = new Recording("evict", EvictionOutcome.PDB_BLOCKED, log);
  private final PodEvictor kill = new Recording("kill", EvictionOutcome.EVICTED, log);

  @Test
  void routesEachDecisionByItsMethod() {
    var d =
        new DispatchingPodEvictor(EvictionMethod.DELETE, delete, evict, kill, new DryRunEvictor());

    assertThat(d.evict(decision(POD, 1, EvictionMethod.DEFAULT)))
        .isEqualTo(EvictionOutcome.EVICTED);
    assertThat(d.evict(decision(POD, 1, EvictionMethod.EVICT)))
        .isEqualTo(EvictionOutcome.PDB_BLOCKED);
    assertThat(d.evict(decision(POD, 1, EvictionMethod.KILL))).isEqualTo(EvictionOutcome.EVICTED);
    assertThat(d.evict(decision(POD, 1, EvictionMethod.DRY_RUN)))
        .isEqualTo(EvictionOutcome.DRY_RUN);
    assertThat(d.evict(decision(POD, 1, EvictionMethod.DELETE))).isEqualTo(EvictionOutcome.EVICTED);

    assertThat(log)
        .containsExactly("delete ns/web", "evict ns/web", "kill ns/web", "delete ns/web");
  }

  @Test
  void killAndDeleteStopsTheContainersThenDeletesWhateverTheKillDid() {
    var d =
        new DispatchingPodEvictor(EvictionMethod.DELETE, delete, evict, kill, new DryRunEvictor());
    assertThat(d.evict(decision(POD, 1, EvictionMethod.KILL_AND_DELETE)))
        .isEqualTo(EvictionOutcome.EVICTED);
    assertThat(log).containsExactly("kill ns/web", "delete ns/web");

    PodEvictor notFound = new Recording("kill", EvictionOutcome.NOT_FOUND, log);
    PodEvictor refused = new Recording("delete", EvictionOutcome.FAILED, log);
    var local =
        new DispatchingPodEvictor(
            EvictionMethod.DELETE, refused, evict, notFound, new DryRunEvictor());
    assertThat(local.evict(decision(POD, 1, EvictionMethod.KILL_AND_DELETE)))
        .as("the outcome is the delete's")
        .isEqualTo(EvictionOutcome.FAILED);
    assertThat(log).containsExactly("kill ns/web", "delete ns/web", "kill ns/web", "delete ns/web");

    var noKill =
        new DispatchingPodEvictor(EvictionMethod.DELETE, delete, evict, null, new DryRunEvictor());
    assertThat(noKill.evict(decision(POD, 1, EvictionMethod.KILL_AND_DELETE)))
        .as("not available without a kill evictor")
        .isEqualTo(EvictionOutcome.FAILED);
  }

  @Test
  void theDefaultMethodIsConfigurable() {
    var d =
        new DispatchingPodEvictor(EvictionMethod.EVICT, delete, evict, kill, new DryRunEvictor());
    assertThat(d.methodFor(decision(POD, 1, EvictionMethod.DEFAULT)))
        .isEqualTo(EvictionMethod.EVICT);
    d.evict(decision(POD, 1, EvictionMethod.DEFAULT));
    assertThat(log).containsExactly("evict ns/web");

    var dry =
        new DispatchingPodEvictor(EvictionMethod.DRY_RUN, delete, evict, kill, new DryRunEvictor());
    assertThat(dry.evict(decision(POD, 1, EvictionMethod.DEFAULT)))
        .isEqualTo(EvictionOutcome.DRY_RUN);
    assertThat(log).containsExactly("evict ns/web");
  }

  @Test
  void aMissingKillEvictorFailsKillDecisions() {
    var d =
        new DispatchingPodEvictor(EvictionMethod.DELETE, delete, evict, null, new DryRunEvictor());
    assertThat(d.evict(decision(POD, 1, EvictionMethod.KILL))).isEqualTo(EvictionOutcome.FAILED);
    assertThat(log).isEmpty();
  }

  @Test
  void anEvictorThatThrowsIsFailed() {
    PodEvictor broken =
        x -> {
          throw new IllegalStateException("boom");
        };
    var d =
        new DispatchingPodEvictor(EvictionMethod.DELETE, broken, evict, kill, new DryRunEvictor());
    assertThat(d.evict(decision(POD, 1, EvictionMethod.DEFAULT))).isEqualTo(EvictionOutcome.FAILED);
  }

  @Test
  void theDefaultMustBeARealAvailableMethod() {
    assertThatThrownBy(
            () -> new DispatchingPodEvictor(EvictionMethod.DEFAULT, delete, evict, kill, null))
        .isInstanceOf(ConfigException.class);
    assertThatThrownBy(
            () -> new DispatchingPodEvictor(EvictionMethod.KILL, delete, evict, null, null))
        .isInstanceOf(ConfigException.class)
        .hasMessageContaining("KILL");
  }
}
