package dev.evictd.engine;

import dev.evictd.api.ConditionState;
import dev.evictd.api.EvictionConfig;
import dev.evictd.api.Observation;
import dev.evictd.api.PerSyncFact;
import dev.evictd.api.PodFact;
import dev.evictd.api.RankKey;
import dev.evictd.api.Signal;
import dev.evictd.api.SignalLastObserved;
import dev.evictd.api.SyncClock;
import dev.evictd.api.Threshold;
import dev.evictd.api.ThresholdState;
import dev.evictd.k8s.Observations;
import dev.evictd.stats.Summary;
import io.fabric8.kubernetes.api.model.Pod;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Collection;
import java.util.Collections;
import java.util.EnumMap;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import org.kie.api.runtime.rule.FactHandle;

/**
 * The planner's input facts and their handles in the session: the configuration and thresholds, the
 * sync clock, the node's observations, each active pod with its statistics, and the state facts
 * kept from before the sync (what a failed sync's fresh session starts from). Each sync updates
 * them in place, so the engine re-evaluates only what changed. Every method that takes the session
 * runs on the rule thread.
 */
final class SessionFacts {
  /** The classes of the state facts the planner carries from sync to sync. */
  private static final List<Class<?>> STATE_CLASSES =
      List.of(ThresholdState.class, ConditionState.class, SignalLastObserved.class);

  private final EvictionConfig config;
  private final dev.evictd.api.Kubelet kubelet;
  private SyncClock clock = new SyncClock(0, Instant.EPOCH);
  private FactHandle clockHandle;
  private final Map<Signal, FactHandle> observationHandles = new EnumMap<>(Signal.class);
  private final Map<Signal, Observation> observations = new EnumMap<>(Signal.class);
  private final Map<String, PodEntry> pods = new HashMap<>();

  /** The active pods of the last sync, in order. */
  private List<PodEntry> activeEntries = List.of();

  private volatile List<Object> stateBeforeSync = List.of();

  SessionFacts(EvictionConfig config) {
    this.config = config;
    this.kubelet =
        config.kubelet() != null ? config.kubelet() : dev.evictd.k8s.KubeletFeatureGates.newest();
  }

  /** The kubelet the rules follow (a fact of its own). */
  dev.evictd.api.Kubelet kubelet() {
    return kubelet;
  }

  /** Starts sync {@code seq} at {@code now} (the clock the session sees from the next update). */
  void clock(long seq, Instant now) {
    clock = new SyncClock(seq, now);
  }

  /** The number of the current sync. */
  long seq() {
    return clock.seq();
  }

  /** Inserts every input fact, then the given state facts, into a new session. */
  void loadInto(GuardedSession session, List<Object> state) {
    session.insert(config);
    session.insert(kubelet);
    for (Threshold t : config.thresholds()) {
      session.insert(t);
    }
    clockHandle = session.insert(clock);
    for (Map.Entry<Signal, Observation> e : observations.entrySet()) {
      observationHandles.put(e.getKey(), session.insert(e.getValue()));
    }
    for (PodEntry e : pods.values()) {
      e.factHandle = session.insert(e.fact);
      e.statsHandle = e.stats == null ? null : session.insert(e.stats);
    }
    for (Object o : state) {
      session.insert(o);
    }
  }

  /**
   * Forgets the pods and observations (after a failed sync: they come back with the next sync's, so
   * a pod that made a condition fail is not loaded again if it is gone).
   */
  void forget() {
    pods.clear();
    observations.clear();
    observationHandles.clear();
  }

  /**
   * The state facts the session holds (first-observed times, conditions, last observations); with
   * no session, those kept before the last sync.
   */
  List<Object> stateFacts(GuardedSession session) {
    if (!session.isOpen()) {
      return stateBeforeSync;
    }
    List<Object> out = new ArrayList<>();
    for (Class<?> c : STATE_CLASSES) {
      out.addAll(session.objectsOf(c));
    }
    return out;
  }

