package dev.evictd.ruleset.lint;

import java.lang.reflect.Field;
import java.lang.reflect.InaccessibleObjectException;
import java.lang.reflect.Modifier;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Collection;
import java.util.Deque;
import java.util.IdentityHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.concurrent.ConcurrentHashMap;
import org.drools.base.definitions.InternalKnowledgePackage;
import org.drools.base.definitions.rule.impl.RuleImpl;
import org.drools.base.rule.DialectRuntimeData;
import org.drools.core.rule.JavaDialectRuntimeData;
import org.kie.api.KieBase;
import org.kie.api.definition.KiePackage;
import org.kie.api.definition.rule.Rule;
import org.objectweb.asm.ClassReader;
import org.objectweb.asm.ClassVisitor;
import org.objectweb.asm.ConstantDynamic;
import org.objectweb.asm.FieldVisitor;
import org.objectweb.asm.Handle;
import org.objectweb.asm.Label;
import org.objectweb.asm.MethodVisitor;
import org.objectweb.asm.Opcodes;
import org.objectweb.asm.Type;

/**
 * The second line of defence, on what the engine compiled for the whole rule base:
 *
 * <ul>
 *   <li>the bytecode of the rules' consequences, functions, {@code eval}s and accumulate
 *       expressions (the Java dialect's classes) and of their declared types, read with ASM: every
 *       class, method, field, method handle and bootstrap an instruction names must be on the
 *       {@link PolicyAllowlist}, or be one of the few engine members generated code needs; a call
 *       to {@code StreamSupport.stream} must pass the constant {@code false}; a declared type's
 *       field initialiser, which Drools leaves to {@code MVEL.eval} at run time, is checked as an
 *       expression;
 *   <li>every expression MVEL interprets at run time — pattern constraints, {@code from},
 *       accumulate arguments, salience and {@code enabled} — found by walking each compiled rule
 *       and checked, on the exact text MVEL compiles, by the same checks as the lint's ({@link
 *       CodeCheck}); MVEL consequences and {@code eval}s are refused outright. A {@code matches}
 *       the engine left to MVEL (inside {@code ||}) would run on java.util.regex and is refused.
 * </ul>
 *
 * Drools' own invoker classes (generated from templates, with no rule text in them) are not read.
 */
public final class CompiledCodeCheck {
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
  private static final Set<String> BOOTSTRAPS =
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
  private static final Set<String> DECLARED_TYPE_MEMBERS =
      Set.of(
          "org.drools.base.factmodel.GeneratedFact",
          "java.io.Serializable",
          "java.lang.Object.getClass",
          "java.lang.Class.getSimpleName",
          "java.lang.Enum.valueOf",
          "org.mvel2.MVEL.eval");

  private static final String MVEL_EVAL_OWNER = "org/mvel2/MVEL";

  private CompiledCodeCheck() {}

  /** Checks every rule, function and declared type of a compiled rule set. */
  public static List<PolicyFinding> check(KieBase kbase, PolicyLint.Report report, String source) {
    Set<PolicyFinding> out = new LinkedHashSet<>();
    for (KiePackage p : kbase.getKiePackages()) {
      if (!(p instanceof InternalKnowledgePackage ip)) {
        continue;
      }
      DialectRuntimeData data = ip.getDialectRuntimeRegistry().getDialectData("java");
      if (data instanceof JavaDialectRuntimeData java) {
        javaClasses(p, java.getStore(), report, source, out);
      }
      declaredTypes(kbase, report, out);
      events(ip, report, source, out);
      for (Rule r : p.getRules()) {
        if (r instanceof RuleImpl ri) {
          PolicyLint.Location at = report.rules().get(r.getName());
          if (at == null) {
            at = new PolicyLint.Location(source, 0, "rule \"" + r.getName() + "\"");
          }
          interpreted(ri, at, report, out);
        }
      }
    }
    return new ArrayList<>(out);
  }

