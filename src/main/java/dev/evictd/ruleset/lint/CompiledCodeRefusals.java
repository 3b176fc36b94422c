package dev.evictd.ruleset.lint;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.objectweb.asm.Type;

/**
 * What compiled rule code may name beyond the {@link PolicyAllowlist}: the few engine members and
 * types generated code needs, the bootstraps and classes the compilers emit, the members of Drools'
 * declared-type template; and the reason a class, member or descriptor is refused (used by {@link
 * BytecodeInspector}).
 */
final class CompiledCodeRefusals {
  /**
   * Engine members generated consequence code calls (owner, then members); their descriptors are
   * not checked.
   */
  private static final Map<String, Set<String>> ENGINE_MEMBERS =
      Map.of(
          "org.drools.core.rule.consequence.KnowledgeHelper",
          Set.of("insert", "insertLogical", "update", "delete", "retract"),
          "org.drools.util.bitmask.LongBitMask",
          Set.of("<init>"),
          "org.drools.util.bitmask.AllSetBitMask",
          Set.of("get"),
          "org.drools.util.bitmask.AllSetButLastBitMask",
          Set.of("get"),
          "org.drools.util.bitmask.EmptyBitMask",
          Set.of("get"),
          "org.drools.util.bitmask.OpenBitSet",
          Set.of("<init>", "set"),
          // an accumulate function's argument, wrapped as a field value
          "org.drools.mvel.field.FieldFactory",
          Set.of("getInstance", "getFieldValue"));

  /** Engine types generated code names (casts, parameters) without calling into them. */
  private static final Set<String> ENGINE_TYPES =
      Set.of(
          "org.drools.core.rule.consequence.KnowledgeHelper",
          "org.drools.base.rule.consequence.ConsequenceContext",
          "org.kie.api.runtime.rule.FactHandle",
          "org.kie.api.runtime.rule.RuleContext",
          "org.drools.util.bitmask.BitMask",
          "org.drools.util.bitmask.LongBitMask",
          "org.drools.util.bitmask.AllSetBitMask",
          "org.drools.util.bitmask.AllSetButLastBitMask",
          "org.drools.util.bitmask.EmptyBitMask",
          "org.drools.util.bitmask.OpenBitSet",
          "org.drools.mvel.field.FieldFactory",
          "org.drools.base.rule.accessor.FieldValue");

  /** Bootstrap methods javac and ecj emit for lambdas and string concatenation. */
  static final Set<String> BOOTSTRAPS =
      Set.of(
          "java.lang.invoke.LambdaMetafactory.metafactory",
          "java.lang.invoke.LambdaMetafactory.altMetafactory",
          "java.lang.invoke.StringConcatFactory.makeConcatWithConstants",
          "java.lang.invoke.StringConcatFactory.makeConcat");

  /**
   * Classes compiler-generated code names: bootstrap plumbing, enum switch tables, Drools' function
   * boilerplate.
   */
  private static final Set<String> COMPILER_TYPES =
      Set.of(
          "java.lang.invoke.LambdaMetafactory",
          "java.lang.invoke.StringConcatFactory",
          "java.lang.invoke.MethodHandles",
          "java.lang.invoke.MethodHandles$Lookup",
          "java.lang.invoke.MethodHandle",
          "java.lang.invoke.MethodType",
          "java.lang.invoke.CallSite",
          "java.lang.NoSuchFieldError",
          "java.io.Externalizable",
          "java.io.ObjectInput",
          "java.io.ObjectOutput",
          "java.io.IOException",
          "java.lang.ClassNotFoundException");

  /**
   * What Drools' declared-type template names: its marker interface, serialisation, and the {@code
   * getClass().getSimpleName()} of the generated {@code toString}.
   */
  static final Set<String> DECLARED_TYPE_MEMBERS =
      Set.of(
          "org.drools.base.factmodel.GeneratedFact",
          "java.io.Serializable",
          "java.lang.Object.getClass",
          "java.lang.Class.getSimpleName",
          "java.lang.Enum.valueOf",
          "org.mvel2.MVEL.eval");

  private CompiledCodeRefusals() {}

  static String memberProblem(String owner, String member, String descriptor) {
    if (BOOTSTRAPS.contains(owner + "." + member)) {
      return null;
    }
    Set<String> engine = ENGINE_MEMBERS.get(owner);
    if (engine != null) {
      return engine.contains(member) ? null : "engine internals";
    }
    if (!PolicyAllowlist.allowed(owner)) {
      return PolicyAllowlist.category(owner);
    }
    var refused = PolicyAllowlist.refusedMember(owner, member);
    if (refused.isPresent()) {
      return refused.get();
    }
    if (owner.startsWith("io.fabric8.") && !isReader(member)) {
      return "changes Kubernetes objects (only getters are allowed)";
    }
    for (String t : descriptorTypes(descriptor)) {
      if (!typeAllowed(t, false)) {
        return "uses " + t.replace('$', '.') + " (" + PolicyAllowlist.category(t) + ")";
      }
    }
    return null;
  }

  private static boolean isReader(String member) {
    return member.startsWith("get")
        || member.startsWith("is")
        || member.startsWith("has")
        || member.equals("equals")
        || member.equals("hashCode")
        || member.equals("toString");
  }

  static boolean typeAllowed(String name, boolean functionClass) {
    String n = PolicyAllowlist.elementType(name);
    return PolicyAllowlist.allowed(n)
        || ENGINE_TYPES.contains(n)
        || (COMPILER_TYPES.contains(n) && (functionClass || n.startsWith("java.lang.")));
  }

  /**
   * A class name from a class file ({@code java/io/File}, {@code [Ljava/io/File;}) as a binary
   * name, array brackets dropped (read by ASM's {@link Type}).
   */
  static String internal(String name) {
    Type t = Type.getObjectType(name);
    return (t.getSort() == Type.ARRAY ? t.getElementType() : t).getClassName();
  }

  /** The class names in a method or field descriptor (array element types included). */
  static List<String> descriptorTypes(String descriptor) {
    Type t = Type.getType(descriptor);
    List<Type> types = new ArrayList<>();
    if (t.getSort() == Type.METHOD) {
      types.addAll(List.of(t.getArgumentTypes()));
      types.add(t.getReturnType());
    } else {
      types.add(t);
    }
    List<String> out = new ArrayList<>();
    for (Type u : types) {
      Type e = u.getSort() == Type.ARRAY ? u.getElementType() : u;
      if (e.getSort() == Type.OBJECT) {
        out.add(e.getClassName());
      }
    }
    return out;
  }
}
