package dev.evictd.engine;

import java.io.ByteArrayInputStream;
import java.io.DataInputStream;
import java.io.IOException;
import java.util.ArrayList;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import org.drools.base.definitions.InternalKnowledgePackage;
import org.drools.base.definitions.rule.impl.RuleImpl;
import org.drools.base.rule.DialectRuntimeData;
import org.drools.core.rule.JavaDialectRuntimeData;
import org.kie.api.KieBase;
import org.kie.api.definition.KiePackage;
import org.kie.api.definition.rule.Rule;

/**
 * The second line of defence: checks the classes the Java compiler produced for the rules'
 * consequences, functions and {@code eval}s. Every class, method and field their constant pools
 * reference must be on the {@link PolicyAllowlist}, or be one of the few engine members generated
 * code needs (inserting, updating and deleting facts). Drools' own invoker classes (generated from
 * templates, with no rule text in them) are not checked.
 *
 * <p>What is not compiled to Java bytecode — constraints, {@code from} expressions, MVEL — is
 * covered by {@link PolicyLint} only.
 */
final class CompiledCodeCheck {
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
          "java.lang.NoSuchFieldError",
          "java.io.Externalizable",
          "java.io.IOException",
          "java.lang.ClassNotFoundException");

  private CompiledCodeCheck() {}

  /** Checks every rule and function class of a compiled rule set. */
  static List<PolicyFinding> check(KieBase kbase, PolicyLint.Report report, String source) {
    Set<PolicyFinding> out = new LinkedHashSet<>();
    for (KiePackage p : kbase.getKiePackages()) {
      if (!(p instanceof InternalKnowledgePackage ip)) {
        continue;
      }
      DialectRuntimeData data = ip.getDialectRuntimeRegistry().getDialectData("java");
      if (!(data instanceof JavaDialectRuntimeData java)) {
        continue;
      }
      Map<String, PolicyLint.Location> ruleClasses = ruleClasses(p, report);
      for (Map.Entry<String, byte[]> e : new TreeMap<>(java.getStore()).entrySet()) {
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
            function != null
                ? report.functions().get(function)
                : locate(simple, ruleClasses, report);
        if (at == null) {
          at = new PolicyLint.Location(source, 0, "compiled class " + simple);
        }
        for (String[] problem : problems(e.getValue(), function != null)) {
          out.add(
              new PolicyFinding(
                  at.file(), at.line(), at.where(), problem[0] + " (compiled code)", problem[1]));
        }
      }
    }
    return new ArrayList<>(out);
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
    ConstantPool cp;
    try {
      cp = ConstantPool.read(classFile);
    } catch (IOException | RuntimeException e) {
      return List.<String[]>of(
          new String[] {"unreadable class file", "cannot be analysed: " + e.getMessage()});
    }
    List<String[]> out = new ArrayList<>();
    for (int i = 1; i < cp.count; i++) {
      int tag = cp.tags[i];
      if (tag == ConstantPool.CLASS) {
        String name = internal(cp.utf8(cp.a[i]));
        if (!typeAllowed(name, functionClass)) {
          out.add(new String[] {name.replace('$', '.'), PolicyAllowlist.category(name)});
        }
      } else if (tag == ConstantPool.FIELDREF
          || tag == ConstantPool.METHODREF
          || tag == ConstantPool.INTERFACE_METHODREF) {
        String owner = internal(cp.utf8(cp.a[cp.a[i]]));
        int nat = cp.b[i];
        String member = cp.utf8(cp.a[nat]);
        String descriptor = cp.utf8(cp.b[nat]);
        String problem = memberProblem(owner, member, descriptor);
        if (problem != null) {
          out.add(new String[] {owner.replace('$', '.') + "." + member, problem});
        }
      } else if (tag == ConstantPool.METHOD_TYPE) {
        for (String t : descriptorTypes(cp.utf8(cp.a[i]))) {
          if (!typeAllowed(t, false)) {
            out.add(new String[] {t.replace('$', '.'), PolicyAllowlist.category(t)});
          }
        }
      } else if (tag == ConstantPool.INVOKE_DYNAMIC || tag == ConstantPool.DYNAMIC) {
        for (String t : descriptorTypes(cp.utf8(cp.b[cp.b[i]]))) {
          if (!typeAllowed(t, false)) {
            out.add(new String[] {t.replace('$', '.'), PolicyAllowlist.category(t)});
          }
        }
      }
    }
    return out;
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
   * A class name from the constant pool ({@code java/io/File}, {@code [Ljava/io/File;}) as a binary
   * name.
   */
  private static String internal(String name) {
    return PolicyAllowlist.elementType(name.replace('/', '.'));
  }

  /** The class names in a method or field descriptor. */
  static List<String> descriptorTypes(String descriptor) {
    List<String> out = new ArrayList<>();
    int i = 0;
    while (i < descriptor.length()) {
      char c = descriptor.charAt(i);
      if (c == 'L') {
        int end = descriptor.indexOf(';', i);
        out.add(descriptor.substring(i + 1, end).replace('/', '.'));
        i = end + 1;
      } else {
        i++;
      }
    }
    return out;
  }

  /** The constant pool of a class file: tags and the two index operands of each entry. */
  private static final class ConstantPool {
    static final int UTF8 = 1;
    static final int CLASS = 7;
    static final int FIELDREF = 9;
    static final int METHODREF = 10;
    static final int INTERFACE_METHODREF = 11;
    static final int METHOD_TYPE = 16;
    static final int DYNAMIC = 17;
    static final int INVOKE_DYNAMIC = 18;

    int count;
    int[] tags;
    int[] a;
    int[] b;
    String[] strings;

    String utf8(int index) {
      if (index <= 0 || index >= count || tags[index] != UTF8) {
        throw new IllegalStateException("bad constant pool index " + index);
      }
      return strings[index];
    }

    static ConstantPool read(byte[] bytes) throws IOException {
      DataInputStream in = new DataInputStream(new ByteArrayInputStream(bytes));
      if (in.readInt() != 0xCAFEBABE) {
        throw new IOException("not a class file");
      }
      in.readUnsignedShort();
      in.readUnsignedShort();
      ConstantPool cp = new ConstantPool();
      cp.count = in.readUnsignedShort();
      cp.tags = new int[cp.count];
      cp.a = new int[cp.count];
      cp.b = new int[cp.count];
      cp.strings = new String[cp.count];
      for (int i = 1; i < cp.count; i++) {
        int tag = in.readUnsignedByte();
        cp.tags[i] = tag;
        switch (tag) {
          case UTF8 -> cp.strings[i] = in.readUTF();
          case 3, 4 -> in.readInt();
          case 5, 6 -> {
            in.readLong();
            i++;
          }
          case CLASS, 8, METHOD_TYPE, 19, 20 -> cp.a[i] = in.readUnsignedShort();
          case FIELDREF, METHODREF, INTERFACE_METHODREF, 12, DYNAMIC, INVOKE_DYNAMIC -> {
            cp.a[i] = in.readUnsignedShort();
            cp.b[i] = in.readUnsignedShort();
          }
          case 15 -> {
            cp.a[i] = in.readUnsignedByte();
            cp.b[i] = in.readUnsignedShort();
          }
          default -> throw new IOException("unknown constant pool tag " + tag);
        }
      }
      return cp;
    }
  }
}
