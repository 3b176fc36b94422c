package dev.evictd.ruleset;

import static org.assertj.core.api.Assertions.assertThat;

import dev.evictd.engine.RuleSet;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.kie.api.KieBase;

/**
 * The packaged model's rule base built ahead at start ({@link PrebuiltModel#buildAhead}) is what
 * the first load of the packaged sources gets, and only that load.
 */
class PrebuiltModelAheadTest {
  @AfterEach
  void asInANewProcess() {
    PrebuiltModel.forgetAhead();
  }

  @Test
  void theFirstLoadOfThePackagedSourcesTakesTheBaseBuiltAheadAndNoLaterOne() {
    PrebuiltModel.forgetAhead();
    PrebuiltModel.Marker m = PrebuiltModel.marker();
    assertThat(m).isNotNull();
    KieBase ahead = PrebuiltModel.buildAhead();
    assertThat(ahead).isNotNull();
    assertThat(PrebuiltModel.load(m, m.sourcesSha256())).isSameAs(ahead);
    KieBase again = PrebuiltModel.load(m, m.sourcesSha256());
    assertThat(again).isNotNull().isNotSameAs(ahead);
    // once a load has asked, nothing is built ahead any more
    assertThat(PrebuiltModel.buildAhead()).isNull();
    assertThat(PrebuiltModel.load(m, m.sourcesSha256())).isNotNull().isNotSameAs(ahead);
  }

  @Test
  void otherSourcesOrAnotherMarkerLeaveIt() {
    PrebuiltModel.forgetAhead();
    PrebuiltModel.Marker m = PrebuiltModel.marker();
    KieBase ahead = PrebuiltModel.buildAhead();
    assertThat(PrebuiltModel.load(m, "0".repeat(64))).isNull();
    PrebuiltModel.Marker other =
        new PrebuiltModel.Marker(
            "1".repeat(64),
            m.evictdVersion(),
            m.droolsVersion(),
            m.models(),
            m.factClasses(),
            m.factClassesSha256());
    KieBase own = PrebuiltModel.load(other, other.sourcesSha256());
    assertThat(own).isNotNull().isNotSameAs(ahead);
    assertThat(PrebuiltModel.load(m, m.sourcesSha256())).isSameAs(ahead);
  }

  @Test
  void theDefaultRulesCompiledAfterwardsAreThoseBuiltAhead() {
    PrebuiltModel.forgetAhead();
    RuleCompiler.buildDefaultAhead();
    RuleSet rs = RuleCompiler.compileDefault();
    assertThat(PrebuiltModelParityTest.fromModel(rs.kieBase())).isTrue();
    assertThat(rs.source()).isEqualTo("default");
    assertThat(RuleCompiler.compileDefault().kieBase()).isNotSameAs(rs.kieBase());
  }
}