  private static void javaClasses(
      KiePackage p,
      Map<String, byte[]> store,
      PolicyLint.Report report,
      String source,
      Set<PolicyFinding> out) {
    Map<String, PolicyLint.Location> ruleClasses = ruleClasses(p, report);
    for (Map.Entry<String, byte[]> e : new TreeMap<>(store).entrySet()) {
      if (!e.getKey().endsWith(".class")) {
        continue;
      }
      String className =
          e.getKey().substring(0, e.getKey().length() - ".class".length()).replace('/', '.');
      String simple = className.substring(className.lastIndexOf('.') + 1);
      if (isInvoker(simple) || ownedBy(simple, report.declaredTypes()) != null) {
        continue;
      }
      String function = ownedBy(simple, report.functions().keySet());
      PolicyLint.Location at =
          function != null ? report.functions().get(function) : locate(simple, ruleClasses, report);
      if (at == null) {
        at = new PolicyLint.Location(source, 0, "compiled class " + simple);
      }
      for (String[] problem : problems(e.getValue(), function != null)) {
        out.add(compiled(at, problem));
      }
    }
  }

  private static PolicyFinding compiled(PolicyLint.Location at, String[] problem) {
    return new PolicyFinding(
        at.file(), at.line(), at.where(), problem[0] + " (compiled code)", problem[1]);
  }

  /**
   * The classes Drools generated for the rules' declared types (kept by the rule base's class
   * loader): their bytecode, and the initialiser text they pass to {@code MVEL.eval}.
   */
  private static void declaredTypes(
      KieBase kbase, PolicyLint.Report report, Set<PolicyFinding> out) {
    if (report.declaredTypes().isEmpty()
        || !(kbase instanceof org.drools.core.impl.InternalRuleBase rb)
        || !(rb.getRootClassLoader()
            instanceof org.drools.wiring.api.classloader.ProjectClassLoader pcl)
        || pcl.getStore() == null) {
      return;
    }
    for (Map.Entry<String, byte[]> e : new TreeMap<>(pcl.getStore()).entrySet()) {
      String name = e.getKey();
      if (!name.endsWith(".class")) {
        continue;
      }
      String binary = name.substring(0, name.length() - ".class".length()).replace('/', '.');
      if (!PolicyAllowlist.isRulePackage(PolicyAllowlist.packageOf(binary))) {
        continue;
      }
      String simple = binary.substring(binary.lastIndexOf('.') + 1);
      String owner = ownedBy(simple, report.declaredTypes());
      if (owner == null) {
        continue;
      }
      PolicyLint.Location at = report.declarations().get(owner);
      if (at == null) {
        at = new PolicyLint.Location("rules", 0, "declare " + owner);
      }
      Inspector inspector = new Inspector(false, true);
      read(e.getValue(), inspector);

      for (String[] problem : inspector.problems) {
        out.add(compiled(at, problem));
      }
      for (String init : inspector.evaluated) {
        expression(init, at, report, out);
      }
    }
  }

  /**
   * Type declarations the engine compiled as events (with a timestamp, duration or expiry): the
   * lint refuses their annotations; this catches them however they were declared.
   */
  private static void events(
      InternalKnowledgePackage p, PolicyLint.Report report, String source, Set<PolicyFinding> out) {
    for (org.drools.base.rule.TypeDeclaration td : p.getTypeDeclarations().values()) {
      boolean event = td.getRole() == org.kie.api.definition.type.Role.Type.EVENT;
      if (!event && td.getExpirationOffset() < 0 && td.getTimestampAttribute() == null) {
        continue;
      }
      String simple = td.getTypeName();
      PolicyLint.Location at = report.declarations().get(simple);
      if (at == null) {
        at = new PolicyLint.Location(source, 0, "declare " + simple);
      }
      out.add(
          new PolicyFinding(
              at.file(),
              at.line(),
              at.where(),
              "event " + simple + " (compiled code)",
              "event metadata (events expire on the engine's clock, outside the sync)"));
    }
  }

  /**
   * Drools' invoker classes: {@code Rule_<name><hash>DefaultConsequenceInvoker}, {@code
   * ...Eval0Invoker}...
   */
  private static boolean isInvoker(String simple) {
    return simple.startsWith("Rule_") && simple.endsWith("Invoker");
  }

  /**
   * The name among {@code owners} that a class is, or is nested in ({@code Owner$1}); null when
   * none.
   */
  private static String ownedBy(String simple, Set<String> owners) {
    for (String o : owners) {
      if (simple.equals(o) || simple.startsWith(o + "$")) {
        return o;
      }
    }
    return null;
  }

