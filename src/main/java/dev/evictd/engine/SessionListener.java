package dev.evictd.engine;

import dev.evictd.api.EvictionExempt;
import dev.evictd.api.PerSyncFact;
import dev.evictd.api.ThresholdState;
import java.util.ArrayList;
import java.util.List;
import org.kie.api.event.rule.AfterMatchFiredEvent;
import org.kie.api.event.rule.AgendaEventListener;
import org.kie.api.event.rule.BeforeMatchFiredEvent;
import org.kie.api.event.rule.DefaultAgendaEventListener;
import org.kie.api.event.rule.ObjectDeletedEvent;
import org.kie.api.event.rule.ObjectInsertedEvent;
import org.kie.api.event.rule.ObjectUpdatedEvent;
import org.kie.api.event.rule.RuleRuntimeEventListener;
import org.kie.api.runtime.KieSession;

/**
 * Listens to one session on its rule thread and writes what happens into that session's {@link
 * SessionRecord}: the per-sync facts (to retract them next sync), exemptions, threshold states, the
 * facts rules inserted, and each rule firing with what it matched and produced (the plan's trace
 * and the decisions' provenance).
 */
final class SessionListener extends DefaultAgendaEventListener implements RuleRuntimeEventListener {
  private final SessionRecord st;

  SessionListener(SessionRecord st) {
    this.st = st;
  }

  /** Attaches a listener writing into {@code record} to {@code session}, for facts and firings. */
  static void attach(KieSession session, SessionRecord record) {
    SessionListener l = new SessionListener(record);
    session.addEventListener((RuleRuntimeEventListener) l);
    session.addEventListener((AgendaEventListener) l);
  }

  @Override
  public void objectInserted(ObjectInsertedEvent event) {
    Object o = event.getObject();
    if (o instanceof PerSyncFact) {
      st.perSyncHandles.add(event.getFactHandle());
      st.perSyncFacts.add(o);
    } else if (o instanceof EvictionExempt x) {
      st.exemptions.computeIfAbsent(x.uid(), k -> new ArrayList<>()).add(x.reason());
    } else if (o instanceof ThresholdState ts) {
      st.thresholdStates.add(ts);
    }
    if (st.currentFiring != null) {
      st.currentFiring.produced().add(o);
      st.producedBy.put(o, st.currentFiring);
      st.ruleInserted.put(event.getFactHandle(), o);
    }
  }

  @Override
  public void objectUpdated(ObjectUpdatedEvent event) {
    Object old = event.getOldObject();
    Object o = event.getObject();
    if (old instanceof PerSyncFact && old != o) {
      st.perSyncFacts.remove(old);
      st.perSyncFacts.add(o);
    }
    if (old != o && st.ruleInserted.containsKey(event.getFactHandle())) {
      st.ruleInserted.put(event.getFactHandle(), o);
    }
  }

  @Override
  public void objectDeleted(ObjectDeletedEvent event) {
    Object o = event.getOldObject();
    st.ruleInserted.remove(event.getFactHandle());
    if (o instanceof ThresholdState ts) {
      st.thresholdStates.remove(ts);
    }
    if (o instanceof EvictionExempt x) {
      List<String> l = st.exemptions.get(x.uid());
      if (l != null) {
        l.remove(x.reason());
        if (l.isEmpty()) {
          st.exemptions.remove(x.uid());
        }
      }
    } else if (o instanceof PerSyncFact && !st.phase.isEmpty()) {
      st.perSyncFacts.remove(o);
    }
  }

  @Override
  public void beforeMatchFired(BeforeMatchFiredEvent event) {
    st.currentFiring =
        new Firing(st.phase, event.getMatch().getRule().getName(), event.getMatch().getObjects());
    st.firings.add(st.currentFiring);
    st.lastRule = st.currentFiring.rule();
  }

  @Override
  public void afterMatchFired(AfterMatchFiredEvent event) {
    st.currentFiring = null;
  }
}
