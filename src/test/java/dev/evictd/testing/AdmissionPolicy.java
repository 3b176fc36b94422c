package dev.evictd.testing;

import dev.cel.bundle.Cel;
import dev.cel.bundle.CelFactory;
import dev.cel.common.CelAbstractSyntaxTree;
import dev.cel.common.CelValidationException;
import dev.cel.common.types.SimpleType;
import dev.cel.parser.CelStandardMacro;
import dev.cel.runtime.CelEvaluationException;
import dev.cel.runtime.CelRuntime;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import tools.jackson.databind.JsonNode;
import tools.jackson.dataformat.yaml.YAMLMapper;

/**
 * A ValidatingAdmissionPolicy (admissionregistration.k8s.io/v1) evaluated as the API server does,
 * with Google's CEL for Java: the match conditions (all true, or the policy does not apply), the
 * variables in order (as {@code variables.NAME}), then the validations in order; the first that is
 * false or fails denies with its message (failurePolicy Fail: an evaluation error denies too). The
 * request, object, oldObject and params are plain maps and lists, shaped as the API server hands
 * them to CEL (an AdmissionRequest and objects as JSON, with {@code omitempty} fields absent);
 * {@code null} stands for an absent object (oldObject on CREATE, object on DELETE, params when no
 * binding gives any). Every expression is compiled when the policy is loaded: one that does not
 * parse or type-check (as dyn) fails the load.
 */
public final class AdmissionPolicy {
  /** What the policy answered. */
  public record Decision(boolean matched, boolean allowed, String message) {
    /** Allowed, or the policy did not apply. */
    public static Decision allow(boolean matched) {
      return new Decision(matched, true, null);
    }
  }

  private record Expr(String name, String source, CelRuntime.Program program) {}

  private record Validation(Expr expression, String message, Expr messageExpression) {}

  private static final Cel CEL =
      CelFactory.standardCelBuilder()
          .setStandardMacros(CelStandardMacro.STANDARD_MACROS)
          .addVar("request", SimpleType.DYN)
          .addVar("object", SimpleType.DYN)
          .addVar("oldObject", SimpleType.DYN)
          .addVar("params", SimpleType.DYN)
          .addVar("variables", SimpleType.DYN)
          .build();

  private final JsonNode spec;
  private final List<Expr> matchConditions = new ArrayList<>();
  private final List<Expr> variables = new ArrayList<>();
  private final List<Validation> validations = new ArrayList<>();

  private AdmissionPolicy(JsonNode spec) {
    this.spec = spec;
    for (JsonNode m : spec.path("matchConditions")) {
      matchConditions.add(compile(m.path("name").asString(), m.path("expression").asString()));
    }
    for (JsonNode v : spec.path("variables")) {
      variables.add(compile(v.path("name").asString(), v.path("expression").asString()));
    }
    int i = 0;
    for (JsonNode v : spec.path("validations")) {
      String name = "validations[" + i++ + "]";
      validations.add(
          new Validation(
              compile(name, v.path("expression").asString()),
              v.path("message").isMissingNode() ? null : v.path("message").asString(),
              v.path("messageExpression").isMissingNode()
                  ? null
                  : compile(name + ".messageExpression", v.path("messageExpression").asString())));
    }
  }

  /** The ValidatingAdmissionPolicy {@code name} of a multi-document manifest. */
  public static AdmissionPolicy load(Path manifest, String name) throws IOException {
    for (JsonNode d : documents(manifest)) {
      if ("ValidatingAdmissionPolicy".equals(d.path("kind").asString())
          && name.equals(d.path("metadata").path("name").asString())) {
        return new AdmissionPolicy(d.path("spec"));
      }
    }
    throw new IllegalArgumentException(manifest + ": no ValidatingAdmissionPolicy " + name);
  }

  /**
   * The {@code matchConditions} of one webhook of a ValidatingWebhookConfiguration (the same CEL
   * environment, without params and variables): {@link Decision#matched()} says whether the API
   * server sends the request to the webhook.
   */
  public static AdmissionPolicy webhookMatchConditions(JsonNode webhook) {
    return new AdmissionPolicy(webhook);
  }

