package dev.evictd.bench;

import dev.evictd.agent.ConfigKey;
import dev.evictd.agent.DecisionWarmUp;
import dev.evictd.agent.EvictionManager;
import java.time.Duration;
import java.util.Locale;

/**
 * The agent's warm-up of the decision path ({@link DecisionWarmUp}) for the benches that build a
 * planner and a manager themselves, wired as {@code evictd run} wires it: its sync listener is the
 * manager's first (so a sync near a memory threshold starts it, as the agent's setting {@code
 * rulesWarmUp} says, by default {@code near}), and it is told when the loop started. {@link #await}
 * then waits for the warm-up to end, so that the crossings measured come after it, as on an agent
 * that reached the line a moment before the pressure. {@code -Dbench.warmUp=off} (or {@code start})
 * sets the agent's setting for comparisons.
 */
final class AgentWarmUp {
  private AgentWarmUp() {}

  /** The setting the benches use: {@code -Dbench.warmUp}, else the agent's default. */
  static DecisionWarmUp.When when() {
    String s = System.getProperty("bench.warmUp");
    return DecisionWarmUp.When.of(
        s != null ? s : (String) ConfigKey.of("rulesWarmUp").defaultValue());
  }

  /** The warm-up of {@code manager}'s rules, as the agent wires it (before any other listener). */
  static DecisionWarmUp attach(EvictionManager manager) {
    DecisionWarmUp w = new DecisionWarmUp(manager, when());
    manager.addSyncListener(w::synced);
    return w;
  }

  /** Waits for the warm-up that a sync started (at most 60 s); null when none runs. */
  static DecisionWarmUp.Result await(DecisionWarmUp w) {
    DecisionWarmUp.Run r = w.current();
    DecisionWarmUp.Result result = r == null ? null : r.await(Duration.ofSeconds(60));
    System.err.println("agent warm-up (" + when() + "): " + result);
    return result;
  }

  /** The warm-up's figures as JSON members (with a trailing comma and space). */
  static String json(DecisionWarmUp.Result r) {
    if (r == null) {
      return "\"agent_warm_up_syncs\": 0, ";
    }
    return String.format(
        Locale.ROOT,
        "\"agent_warm_up_syncs\": %d, \"agent_warm_up_cpu_ms\": %.1f, \"agent_warm_up_wall_ms\": %.1f, ",
        r.syncs(),
        r.cpu().toNanos() / 1e6,
        r.wall().toNanos() / 1e6);
  }
}
