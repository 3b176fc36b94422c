package dev.evictd.engine;

import io.fabric8.kubernetes.api.model.Pod;
import java.lang.reflect.Field;
import java.lang.reflect.Modifier;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;

/**
 * Smaller pod objects for the copies evictd keeps for as long as a pod runs: the informer's store
 * and the pod each rule fact carries. A fabric8 model object starts with an empty {@code ArrayList}
 * or {@code LinkedHashMap} in every list and map field (a pod with one container has about 30 of
 * each, 1.5 KiB, most never filled); here every empty one is replaced by the shared immutable empty
 * list or map, which reads and compares the same ({@code equals} and {@code hashCode} are by
 * content). What no reader of the store uses is dropped first ({@link #forStore}).
 *
 * <p>Only fields of fabric8 model classes ({@code io.fabric8.kubernetes.api.model}) are changed;
 * values of other types (free-form {@code additionalProperties} contents) are left as they are.
 */
public final class PodCompaction {
  private static final String MODEL = "io.fabric8.kubernetes.api.model";

  /** The list and map fields of each model class, its superclasses' included. */
  private static final ClassValue<Field[]> FIELDS =
      new ClassValue<>() {
        @Override
        protected Field[] computeValue(Class<?> type) {
          List<Field> out = new ArrayList<>();
          for (Class<?> c = type; c != null && isModel(c); c = c.getSuperclass()) {
            for (Field f : c.getDeclaredFields()) {
              int m = f.getModifiers();
              if (Modifier.isStatic(m) || Modifier.isFinal(m) || f.getType().isPrimitive()) {
                continue;
              }
              if (f.getType() == String.class || f.getType().isEnum()) {
                continue;
              }
              f.setAccessible(true);
              out.add(f);
            }
          }
          return out.toArray(Field[]::new);
        }
      };

  private PodCompaction() {}

  /**
   * The pod as the informer's store keeps it, changed in place: what rules must not read is gone
   * ({@link PodFacts#visibleToRules}: it was never read from the store either: not by the rules,
   * which get a copy without it, nor by the executors, which use names, uids, statuses and the
   * spec's resources), and empty lists and maps are shared. Returns {@code pod}.
   */
  public static Pod forStore(Pod pod) {
    if (pod != null) {
      PodFacts.hideFromRules(pod);
      shareEmpty(pod);
    }
    return pod;
  }

  /**
   * Replaces in place, through the whole object graph of a fabric8 model object, every empty list
   * or map field by the shared immutable empty one. Returns {@code model}.
   */
  public static <T> T shareEmpty(T model) {
    if (model != null && isModel(model.getClass())) {
      compact(model, 0);
    }
    return model;
  }

  private static void compact(Object o, int depth) {
    if (depth > 32) {
      return; // model graphs are trees a few levels deep; a deeper one is left as it is
    }
    for (Field f : FIELDS.get(o.getClass())) {
      Object v;
      try {
        v = f.get(o);
      } catch (IllegalAccessException e) {
        continue;
      }
      if (v instanceof List<?> l) {
        if (l.isEmpty()) {
          set(f, o, List.of());
        } else {
          for (Object e : l) {
            if (e != null && isModel(e.getClass())) {
              compact(e, depth + 1);
            }
          }
        }
      } else if (v instanceof Map<?, ?> m) {
        if (m.isEmpty()) {
          set(f, o, Map.of());
        } else {
          for (Object e : m.values()) {
            if (e != null && isModel(e.getClass())) {
              compact(e, depth + 1);
            }
          }
        }
      } else if (v != null && isModel(v.getClass())) {
        compact(v, depth + 1);
      }
    }
  }

  private static void set(Field f, Object o, Object value) {
    if (!f.getType().isInstance(value)) {
      return; // a field declared as ArrayList or LinkedHashMap keeps its own
    }
    try {
      f.set(o, value);
    } catch (IllegalAccessException e) {
      // left as it is: only memory is at stake
    }
  }

  private static boolean isModel(Class<?> c) {
    return c.getName().startsWith(MODEL);
  }
}