  /** The state facts kept before the current sync. */
  List<Object> stateBeforeSync() {
    return stateBeforeSync;
  }

  /**
   * Keeps {@code state} as the state before the sync (copies: a stuck thread cannot reach them).
   */
  void keepState(List<Object> state) {
    stateBeforeSync = state;
  }

  /** A copy of the state facts, which a stuck thread cannot reach. */
  static List<Object> copies(List<Object> state) {
    List<Object> out = new ArrayList<>();
    for (Object o : state) {
      if (o instanceof ThresholdState t) {
        ThresholdState c = new ThresholdState(t.getThreshold(), t.getFirstObservedAt());
        c.setActedOn(t.isActedOn());
        out.add(c);
      } else if (o instanceof ConditionState c) {
        out.add(new ConditionState(c.getType(), c.getLastObservedAt()));
      } else if (o instanceof SignalLastObserved l) {
        out.add(new SignalLastObserved(l.getSignal(), l.getTime()));
      }
    }
    return out;
  }

  /** Retracts the last sync's per-sync facts still in the session and forgets what it recorded. */
  void clearPerSync(GuardedSession session) {
    SessionRecord st = session.record();
    for (FactHandle h : st.perSyncHandles) {
      if (session.present(h)) {
        session.delete(h);
      }
    }
    st.clearSync();
  }

  /** Moves the session's clock to this sync. */
  void updateClock(GuardedSession session) {
    session.update(clockHandle, clock);
  }

  /**
   * Inserts facts the caller gives for this sync (events, extra observations); those that are not
   * {@link PerSyncFact}s are retracted at the next sync all the same.
   */
  void insertForSync(GuardedSession session, Collection<?> facts) {
    SessionRecord st = session.record();
    for (Object f : facts) {
      FactHandle h = session.insert(f);
      if (!(f instanceof PerSyncFact)) {
        st.perSyncHandles.add(h);
        st.perSyncFacts.add(f);
      }
    }
  }

  /** Brings the observations up to the summary's (each updated: rules join the clock). */
  void updateObservations(GuardedSession session, Summary summary) {
    Map<Signal, Observation> now = Observations.of(summary);
    for (Signal s : Signal.values()) {
      Observation o = now.get(s);
      FactHandle h = observationHandles.get(s);
      if (o == null) {
        if (h != null) {
          session.delete(h);
          observationHandles.remove(s);
          observations.remove(s);
        }
      } else if (h == null) {
        observationHandles.put(s, session.insert(o));
        observations.put(s, o);
      } else if (!o.equals(observations.get(s))) {
        session.update(h, o);
        observations.put(s, o);
      } else {
        // Same statistics as last sync: still re-evaluated, since rules join the clock.
        session.update(h, o);
      }
    }
  }

  /**
   * Brings the pods and their statistics up to this sync's active list: new pods inserted, changed
   * ones updated, gone ones retracted; a duplicate uid is ignored with a warning.
   */
  void updatePods(
      GuardedSession session, List<Pod> activePods, Summary summary, List<String> warnings) {
    long seq = seq();
    // The active pods in order, a duplicate uid ignored; facts for new and changed pods are built
    // before the session is touched (a pod that cannot be read fails the sync with the session as
    // it was).
    List<PodEntry> active = new ArrayList<>(activePods.size());
    Map<String, PodEntry> fresh = null;
    int position = 0;
    for (Pod pod : activePods) {
      String uid = PodFacts.uid(pod);
      PodEntry e = pods.get(uid);
      if (e == null && fresh != null) {
        e = fresh.get(uid);
      }
      if (e != null && e.seenAt == seq) {
        warnings.add(
            "pod "
                + PodFacts.namespace(pod)
                + "/"
                + PodFacts.name(pod)
                + ": duplicate uid "
                + uid
                + " ignored");
        continue;
      }
      if (e == null) {
        e = new PodEntry();
        e.uid = uid;
        if (fresh == null) {
          fresh = new HashMap<>();
        }
        fresh.put(uid, e);
        e.nextFact = PodFacts.of(pod, position, kubelet);
      } else if (e.pod != pod && !e.pod.equals(pod)) {
        e.nextFact = PodFacts.of(pod, position, kubelet);
      } else {
        e.nextFact = null;
      }
      e.seenAt = seq;
      e.next = pod;
      e.nextRaw = null;
      active.add(e);
      position++;
    }
    // Their statistics: the kubelet's cachedStatsFunc fills a map in summary order, a later entry
    // for a uid wins.
    if (summary != null) {
      for (Summary.PodStats ps : summary.pods()) {
        if (ps != null && ps.podRef() != null && ps.podRef().uid() != null) {
          String uid = ps.podRef().uid();
          PodEntry e = pods.get(uid);
          if (e == null && fresh != null) {
            e = fresh.get(uid);
          }
          if (e != null && e.seenAt == seq) {
            e.nextRaw = ps;
          }
        }
      }
    }
    position = 0;
    for (PodEntry e : active) {
      updateEntry(session, e, position);
      position++;
    }
    activeEntries = active;
    var it = pods.values().iterator();
    while (it.hasNext()) {
      PodEntry e = it.next();
      if (e.seenAt != seq) {
        session.delete(e.factHandle);
        if (e.statsHandle != null) {
          session.delete(e.statsHandle);
        }
        it.remove();
      }
    }
  }