  /** Rule class simple name ({@code Rule_<escaped name><hash>}) to where the rule is. */
  private static Map<String, PolicyLint.Location> ruleClasses(
      KiePackage p, PolicyLint.Report report) {
    Map<String, PolicyLint.Location> out = new TreeMap<>();
    for (Rule r : p.getRules()) {
      PolicyLint.Location at = report.rules().get(r.getName());
      if (at != null && r instanceof RuleImpl ri && ri.getConsequence() != null) {
        String invoker = ri.getConsequence().getClass().getSimpleName();
        int i = invoker.indexOf("DefaultConsequenceInvoker");
        if (i > 0) {
          out.put(invoker.substring(0, i), at);
        }
      }
    }
    return out;
  }

  /**
   * Where a rule class's rule is: by its consequence, else by its escaped name followed by the
   * name's hash.
   */
  private static PolicyLint.Location locate(
      String simple, Map<String, PolicyLint.Location> ruleClasses, PolicyLint.Report report) {
    String owner = ownedBy(simple, ruleClasses.keySet());
    if (owner != null) {
      return ruleClasses.get(owner);
    }
    for (Map.Entry<String, PolicyLint.Location> e : report.rules().entrySet()) {
      String prefix = "Rule_" + escape(e.getKey());
      if (simple.startsWith(prefix)) {
        String rest = simple.substring(prefix.length());
        int nested = rest.indexOf('$');
        rest = nested < 0 ? rest : rest.substring(0, nested);
        if (rest.chars().allMatch(c -> Character.isDigit(c) || c == '-')) {
          return e.getValue();
        }
      }
    }
    return null;
  }

  /**
   * Drools' rule class name escaping: spaces become {@code _}, other non-identifier characters
   * {@code $uNN$}.
   */
  static String escape(String ruleName) {
    StringBuilder sb = new StringBuilder();
    for (char c : ruleName.toCharArray()) {
      if (c == ' ') {
        sb.append('_');
      } else if (Character.isJavaIdentifierPart(c) && c != '$') {
        sb.append(c);
      } else {
        sb.append("$u").append((int) c).append('$');
      }
    }
    return sb.toString();
  }

  /** The refused references of one class file: {name, reason} pairs. */
  static List<String[]> problems(byte[] classFile, boolean functionClass) {
    Inspector inspector = new Inspector(functionClass, false);
    read(classFile, inspector);
    return inspector.problems;
  }

  private static void read(byte[] classFile, Inspector inspector) {
    try {
      new ClassReader(classFile).accept(inspector, ClassReader.SKIP_DEBUG);
    } catch (RuntimeException e) {
      inspector.problems.add(
          new String[] {"unreadable class file", "cannot be analysed: " + e.getMessage()});
    }
  }

  /** Reads one class: what its declarations and instructions reference. */
  private static final class Inspector extends ClassVisitor {
    final boolean functionClass;
    final boolean declaredType;
    final List<String[]> problems = new ArrayList<>();

    /** The initialiser texts a declared type hands to {@code MVEL.eval}. */
    final List<String> evaluated = new ArrayList<>();

    Inspector(boolean functionClass, boolean declaredType) {
      super(Opcodes.ASM9);
      this.functionClass = functionClass;
      this.declaredType = declaredType;
    }

    void type(String internalName) {
      String n = internal(internalName);
      if (!typeAllowed(n, functionClass) && !(declaredType && DECLARED_TYPE_MEMBERS.contains(n))) {
        problems.add(new String[] {n.replace('$', '.'), PolicyAllowlist.category(n)});
      }
    }

    void descriptor(String descriptor) {
      for (String t : descriptorTypes(descriptor)) {
        if (!typeAllowed(t, functionClass)
            && !(declaredType && DECLARED_TYPE_MEMBERS.contains(t))) {
          problems.add(new String[] {t.replace('$', '.'), PolicyAllowlist.category(t)});
        }
      }
    }

    void member(String ownerInternal, String name, String descriptor) {
      String owner = internal(ownerInternal);
      if (declaredType
          && (DECLARED_TYPE_MEMBERS.contains(owner + "." + name)
              || (name.equals("getClass")
                  && PolicyAllowlist.isRulePackage(PolicyAllowlist.packageOf(owner))))) {
        return; // the template's toString: getClass().getSimpleName()
      }
      String problem = memberProblem(owner, name, descriptor);
      if (problem != null) {
        problems.add(new String[] {owner.replace('$', '.') + "." + name, problem});
      }
    }

    void handle(Handle h) {
      member(h.getOwner(), h.getName(), h.getDesc());
    }

