package dev.evictd.engine;

import dev.evictd.api.Ranking;
import dev.evictd.api.ThresholdState;
import java.util.ArrayList;
import java.util.Collections;
import java.util.HashMap;
import java.util.IdentityHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.kie.api.runtime.rule.FactHandle;

/**
 * What the listeners of one session record. Each session has its own: when a session is abandoned
 * to a stuck thread, that thread's listeners keep writing here and nowhere the planner still reads.
 */
final class SessionRecord {
  /** The handles of facts that hold for this sync only (retracted at the start of the next). */
  final List<FactHandle> perSyncHandles = new ArrayList<>();

  /**
   * The facts rules inserted that are still in the session (per-sync ones until the next sync
   * retracts them): what the kept-facts budget counts and measures.
   */
  final Map<FactHandle, Object> ruleInserted = new IdentityHashMap<>();

  final PerSyncFacts perSyncFacts = new PerSyncFacts();

  /** The kept-facts budget's table of objects seen, reused from one sync's estimate to the next. */
  final KeptFacts.Seen keptSeen = new KeptFacts.Seen();

  /** The ranking the planner inserted in this sync and its pods, in rank order. */
  Ranking lastRanking;

  List<PodEntry> lastRankingEntries;

  /** Why each exempt pod (by uid) is exempt. */
  final Map<String, List<String>> exemptions = new HashMap<>();

  final Set<ThresholdState> thresholdStates = Collections.newSetFromMap(new IdentityHashMap<>());

  /** Which firing inserted each fact, by identity. */
  final Map<Object, Firing> producedBy = new IdentityHashMap<>();

  final List<Firing> firings = new ArrayList<>();

  /**
   * Facts described for this sync's trace, by identity: many firings match the same observation,
   * clock or threshold, and rendering each again was a quarter of what a sync allocated.
   */
  final Map<Object, String> descriptions = new IdentityHashMap<>();

  volatile String phase = "";
  volatile Firing currentFiring;
  volatile String lastRule;
  volatile boolean stopRequested;
  volatile Firing firingAtTimeout;
  volatile String phaseAtTimeout = "";

  /** Forgets what the last sync recorded (the facts themselves are retracted by the caller). */
  void clearSync() {
    perSyncHandles.clear();
    perSyncFacts.clear();
    lastRanking = null;
    lastRankingEntries = null;
    producedBy.clear();
    firings.clear();
    descriptions.clear();
    currentFiring = null;
    lastRule = null;
  }
}
