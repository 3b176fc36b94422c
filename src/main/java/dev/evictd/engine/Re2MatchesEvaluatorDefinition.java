package dev.evictd.engine;

import java.io.IOException;
import java.io.ObjectInput;
import java.io.ObjectOutput;
import org.drools.base.base.ValueResolver;
import org.drools.base.base.ValueType;
import org.drools.base.rule.accessor.Evaluator;
import org.drools.base.rule.accessor.FieldValue;
import org.drools.base.rule.accessor.ReadAccessor;
import org.drools.compiler.rule.builder.EvaluatorDefinition;
import org.drools.drl.parser.impl.Operator;
import org.drools.mvel.evaluators.BaseEvaluator;
import org.drools.mvel.evaluators.VariableRestriction;
import org.kie.api.runtime.rule.FactHandle;

/**
 * The DRL {@code matches} and {@code not matches} operators on RE2/J ({@link RuleRegex}): the whole
 * value must match, as with MVEL's operator; a null value matches nothing.
 */
public final class Re2MatchesEvaluatorDefinition implements EvaluatorDefinition {
  /** The operator this definition takes over from MVEL. */
  static final String MATCHES = "matches";

  private static final String[] IDS = {MATCHES};

  /** Creates the definition (Drools also creates it when reading a serialised rule base). */
  public Re2MatchesEvaluatorDefinition() {}

  @Override
  public String[] getEvaluatorIds() {
    return IDS.clone();
  }

  @Override
  public boolean isNegatable() {
    return true;
  }

  @Override
  public Evaluator getEvaluator(
      ValueType type, String operatorId, boolean isNegated, String parameterText) {
    return new Re2MatchesEvaluator(type, isNegated);
  }

  @Override
  public Evaluator getEvaluator(
      ValueType type,
      String operatorId,
      boolean isNegated,
      String parameterText,
      Target leftTarget,
      Target rightTarget) {
    return new Re2MatchesEvaluator(type, isNegated);
  }

  @Override
  public Evaluator getEvaluator(ValueType type, Operator operator, String parameterText) {
    return new Re2MatchesEvaluator(type, operator.isNegated());
  }

  @Override
  public Evaluator getEvaluator(ValueType type, Operator operator) {
    return new Re2MatchesEvaluator(type, operator.isNegated());
  }

  @Override
  public boolean supportsType(ValueType type) {
    return true;
  }

  @Override
  public Target getTarget() {
    return Target.FACT;
  }

  @Override
  public void writeExternal(ObjectOutput out) {}

  @Override
  public void readExternal(ObjectInput in) {}

  /** {@code value matches pattern} (or its negation) on RE2/J. */
  public static final class Re2MatchesEvaluator extends BaseEvaluator {
    private static final long serialVersionUID = 1L;
    private boolean negated;

    /** For deserialisation. */
    public Re2MatchesEvaluator() {}

    Re2MatchesEvaluator(ValueType type, boolean negated) {
      super(type, Operator.determineOperator(MATCHES, negated));
      this.negated = negated;
    }

    private boolean test(Object value, Object pattern) {
      if (value == null) {
        return false; // MVEL's operator: null matches nothing, "not matches" neither
      }
      if (pattern == null) {
        throw new IllegalArgumentException("matches: the regular expression is null");
      }
      boolean m = RuleRegex.matches(value.toString(), pattern.toString());
      return negated != m;
    }

    @Override
    public boolean evaluate(
        ValueResolver resolver, ReadAccessor extractor, FactHandle handle, FieldValue value) {
      return test(extractor.getValue(resolver, handle.getObject()), value.getValue());
    }

    @Override
    public boolean evaluate(
        ValueResolver resolver,
        ReadAccessor leftExtractor,
        FactHandle left,
        ReadAccessor rightExtractor,
        FactHandle right) {
      return test(
          leftExtractor.getValue(resolver, left.getObject()),
          rightExtractor.getValue(resolver, right.getObject()));
    }

    @Override
    public boolean evaluateCachedRight(
        ValueResolver resolver, VariableRestriction.VariableContextEntry context, FactHandle left) {
      Object pattern = context.declaration.getExtractor().getValue(resolver, left.getObject());
      return test(((VariableRestriction.ObjectVariableContextEntry) context).right, pattern);
    }

    @Override
    public boolean evaluateCachedLeft(
        ValueResolver resolver,
        VariableRestriction.VariableContextEntry context,
        FactHandle right) {
      Object value = context.extractor.getValue(resolver, right.getObject());
      return test(value, ((VariableRestriction.ObjectVariableContextEntry) context).left);
    }

    @Override
    public void writeExternal(ObjectOutput out) throws IOException {
      super.writeExternal(out);
      out.writeBoolean(negated);
    }

    @Override
    public void readExternal(ObjectInput in) throws IOException, ClassNotFoundException {
      super.readExternal(in);
      negated = in.readBoolean();
    }

    @Override
    public String toString() {
      return (negated ? "not " : "") + "matches (RE2/J)";
    }
  }
}