    void constant(Object c) {
      if (c instanceof Type t) {
        if (t.getSort() == Type.METHOD) {
          descriptor(t.getDescriptor());
        } else if (t.getSort() == Type.OBJECT || t.getSort() == Type.ARRAY) {
          type(t.getInternalName());
        }
      } else if (c instanceof Handle h) {
        handle(h);
      } else if (c instanceof ConstantDynamic d) {
        bootstrap(d.getBootstrapMethod());
        descriptor(d.getDescriptor());
        for (int i = 0; i < d.getBootstrapMethodArgumentCount(); i++) {
          constant(d.getBootstrapMethodArgument(i));
        }
      }
    }

    void bootstrap(Handle bsm) {
      String name = internal(bsm.getOwner()) + "." + bsm.getName();
      if (!BOOTSTRAPS.contains(name)) {
        problems.add(new String[] {name, "reflection (a bootstrap method)"});
      }
    }

    @Override
    public void visit(
        int version,
        int access,
        String name,
        String signature,
        String superName,
        String[] interfaces) {
      if (superName != null) {
        type(superName);
      }
      if (interfaces != null) {
        for (String i : interfaces) {
          type(i);
        }
      }
    }

    @Override
    public FieldVisitor visitField(
        int access, String name, String descriptor, String signature, Object value) {
      descriptor(descriptor);
      return null;
    }

    @Override
    public MethodVisitor visitMethod(
        int access, String name, String descriptor, String signature, String[] exceptions) {
      descriptor(descriptor);
      if (exceptions != null) {
        for (String e : exceptions) {
          type(e);
        }
      }
      return new MethodVisitor(Opcodes.ASM9) {
        /** The last instruction's opcode, and the constant it loaded (for MVEL.eval's text). */
        int last = -1;

        Object lastConstant;

        private void op(int opcode) {
          last = opcode;
          lastConstant = null;
        }

        @Override
        public void visitInsn(int opcode) {
          op(opcode);
        }

        @Override
        public void visitIntInsn(int opcode, int operand) {
          op(opcode);
        }

        @Override
        public void visitVarInsn(int opcode, int varIndex) {
          op(opcode);
        }

        @Override
        public void visitTypeInsn(int opcode, String type) {
          type(type);
          op(opcode);
        }

        @Override
        public void visitFieldInsn(int opcode, String owner, String name, String descriptor) {
          member(owner, name, descriptor);
          op(opcode);
        }

        @Override
        public void visitMethodInsn(
            int opcode, String owner, String name, String descriptor, boolean isInterface) {
          if (declaredType && owner.equals(MVEL_EVAL_OWNER) && name.equals("eval")) {
            if (lastConstant instanceof String text) {
              evaluated.add(text);
            } else {
              problems.add(
                  new String[] {"org.mvel2.MVEL.eval", "dynamic code the lint cannot check"});
            }
          } else {
            member(owner, name, descriptor);
            parallelFlag(owner, name, descriptor);
          }
          op(opcode);
        }

        /** StreamSupport.stream(..., boolean parallel) must be called with the constant false. */
        private void parallelFlag(String owner, String name, String descriptor) {
          if (internal(owner).equals(PolicyAllowlist.STREAM_SUPPORT)
              && descriptor.contains("Z)")
              && last != Opcodes.ICONST_0) {
            problems.add(
                new String[] {
                  "java.util.stream.StreamSupport." + name,
                  "threads (a parallel stream runs on the fork-join pool; pass false)"
                });
          }
        }

        @Override
        public void visitInvokeDynamicInsn(
            String name, String descriptor, Handle bsm, Object... bsmArgs) {
          bootstrap(bsm);
          descriptor(descriptor);
          for (Object a : bsmArgs) {
            constant(a);
          }
          op(Opcodes.INVOKEDYNAMIC);
        }

        @Override
        public void visitJumpInsn(int opcode, Label label) {
          op(opcode);
        }

        @Override
        public void visitLdcInsn(Object value) {
          constant(value);
          op(Opcodes.LDC);
          lastConstant = value;
        }

        @Override
        public void visitIincInsn(int varIndex, int increment) {
          op(Opcodes.IINC);
        }

        @Override
        public void visitTableSwitchInsn(int min, int max, Label dflt, Label... labels) {
          op(Opcodes.TABLESWITCH);
        }

        @Override
        public void visitLookupSwitchInsn(Label dflt, int[] keys, Label[] labels) {
          op(Opcodes.LOOKUPSWITCH);
        }

        @Override
        public void visitMultiANewArrayInsn(String descriptor, int numDimensions) {
          descriptor(descriptor);
          op(Opcodes.MULTIANEWARRAY);
        }

        @Override
        public void visitTryCatchBlock(Label start, Label end, Label handler, String type) {
          if (type != null) {
            type(type);
          }
        }
      };
    }
  }

