package dev.evictd.ruleset.lint;

import static dev.evictd.ruleset.lint.CompiledCodeRefusals.BOOTSTRAPS;
import static dev.evictd.ruleset.lint.CompiledCodeRefusals.DECLARED_TYPE_MEMBERS;
import static dev.evictd.ruleset.lint.CompiledCodeRefusals.descriptorTypes;
import static dev.evictd.ruleset.lint.CompiledCodeRefusals.internal;
import static dev.evictd.ruleset.lint.CompiledCodeRefusals.memberProblem;
import static dev.evictd.ruleset.lint.CompiledCodeRefusals.typeAllowed;

import java.util.ArrayList;
import java.util.List;
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
 * Reads one class file with ASM: what its declarations and instructions reference (every class,
 * member, method handle and bootstrap), each refused one recorded as a {name, reason} pair by the
 * rules of {@link CompiledCodeRefusals}; for a declared type's class, also the initialiser texts it
 * hands to {@code MVEL.eval}.
 */
final class BytecodeInspector extends ClassVisitor {
  private static final String MVEL_EVAL_OWNER = "org/mvel2/MVEL";

  final boolean functionClass;
  final boolean declaredType;
  final List<String[]> problems = new ArrayList<>();

  /** The initialiser texts a declared type hands to {@code MVEL.eval}. */
  final List<String> evaluated = new ArrayList<>();

  BytecodeInspector(boolean functionClass, boolean declaredType) {
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
      if (!typeAllowed(t, functionClass) && !(declaredType && DECLARED_TYPE_MEMBERS.contains(t))) {
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

  /** The refused references of one class file: {name, reason} pairs. */
  static List<String[]> problems(byte[] classFile, boolean functionClass) {
    BytecodeInspector inspector = new BytecodeInspector(functionClass, false);
    read(classFile, inspector);
    return inspector.problems;
  }

  static void read(byte[] classFile, BytecodeInspector inspector) {
    try {
      // stack map frames are not visited: they give the verifier types to check assignments
      // against, which it may load but never runs; what code can reach is in the instructions
      new ClassReader(classFile)
          .accept(inspector, ClassReader.SKIP_DEBUG | ClassReader.SKIP_FRAMES);
    } catch (RuntimeException e) {
      inspector.problems.add(
          new String[] {"unreadable class file", "cannot be analysed: " + e.getMessage()});
    }
  }
}
