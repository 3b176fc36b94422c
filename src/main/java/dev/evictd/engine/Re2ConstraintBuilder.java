package dev.evictd.engine;

import java.util.ArrayList;
import java.util.List;
import org.drools.compiler.rule.builder.EvaluatorDefinition;
import org.drools.mvel.MVELConstraintBuilder;

/**
 * Drools' constraint builder with one change: the DRL {@code matches} operator is evaluated by
 * {@link Re2MatchesEvaluatorDefinition} (RE2/J, linear time) instead of MVEL's {@code
 * java.util.regex}, whose backtracking a pattern like {@code (.*a){20}b} turns into hours. Loaded
 * by Drools' service lookup (META-INF/services), where its higher priority wins over MVEL's own.
 */
public final class Re2ConstraintBuilder extends MVELConstraintBuilder {
  /** Creates the builder (the service loader calls it). */
  public Re2ConstraintBuilder() {}

  @Override
  public int servicePriority() {
    return 1;
  }

  @Override
  public boolean isMvelOperator(String operator) {
    return !Re2MatchesEvaluatorDefinition.MATCHES.equals(operator)
        && super.isMvelOperator(operator);
  }

  @Override
  public List<EvaluatorDefinition> getEvaluatorDefinitions() {
    List<EvaluatorDefinition> out = new ArrayList<>(super.getEvaluatorDefinitions());
    out.add(new Re2MatchesEvaluatorDefinition());
    return out;
  }
}
