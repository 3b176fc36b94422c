package dev.evictd.engine;

import static org.assertj.core.api.Assertions.assertThat;

import dev.evictd.api.EvictionConfig;
import dev.evictd.api.EvictionDecision;
import dev.evictd.api.EvictionMethod;
import dev.evictd.api.EvictionPlan.Refusal;
import dev.evictd.api.EvictionPlan.RefusedDecision;
import dev.evictd.api.FsLayout;
import dev.evictd.api.PodFact;
import dev.evictd.api.PodRef;
import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.PodBuilder;
import java.time.Duration;
import java.util.EnumSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/** The decision guard against decisions rules can make up. */
class DecisionGuardTest {
  static final EvictionConfig CONFIG =
      new EvictionConfig(
          "node-1", FsLayout.SHARED, List.of(), Duration.ofMinutes(5), 0, true, List.of());

  static PodFact pod(String ns, String name, String uid, String node, Long grace) {
    Pod p =
        new PodBuilder()
            .withNewMetadata()
            .withNamespace(ns)
            .withName(name)
            .withUid(uid)
            .endMetadata()
            .withNewSpec()
            .withNodeName(node)
            .withTerminationGracePeriodSeconds(grace)
            .addNewContainer()
            .withName("app")
            .endContainer()
            .endSpec()
            .build();
    return PodFacts.of(p, 0);
  }

  static final PodFact WEB = pod("apps", "web", "uid-web", "node-1", null);
  static final PodFact DB = pod("apps", "db", "uid-db", "node-1", 120L);
  static final PodFact ELSEWHERE = pod("kube-system", "dns", "uid-dns", "node-2", null);
  static final PodFact UNBOUND = pod("apps", "batch", "uid-batch", null, null);

  static EvictionDecision decision(PodRef pod, long grace, EvictionMethod method) {
    return decision(
        pod, "memory.available", grace, "The node was low on resource: memory. ", method);
  }

  static EvictionDecision decision(
      PodRef pod, String signal, long grace, String message, EvictionMethod method) {
    return new EvictionDecision(
        pod,
        EvictionDecision.Kind.PRESSURE,
        signal,
        grace,
        message,
        Map.of(),
        method,
        List.of("hostile rule", "rank rule"));
  }

  static DecisionGuard.Review review(DecisionGuard guard, EvictionDecision... decisions) {
    return review(guard, Map.of(), decisions);
  }

  static DecisionGuard.Review review(
      DecisionGuard guard, Map<String, List<String>> exempt, EvictionDecision... decisions) {
    Map<String, PodFact> active = new LinkedHashMap<>();
    for (PodFact p : List.of(WEB, DB, ELSEWHERE, UNBOUND)) {
      active.put(p.uid(), p);
    }
    return guard.review(List.of(decisions), active::get, exempt);
  }

  static final DecisionGuard GUARD = new DecisionGuard(CONFIG, DecisionGuard.Limits.DEFAULT);

  static Refusal reasonOf(DecisionGuard.Review r) {
    assertThat(r.accepted()).isEmpty();
    assertThat(r.refused()).hasSize(1);
    return r.refused().get(0).reason();
  }

  @Test
  void aDecisionForAnActivePodOfThisNodeIsAcceptedWithThatPodsOwnReference() {
    var refusedFirst = decision(new PodRef("apps", "evil", "uid-web"), 1, EvictionMethod.DEFAULT);
    var input = decision(WEB.ref(), 1, EvictionMethod.DEFAULT);
    var r = review(GUARD, refusedFirst, input);
    assertThat(r.refused()).hasSize(1);
    assertThat(r.accepted())
        .singleElement()
        .satisfies(d -> assertThat(d.pod()).isEqualTo(WEB.ref()));
    // the decision as the rules made it, for its trace: the accepted one, not the refused one
    assertThat(r.made()).singleElement().isSameAs(input);
    // a pod bound to no node yet is not another node's
    assertThat(review(GUARD, decision(UNBOUND.ref(), 1, EvictionMethod.DELETE)).accepted())
        .hasSize(1);
  }

  @Test
  void aPodNotInThisSyncsActiveListIsRefused() {
    // by namespace/name without the uid, with a made-up uid, with null
    assertThat(reasonOf(review(GUARD, decision(new PodRef("apps", "web", ""), 1, null))))
        .isEqualTo(Refusal.UNKNOWN_POD);
    assertThat(
            reasonOf(
                review(
                    GUARD,
                    decision(new PodRef("kube-system", "x", "made-up"), 1, EvictionMethod.DELETE))))
        .isEqualTo(Refusal.UNKNOWN_POD);
    assertThat(
            reasonOf(
                review(GUARD, decision(new PodRef("apps", "web", null), 1, EvictionMethod.DELETE))))
        .isEqualTo(Refusal.UNKNOWN_POD);
  }