  /** Every document of a multi-document manifest. */
  public static List<JsonNode> documents(Path manifest) throws IOException {
    List<JsonNode> docs = new ArrayList<>();
    try (var it =
        new YAMLMapper()
            .readerFor(JsonNode.class)
            .<JsonNode>readValues(Files.readString(manifest))) {
      while (it.hasNext()) {
        JsonNode d = it.next();
        if (d != null && !d.isNull() && !d.isMissingNode()) {
          docs.add(d);
        }
      }
    }
    return docs;
  }

  /** The policy's spec as read. */
  public JsonNode spec() {
    return spec;
  }

  /** The names of the variables, in order. */
  public List<String> variableNames() {
    return variables.stream().map(Expr::name).toList();
  }

  private static Expr compile(String name, String source) {
    try {
      CelAbstractSyntaxTree ast = CEL.compile(source).getAst();
      return new Expr(name, source, CEL.createProgram(ast));
    } catch (CelValidationException | CelEvaluationException e) {
      throw new IllegalArgumentException(name + ": " + e.getMessage(), e);
    }
  }

  /**
   * Evaluates the policy on one admission request.
   *
   * @param request the AdmissionRequest as the API server gives it to CEL
   * @param object the new object, or null (DELETE)
   * @param oldObject the stored object, or null (CREATE)
   * @param params the binding's parameter object, or null
   */
  public Decision evaluate(
      Map<String, Object> request,
      Map<String, Object> object,
      Map<String, Object> oldObject,
      Map<String, Object> params) {
    Map<String, Object> vars = new LinkedHashMap<>();
    Map<String, Object> activation = new LinkedHashMap<>();
    activation.put("request", cel(request));
    activation.put("object", cel(object));
    activation.put("oldObject", cel(oldObject));
    activation.put("params", cel(params));
    activation.put("variables", vars);
    for (Expr m : matchConditions) {
      Object r;
      try {
        r = m.program().eval(activation);
      } catch (CelEvaluationException e) {
        return new Decision(
            true, false, "matchCondition " + m.name() + " failed: " + e.getMessage());
      }
      if (!Boolean.TRUE.equals(r)) {
        return Decision.allow(false);
      }
    }
    for (Expr v : variables) {
      try {
        vars.put(v.name(), v.program().eval(activation));
      } catch (CelEvaluationException e) {
        // the API server evaluates variables lazily; an error counts where it is used: here,
        // every variable must evaluate on every request (stricter)
        return new Decision(true, false, "variable " + v.name() + " failed: " + e.getMessage());
      }
    }
    for (Validation v : validations) {
      Object r;
      try {
        r = v.expression().program().eval(activation);
      } catch (CelEvaluationException e) {
        return new Decision(true, false, v.expression().name() + " failed: " + e.getMessage());
      }
      if (!Boolean.TRUE.equals(r)) {
        String message = v.message();
        if (v.messageExpression() != null) {
          try {
            message = (String) v.messageExpression().program().eval(activation);
          } catch (CelEvaluationException e) {
            return new Decision(
                true, false, v.messageExpression().name() + " failed: " + e.getMessage());
          }
        }
        return new Decision(true, false, message);
      }
    }
    return Decision.allow(true);
  }

  /** Java values as CEL for Java takes them: integers as long, absent as CEL null. */
  private static Object cel(Object value) {
    if (value == null) {
      return dev.cel.common.values.NullValue.NULL_VALUE;
    }
    if (value instanceof Map<?, ?> m) {
      Map<String, Object> out = new LinkedHashMap<>();
      m.forEach((k, v) -> out.put(k.toString(), cel(v)));
      return out;
    }
    if (value instanceof List<?> l) {
      return l.stream().map(AdmissionPolicy::cel).toList();
    }
    if (value instanceof Integer i) {
      return i.longValue();
    }
    return value;
  }
}