  private static String memberProblem(String owner, String member, String descriptor) {
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

  private static boolean typeAllowed(String name, boolean functionClass) {
    String n = PolicyAllowlist.elementType(name);
    return PolicyAllowlist.allowed(n)
        || ENGINE_TYPES.contains(n)
        || (COMPILER_TYPES.contains(n) && (functionClass || n.startsWith("java.lang.")));
  }

  /**
   * A class name from a class file ({@code java/io/File}, {@code [Ljava/io/File;}) as a binary
   * name, array brackets dropped (read by ASM's {@link Type}).
   */
  private static String internal(String name) {
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

  // ---------------------------------------------------------------------------------------------
  // What MVEL interprets: found by walking the compiled rule
  // ---------------------------------------------------------------------------------------------

  /** Engine objects walked at most per rule (a rule's own structure is far smaller). */
  private static final int MAX_WALKED = 50_000;

  private static final Map<Class<?>, Field[]> FIELDS = new ConcurrentHashMap<>();

  /**
   * Walks a compiled rule — its conditions, sources, accumulate functions, salience, enabled and
   * consequence — and checks every piece of MVEL it holds.
   */
  private static void interpreted(
      RuleImpl rule, PolicyLint.Location at, PolicyLint.Report report, Set<PolicyFinding> out) {
    Set<String> expressions = new LinkedHashSet<>();
    Set<String> dialects = new LinkedHashSet<>();
    Deque<Object> todo = new ArrayDeque<>();
    Map<Object, Boolean> seen = new IdentityHashMap<>();
    // the rule itself: its conditions, sources, salience, enabled, timer, (named) consequences
    todo.add(rule);
    while (!todo.isEmpty()) {
      Object o = todo.poll();
      if (o == null || seen.put(o, Boolean.TRUE) != null) {
        continue;
      }
      if (seen.size() > MAX_WALKED) {
        out.add(
            new PolicyFinding(
                at.file(),
                at.line(),
                at.where(),
                "the compiled rule",
                "cannot be analysed: too large to walk"));
        return;
      }
      if (o instanceof org.drools.mvel.expr.MVELCompilationUnit u) {
        expressions.add(u.getExpression());
        continue;
      }
      String text = mvelText(o);
      if (text != null) {
        expressions.add(text);
      }
      if (o instanceof org.drools.mvel.expr.MVELConsequence
          || o instanceof org.drools.mvel.expr.MVELEvalExpression) {
        dialects.add(o.getClass().getSimpleName().replace("MVEL", "MVEL "));
      }
      walk(o, todo);
    }
    for (String d : dialects) {
      out.add(
          new PolicyFinding(
              at.file(),
              at.line(),
              at.where(),
              d + " (compiled code)",
              "MVEL dialect (dynamic code the lint cannot check)"));
    }
    for (String e : expressions) {
      if (e == null || e.isBlank()) {
        continue;
      }
      if (regexOperator(e)) {
        out.add(
            new PolicyFinding(
                at.file(),
                at.line(),
                at.where(),
                "matches in \"" + shorten(e) + "\" (compiled code)",
                "the engine leaves it to MVEL, on java.util.regex, which can backtrack for ever:"
                    + " give it a constraint of its own, or call RuleRegex.matches"));
        continue;
      }
      expression(e, at, report, out);
    }
  }

  /** Checks MVEL text the engine compiled as the lint checks an expression. */
  private static void expression(
      String text, PolicyLint.Location at, PolicyLint.Report report, Set<PolicyFinding> out) {
    List<PolicyFinding> found = new ArrayList<>();
    CodeCheck.expression(
        text, new CodeCheck.Origin(at.file(), at.line(), at.where()), report.names(), found);
    for (PolicyFinding f : found) {
      out.add(
          new PolicyFinding(
              f.file(), f.line(), f.where(), f.name() + " (compiled code)", f.reason()));
    }
  }

  private static final Map<Class<?>, java.util.Optional<java.lang.reflect.Method>> TEXT =
      new ConcurrentHashMap<>();

  /**
   * The MVEL text an engine object of Drools' MVEL support compiles ({@code getExpression()}: the
   * constraints, field readers of bindings, data providers, accumulators...), or null.
   */
  private static String mvelText(Object o) {
    Class<?> c = o.getClass();
    if (!c.getName().startsWith("org.drools.mvel.")) {
      return null;
    }
    java.util.Optional<java.lang.reflect.Method> m =
        TEXT.computeIfAbsent(
            c,
            k -> {
              try {
                java.lang.reflect.Method g = k.getMethod("getExpression");
                return g.getReturnType() == String.class && g.getParameterCount() == 0
                    ? java.util.Optional.of(g)
                    : java.util.Optional.empty();
              } catch (NoSuchMethodException e) {
                return java.util.Optional.empty();
              }
            });
    if (m.isEmpty()) {
      return null;
    }
    try {
      return (String) m.get().invoke(o);
    } catch (ReflectiveOperationException | RuntimeException e) {
      return null;
    }
  }

  private static String shorten(String e) {
    String s = e.strip().replaceAll("\\s+", " ");
    return s.length() > 120 ? s.substring(0, 117) + "..." : s;
  }

  /**
   * Whether MVEL text uses its regular-expression operator {@code ~=} (outside string literals).
   */
  static boolean regexOperator(String e) {
    char quote = 0;
    for (int i = 0; i < e.length(); i++) {
      char c = e.charAt(i);
      if (quote != 0) {
        if (c == '\\') {
          i++;
        } else if (c == quote) {
          quote = 0;
        }
      } else if (c == '"' || c == '\'') {
        quote = c;
      } else if (c == '~' && i + 1 < e.length() && e.charAt(i + 1) == '=') {
        return true;
      }
    }
    return false;
  }

  /** Queues what an engine object holds: its fields, and the elements of arrays and collections. */
  private static void walk(Object o, Deque<Object> todo) {
    Class<?> c = o.getClass();
    if (c.isArray()) {
      if (!c.getComponentType().isPrimitive()) {
        for (Object e : (Object[]) o) {
          if (walked(e)) {
            todo.add(e);
          }
        }
      }
      return;
    }
    if (o instanceof Collection<?> col && c.getName().startsWith("java.")) {
      for (Object e : col) {
        if (walked(e)) {
          todo.add(e);
        }
      }
      return;
    }
    if (o instanceof Map<?, ?> m && c.getName().startsWith("java.")) {
      for (Map.Entry<?, ?> e : m.entrySet()) {
        if (walked(e.getKey())) {
          todo.add(e.getKey());
        }
        if (walked(e.getValue())) {
          todo.add(e.getValue());
        }
      }
      return;
    }
    if (!engineClass(c)) {
      return;
    }
    for (Field f : FIELDS.computeIfAbsent(c, CompiledCodeCheck::engineFields)) {
      try {
        Object v = f.get(o);
        if (walked(v)) {
          todo.add(v);
        }
      } catch (IllegalAccessException e) {
        // not readable: nothing of the rule's is kept where Drools' own fields cannot be read
      }
    }
  }

  /** Whether an object may hold rule code: engine objects, arrays and JDK collections. */
  private static boolean walked(Object v) {
    if (v == null) {
      return false;
    }
    Class<?> c = v.getClass();
    if (c.isArray()) {
      return !c.getComponentType().isPrimitive();
    }
    if (v instanceof Collection<?> || v instanceof Map<?, ?>) {
      return c.getName().startsWith("java.");
    }
    return engineClass(c)
        && !(v instanceof KieBase)
        && !(v instanceof KiePackage)
        && !(v instanceof ClassLoader)
        && !(v instanceof org.drools.base.rule.TypeDeclaration);
  }

  private static boolean engineClass(Class<?> c) {
    String n = c.getName();
    return n.startsWith("org.drools.")
        || n.startsWith("org.kie.")
        || n.startsWith("dev.evictd.engine.");
  }

  private static Field[] engineFields(Class<?> c) {
    List<Field> out = new ArrayList<>();
    for (Class<?> k = c; k != null && engineClass(k); k = k.getSuperclass()) {
      for (Field f : k.getDeclaredFields()) {
        if (Modifier.isStatic(f.getModifiers()) || f.getType().isPrimitive()) {
          continue;
        }
        try {
          f.setAccessible(true);
          out.add(f);
        } catch (InaccessibleObjectException | SecurityException e) {
          // skipped
        }
      }
    }
    return out.toArray(new Field[0]);
  }
}
