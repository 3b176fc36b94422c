package dev.evictd.cli;

import dev.evictd.api.EvictionConfig;
import dev.evictd.api.EvictionDecision;
import dev.evictd.api.EvictionPlan;
import dev.evictd.api.Observation;
import dev.evictd.api.RankKey;
import dev.evictd.api.Threshold;
import dev.evictd.config.GoDuration;
import dev.evictd.engine.RuleSet;
import dev.evictd.fixture.Fixture;
import dev.evictd.fixture.FixtureResult;
import tools.jackson.databind.SerializationFeature;
import tools.jackson.databind.json.JsonMapper;
import tools.jackson.databind.node.ArrayNode;
import tools.jackson.databind.node.JsonNodeFactory;
import tools.jackson.databind.node.ObjectNode;

/** Renders plans as JSON: a stable, explicit shape for scripts. */
final class PlanJson {
  private static final JsonNodeFactory F = JsonNodeFactory.instance;
  private static final JsonMapper MAPPER =
      JsonMapper.builder().enable(SerializationFeature.INDENT_OUTPUT).build();

  private PlanJson() {}

  static String write(ObjectNode n) {
    return MAPPER.writeValueAsString(n);
  }

  static String replay(Fixture f, RuleSet rs, FixtureResult r) {
    ObjectNode root = F.objectNode();
    root.put("fixture", f.name());
    root.put("file", f.file().toString());
    root.set("rules", rules(rs));
    root.set("config", config(f.config()));
    ArrayNode steps = root.putArray("steps");
    for (EvictionPlan p : r.plans()) {
      steps.add(plan(p));
    }
    root.put("result", r.status().name());
    if (r.mismatch() != null) {
      root.put("mismatch", r.mismatch().toString());
    }
    return write(root);
  }

  static ObjectNode rules(RuleSet rs) {
    ObjectNode n = F.objectNode();
    n.put("source", rs.source());
    n.put("sha256", rs.sha256());
    ArrayNode files = n.putArray("files");
    rs.files().forEach(files::add);
    return n;
  }

  static ObjectNode config(EvictionConfig c) {
    ObjectNode n = F.objectNode();
    n.put("nodeName", c.nodeName());
    n.put("fsLayout", c.fsLayout().key());
    n.put("pressureTransitionPeriod", GoDuration.format(c.pressureTransitionPeriod()));
    n.put("maxPodGracePeriodSeconds", c.maxPodGracePeriodSeconds());
    n.put("localStorageCapacityIsolation", c.localStorageCapacityIsolation());
    ArrayNode ts = n.putArray("thresholds");
    for (Threshold t : c.thresholds()) {
      ts.add(threshold(t));
    }
    ArrayNode w = n.putArray("warnings");
    c.warnings().forEach(w::add);
    return n;
  }

  static ObjectNode threshold(Threshold t) {
    ObjectNode n = F.objectNode();
    n.put("id", t.id());
    n.put("signal", t.signal().key());
    n.put("value", t.value().text());
    n.put("hard", t.isHard());
    n.put("gracePeriod", GoDuration.format(t.gracePeriod()));
    if (t.minReclaim() != null) {
      n.put("minReclaim", t.minReclaim().text());
    }
    n.put("origin", t.origin());
    return n;
  }

  static ObjectNode plan(EvictionPlan p) {
    ObjectNode n = F.objectNode();
    n.put("seq", p.seq());
    n.put("time", p.now().toString());
    ArrayNode obs = n.putArray("observations");
    for (Observation o : p.observations()) {
      ObjectNode on = obs.addObject();
      on.put("signal", o.signal().key());
      on.put("available", o.available());
      on.put("capacity", o.capacity());
      if (o.time() != null) {
        on.put("time", o.time().toString());
        on.put("ageMillis", Math.max(0, java.time.Duration.between(o.time(), p.now()).toMillis()));
      }
      on.put("source", p.source(o.signal()));
    }
    ArrayNode ts = n.putArray("thresholds");
    for (EvictionPlan.ThresholdStatus s : p.thresholds()) {
      ObjectNode tn = ts.addObject();
      tn.put("id", s.threshold().id());
      if (s.quantity() != null) {
        tn.put("quantity", s.quantity().toString());
      }
      if (s.available() != null) {
        tn.put("available", s.available());
      }
      tn.put("met", s.met());
      tn.put("unresolved", s.unresolved());
      tn.put("active", s.active());
      if (s.firstObservedAt() != null) {
        tn.put("firstObservedAt", s.firstObservedAt().toString());
      }
      tn.put("gracePeriodMet", s.gracePeriodMet());
      tn.put("actionable", s.actionable());
    }
    ArrayNode cs = n.putArray("conditions");
    p.conditions().forEach(c -> cs.add(c.name()));
    if (p.signal() != null) {
      n.put("signal", p.signal().key());
    } else {
      n.putNull("signal");
    }
    ArrayNode rc = n.putArray("reclaimed");
    p.reclaimed().forEach(a -> rc.add(a.key()));
    n.put("reclaimResolved", p.reclaimResolved());
    ArrayNode rk = n.putArray("ranking");
    for (EvictionPlan.RankedPod r : p.ranking()) {
      ObjectNode rn = rk.addObject();
      rn.put("pod", r.pod().key());
      rn.put("uid", r.pod().uid());
      ObjectNode keys = rn.putObject("key");
      for (RankKey.Component c : r.key()) {
        keys.put(c.name(), c.value());
      }
      if (r.exemptReason() != null) {
        rn.put("exempt", r.exemptReason());
      }
    }
    ArrayNode ds = n.putArray("decisions");
    for (EvictionDecision d : p.decisions()) {
      ds.add(decision(d));
    }
    ArrayNode rf = n.putArray("refused");
    for (EvictionPlan.RefusedDecision r : p.refused()) {
      ObjectNode rn = rf.addObject();
      if (r.pod() != null) {
        rn.put("pod", r.pod().key());
        rn.put("uid", r.pod().uid());
      }
      rn.put("reason", r.reason().label());
      rn.put("detail", r.detail());
      ArrayNode rules = rn.putArray("rules");
      r.rules().forEach(rules::add);
    }
    ArrayNode fs = n.putArray("firings");
    for (EvictionPlan.RuleFiring f : p.firings()) {
      ObjectNode fn = fs.addObject();
      fn.put("phase", f.phase());
      fn.put("rule", f.rule());
      ArrayNode facts = fn.putArray("matched");
      f.facts().forEach(facts::add);
      ArrayNode produced = fn.putArray("produced");
      f.produced().forEach(produced::add);
    }
    ArrayNode ws = n.putArray("warnings");
    p.warnings().forEach(ws::add);
    if (p.failure() != null) {
      n.put("failure", p.failure());
    }
    return n;
  }

  static ObjectNode decision(EvictionDecision d) {
    ObjectNode n = F.objectNode();
    n.put("pod", d.pod().key());
    n.put("uid", d.pod().uid());
    n.put("kind", d.kind().name());
    n.put("signal", d.signal());
    n.put("gracePeriodSeconds", d.gracePeriodSeconds());
    n.put("message", d.message());
    ObjectNode a = n.putObject("annotations");
    d.annotations().forEach(a::put);
    n.put("method", d.method().name());
    ArrayNode r = n.putArray("rules");
    d.rules().forEach(r::add);
    return n;
  }
}