  @Test
  void anActivePodsUidWithAnotherNamespaceOrNameIsRefused() {
    var r =
        review(
            GUARD,
            decision(
                new PodRef("apps", "web/../../../kube-system/pods/other?dryRun=All", "uid-web"),
                1,
                EvictionMethod.DELETE));
    assertThat(reasonOf(r)).isEqualTo(Refusal.POD_MISMATCH);
    assertThat(r.refused().get(0).detail()).contains("uid uid-web is pod apps/web");
    assertThat(
            reasonOf(
                review(
                    GUARD,
                    decision(
                        new PodRef("kube-system", "web", "uid-web"), 1, EvictionMethod.DELETE))))
        .isEqualTo(Refusal.POD_MISMATCH);
  }

  @Test
  void aPodBoundToAnotherNodeIsRefusedEvenWhenTheListHasIt() {
    assertThat(reasonOf(review(GUARD, decision(ELSEWHERE.ref(), 1, EvictionMethod.DELETE))))
        .isEqualTo(Refusal.OTHER_NODE);
  }

  @Test
  void theFirstDecisionForAPodIsKeptAndAnExemptPodIsNeverEvicted() {
    var r =
        review(
            GUARD,
            decision(WEB.ref(), 1, EvictionMethod.EVICT),
            decision(WEB.ref(), 1, EvictionMethod.DELETE));
    assertThat(r.accepted())
        .singleElement()
        .satisfies(d -> assertThat(d.method()).isEqualTo(EvictionMethod.EVICT));
    assertThat(r.refused()).extracting(RefusedDecision::reason).containsExactly(Refusal.DUPLICATE);

    var exempt =
        review(
            GUARD,
            Map.of("uid-web", List.of("critical pod")),
            decision(WEB.ref(), 1, EvictionMethod.DEFAULT));
    assertThat(reasonOf(exempt)).isEqualTo(Refusal.EXEMPT);
    assertThat(exempt.refused().get(0).detail()).contains("critical pod");
  }

  @Test
  void staticMirrorAndCriticalPodsAreNeverEvictedEvenWithoutAnExemption() {
    Pod critical =
        new PodBuilder()
            .withNewMetadata()
            .withNamespace("kube-system")
            .withName("etcd")
            .withUid("uid-etcd")
            .addToAnnotations("kubernetes.io/config.source", "file")
            .endMetadata()
            .withNewSpec()
            .withNodeName("node-1")
            .endSpec()
            .build();
    PodFact etcd = PodFacts.of(critical, 0);
    assertThat(etcd.critical()).isTrue();
    var r =
        GUARD.review(
            List.of(decision(etcd.ref(), 1, EvictionMethod.DELETE)),
            uid -> uid.equals("uid-etcd") ? etcd : null,
            Map.of());
    assertThat(reasonOf(r)).isEqualTo(Refusal.CRITICAL);
    assertThat(r.refused().get(0).detail()).contains("kube-system/etcd is a static pod");
  }

  @Test
  void aMethodTheConfigurationDoesNotAllowIsRefused() {
    DecisionGuard evictOnly =
        new DecisionGuard(CONFIG, new DecisionGuard.Limits(EnumSet.of(EvictionMethod.EVICT), 1024));
    assertThat(reasonOf(review(evictOnly, decision(WEB.ref(), 1, EvictionMethod.DELETE))))
        .isEqualTo(Refusal.METHOD);
    assertThat(reasonOf(review(evictOnly, decision(WEB.ref(), 1, EvictionMethod.KILL))))
        .isEqualTo(Refusal.METHOD);
    assertThat(review(evictOnly, decision(WEB.ref(), 1, EvictionMethod.EVICT)).accepted())
        .hasSize(1);
    // DEFAULT is the configured executor, which the configuration itself must allow
    assertThat(review(evictOnly, decision(WEB.ref(), 1, EvictionMethod.DEFAULT)).accepted())
        .hasSize(1);
  }

  @Test
  void aSignalThatIsNoEvictionSignalIsRefused() {
    assertThat(
            reasonOf(review(GUARD, decision(WEB.ref(), "zombie", 1, "m", EvictionMethod.DEFAULT))))
        .isEqualTo(Refusal.SIGNAL);
    assertThat(
            review(GUARD, decision(WEB.ref(), "emptydirfs.limit", 1, "m", EvictionMethod.DEFAULT))
                .accepted())
        .hasSize(1);
  }