  /** Puts one active pod's new fact and statistics (prepared by updatePods) into the session. */
  private void updateEntry(GuardedSession session, PodEntry e, int position) {
    Pod pod = e.next;
    e.next = null;
    if (e.factHandle == null) {
      e.pod = pod;
      e.fact = e.nextFact;
      e.factHandle = session.insert(e.fact);
      pods.put(e.uid, e);
    } else if (e.nextFact != null) {
      e.pod = pod;
      e.fact = e.nextFact;
      session.update(e.factHandle, e.fact);
      e.rawStats = null; // local volumes may have changed: rebuild the statistics fact
    } else {
      e.pod = pod;
      if (e.fact.position() != position) {
        e.fact = e.fact.withPosition(position);
        session.update(e.factHandle, e.fact);
      }
    }
    e.nextFact = null;
    Summary.PodStats raw = e.nextRaw;
    e.nextRaw = null;
    if (raw == null) {
      if (e.statsHandle != null) {
        session.delete(e.statsHandle);
        e.statsHandle = null;
        e.stats = null;
        e.rawStats = null;
      }
    } else if (e.rawStats == null || !e.rawStats.equals(raw)) {
      e.rawStats = raw;
      e.stats = PodFacts.stats(e.fact, raw);
      if (e.statsHandle == null) {
        e.statsHandle = session.insert(e.stats);
      } else {
        session.update(e.statsHandle, e.stats);
      }
    }
  }

  /** The facts of this sync's active pods, in order. */
  List<PodFact> activeFacts() {
    List<PodFact> out = new ArrayList<>(activeEntries.size());
    for (PodEntry e : activeEntries) {
      out.add(e.fact);
    }
    return out;
  }

  /** The pod the planner holds with this uid, or null. */
  PodEntry entry(String uid) {
    return pods.get(uid);
  }

  /** The fact of this sync's active pod with this uid, or null when no active pod has it. */
  PodFact activeFact(String uid) {
    PodEntry e = pods.get(uid);
    return e == null || e.seenAt != seq() ? null : e.fact;
  }

  /**
   * The active pod a rank key is for: by its position in the active list, else by uid; null when
   * not active.
   */
  PodEntry entryOf(RankKey k) {
    int p = k.position();
    if (p >= 0 && p < activeEntries.size()) {
      PodEntry e = activeEntries.get(p);
      if (e.uid.equals(k.uid())) {
        return e;
      }
    }
    return pods.get(k.uid());
  }

  /** The node's observations as of the last update, by signal. */
  Map<Signal, Observation> observations() {
    return Collections.unmodifiableMap(observations);
  }

  /** How many pods the planner holds. */
  int podCount() {
    return pods.size();
  }
}