  @Test
  void gracePeriodsMayShortenWhatThePodAndTheNodeAllowNeverLengthenIt() {
    // the pod sets none: the API server's 30 s
    assertThat(reasonOf(review(GUARD, decision(WEB.ref(), 31, EvictionMethod.DEFAULT))))
        .isEqualTo(Refusal.GRACE_PERIOD);
    assertThat(reasonOf(review(GUARD, decision(WEB.ref(), -1, EvictionMethod.DEFAULT))))
        .isEqualTo(Refusal.GRACE_PERIOD);
    assertThat(review(GUARD, decision(WEB.ref(), 30, EvictionMethod.DEFAULT)).accepted())
        .hasSize(1);
    assertThat(review(GUARD, decision(WEB.ref(), 0, EvictionMethod.DEFAULT)).accepted()).hasSize(1);
    // the pod's own 120 s
    assertThat(review(GUARD, decision(DB.ref(), 120, EvictionMethod.DEFAULT)).accepted())
        .hasSize(1);
    assertThat(reasonOf(review(GUARD, decision(DB.ref(), 121, EvictionMethod.DEFAULT))))
        .isEqualTo(Refusal.GRACE_PERIOD);
    // the node's evictionMaxPodGracePeriod
    var generous =
        new DecisionGuard(
            new EvictionConfig(
                "node-1", FsLayout.SHARED, List.of(), Duration.ofMinutes(5), 600, true, List.of()),
            DecisionGuard.Limits.DEFAULT);
    assertThat(review(generous, decision(WEB.ref(), 600, EvictionMethod.DEFAULT)).accepted())
        .hasSize(1);
  }

  @Test
  void messagesAreBoundedAndStrippedOfControlAndFormatCharacters() {
    String hostile = "line one\nline two\r\u001b[31mred\u202egnirts\u0000end";
    var r = review(GUARD, decision(WEB.ref(), "memory.available", 1, hostile, null));
    assertThat(r.accepted())
        .singleElement()
        .satisfies(
            d -> {
              assertThat(d.message()).isEqualTo("line one line two  [31mred gnirts end");
              assertThat(d.message().codePoints()).noneMatch(Character::isISOControl);
            });
    String huge = "x".repeat(5000);
    var cut = review(GUARD, decision(WEB.ref(), "memory.available", 1, huge, null));
    assertThat(cut.accepted().get(0).message())
        .hasSize(DecisionGuard.MAX_MESSAGE_LENGTH)
        .endsWith("...");
    assertThat(cut.warnings()).singleElement().asString().contains("cut to 1024 characters");
    // a surrogate pair at the cut is not split
    String emoji = "a".repeat(1020) + "\uD83D\uDE00".repeat(3);
    var pair = review(GUARD, decision(WEB.ref(), "memory.available", 1, emoji, null));
    assertThat(pair.accepted().get(0).message()).isEqualTo("a".repeat(1020) + "...");
  }

  @Test
  void annotationsWithKeysKubernetesRefusesAreDroppedAndValuesCleaned() {
    var d =
        new EvictionDecision(
            WEB.ref(),
            EvictionDecision.Kind.PRESSURE,
            "memory.available",
            1,
            "m",
            Map.of("starved_resource", "memory\n", "bad key/../x", "v", "", "empty"),
            EvictionMethod.DEFAULT,
            List.of("r"));
    var r = review(GUARD, d);
    assertThat(r.accepted().get(0).annotations())
        .containsExactly(Map.entry("starved_resource", "memory "));
    assertThat(r.warnings()).hasSize(2).allMatch(w -> w.contains("is not an annotation key"));
  }

  @Test
  void aRefusalNamesTheRuleThatMadeTheDecisionAndShowsThePodNameCleaned() {
    var r =
        review(
            GUARD,
            decision(new PodRef("kube-system", "evil\nFAKE LOG LINE", "nope"), 1, null),
            new EvictionDecision(
                null,
                EvictionDecision.Kind.PRESSURE,
                "memory.available",
                1,
                "m",
                Map.of(),
                null,
                List.of()));
    assertThat(r.refused()).hasSize(2);
    RefusedDecision first = r.refused().get(0);
    assertThat(first.rule()).isEqualTo("hostile rule");
    assertThat(first.pod().name()).isEqualTo("evil FAKE LOG LINE");
    assertThat(r.refused().get(1).reason()).isEqualTo(Refusal.INVALID);
    assertThat(r.refused().get(1).rule()).isEqualTo("(unknown rule)");
  }
}
