package dev.evictd.engine;

import io.fabric8.kubernetes.api.model.ObjectMeta;
import io.fabric8.kubernetes.api.model.Pod;
import java.lang.reflect.Field;
import java.lang.reflect.Modifier;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collections;
import java.util.HashMap;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.LinkedList;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * Smaller pod objects for the copies evictd keeps for as long as a pod runs: the informer's store
 * and the pod each rule fact carries. A fabric8 model object starts with an empty {@code ArrayList}
 * or {@code LinkedHashMap} in every list and map field (a pod with one container has about 30 of
 * each, 1.5 KiB, most never filled); here every empty one is replaced by the shared immutable empty
 * list or map, which reads and compares the same ({@code equals} and {@code hashCode} are by
 * content). What no reader of the store uses is dropped first ({@link #forStore}).
 *
 * <p>The store's pod is also frozen: every list and map in it unmodifiable and its repeated strings
 * (namespaces, label keys and values, owner kinds, images, QoS classes, condition types) interned,
 * so that one object can be both the store's pod and the rules' ({@link #isFrozen}): rules can call
 * only getters on fabric8 objects (the compiled-code check), and with no collection in it they can
 * change either, a rule cannot reach what the executors read.
 *
 * <p>Only fields of fabric8 model classes ({@code io.fabric8.kubernetes.api.model}) are changed;
 * values of other types in free-form {@code additionalProperties} are frozen but otherwise kept.
 */
public final class PodCompaction {
  private static final String MODEL = "io.fabric8.kubernetes.api.model";

  /** Longer strings (annotation payloads) are kept as they are: rarely repeated. */
  private static final int INTERN_MAX = 256;

  /**
   * Fields whose strings are one object's own (uids, versions, times, addresses): interning them
   * would only fill the JVM's string table. Pod and owner names are not here: a ReplicaSet's name
   * is shared by its pods; {@link ObjectMeta}'s name is skipped below.
   */
  private static final Set<String> OWN_STRINGS =
      Set.of(
          "uid",
          "resourceVersion",
          "creationTimestamp",
          "deletionTimestamp",
          "startTime",
          "startedAt",
          "finishedAt",
          "lastTransitionTime",
          "lastProbeTime",
          "lastUpdateTime",
          "containerID",
          "podIP",
          "ip");

  /** The classes of the unmodifiable lists and maps a frozen pod holds. */
  private static final Set<Class<?>> FROZEN_COLLECTIONS = frozenCollections();

  /** The list, map, model and string fields of each model class, its superclasses' included. */
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
              if (f.getType().isEnum()) {
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
   * which get the pod without it, nor by the executors, which use names, uids, statuses and the
   * spec's resources), empty lists and maps shared, the others unmodifiable, repeated strings
   * interned. The rules' fact can then carry this very object ({@link #isFrozen}). Returns {@code
   * pod}.
   */
  public static Pod forStore(Pod pod) {
    if (pod != null) {
      PodFacts.hideFromRules(pod);
      compact(pod, 0, true);
    }
    return pod;
  }

  /**
   * Replaces in place, through the whole object graph of a fabric8 model object, every empty list
   * or map field by the shared immutable empty one. Returns {@code model}.
   */
  public static <T> T shareEmpty(T model) {
    if (model != null && isModel(model.getClass())) {
      compact(model, 0, false);
    }
    return model;
  }

  /**
   * Whether {@code pod} is as {@link #forStore} leaves it: nothing rules must not read, and no list
   * or map anywhere in it that can be changed. Such a pod can be shared with the rules as it is.
   */
  public static boolean isFrozen(Pod pod) {
    return pod != null && PodFacts.isHidden(pod) && frozen(pod, 0);
  }

  /**
   * Whether {@code m} is an unmodifiable map, as a frozen pod holds, without null keys or values.
   */
  static boolean frozenWithoutNulls(Map<?, ?> m) {
    if (!FROZEN_COLLECTIONS.contains(m.getClass())) {
      return false;
    }
    for (Map.Entry<?, ?> e : m.entrySet()) {
      if (e.getKey() == null || e.getValue() == null) {
        return false;
      }
    }
    return true;
  }

  private static boolean frozen(Object o, int depth) {
    if (depth > 32) {
      return false;
    }
    for (Field f : FIELDS.get(o.getClass())) {
      Object v = read(f, o);
      if (v != null && !(v instanceof String) && !frozenValue(v, depth + 1)) {
        return false;
      }
    }
    return true;
  }

  private static boolean frozenValue(Object v, int depth) {
    if (v instanceof List<?> l) {
      if (!FROZEN_COLLECTIONS.contains(l.getClass())) {
        return false;
      }
      for (Object e : l) {
        if (e != null && !frozenValue(e, depth + 1)) {
          return false;
        }
      }
      return true;
    }
    if (v instanceof Map<?, ?> m) {
      if (!FROZEN_COLLECTIONS.contains(m.getClass())) {
        return false;
      }
      for (Object e : m.values()) {
        if (e != null && !frozenValue(e, depth + 1)) {
          return false;
        }
      }
      return true;
    }
    if (isModel(v.getClass())) {
      return frozen(v, depth);
    }
    // strings, numbers, booleans: immutable; anything else (an array, a set) is not known to be
    return v instanceof String || v instanceof Number || v instanceof Boolean;
  }

  private static void compact(Object o, int depth, boolean freeze) {
    if (depth > 32) {
      return; // model graphs are trees a few levels deep; a deeper one is left as it is
    }
    boolean meta = o instanceof ObjectMeta;
    for (Field f : FIELDS.get(o.getClass())) {
      Object v = read(f, o);
      if (v == null) {
        continue;
      }
      if (v instanceof String s) {
        if (freeze && !OWN_STRINGS.contains(f.getName()) && !(meta && f.getName().equals("name"))) {
          set(f, o, intern(s));
        }
      } else if (v instanceof List<?> || v instanceof Map<?, ?>) {
        if (freeze) {
          set(f, o, frozenCopy(v, depth + 1));
        } else if (v instanceof List<?> l) {
          if (l.isEmpty()) {
            set(f, o, List.of());
          } else {
            for (Object e : l) {
              if (e != null && isModel(e.getClass())) {
                compact(e, depth + 1, false);
              }
            }
          }
        } else if (v instanceof Map<?, ?> m) {
          if (m.isEmpty()) {
            set(f, o, Map.of());
          } else {
            for (Object e : m.values()) {
              if (e != null && isModel(e.getClass())) {
                compact(e, depth + 1, false);
              }
            }
          }
        }
      } else if (isModel(v.getClass())) {
        compact(v, depth + 1, freeze);
      }
    }
  }

  /**
   * {@code v} frozen: a list or map as an unmodifiable copy of its frozen elements (the shared
   * empty one when empty, insertion order kept; a small map a {@link FrozenMap}), a model object
   * frozen in place, a string interned.
   */
  private static Object frozenCopy(Object v, int depth) {
    if (v instanceof String s) {
      return intern(s);
    }
    if (depth > 32) {
      return v;
    }
    if (v instanceof List<?> l) {
      if (l.isEmpty()) {
        return List.of();
      }
      Object[] out = new Object[l.size()];
      boolean nulls = false;
      int i = 0;
      for (Object e : l) {
        nulls |= e == null;
        out[i++] = e == null ? null : frozenCopy(e, depth + 1);
      }
      // List.copyOf refuses null elements (a YAML "-" with nothing after it)
      return nulls ? Collections.unmodifiableList(Arrays.asList(out)) : List.of(out);
    }
    if (v instanceof Map<?, ?> m) {
      if (m.isEmpty()) {
        return Map.of();
      }
      Map<Object, Object> out = new LinkedHashMap<>((int) (m.size() / 0.75f) + 1);
      m.forEach(
          (k, e) ->
              out.put(
                  k instanceof String s ? intern(s) : k,
                  e == null ? null : frozenCopy(e, depth + 1)));
      // small maps (labels, a container's requests) in one array: a quarter of the size
      return out.size() <= FrozenMap.MAX ? FrozenMap.of(out) : Collections.unmodifiableMap(out);
    }
    if (isModel(v.getClass())) {
      compact(v, depth, true);
    }
    return v;
  }

  private static String intern(String s) {
    // the JVM's string table holds its strings weakly: an interned string no pod uses is collected
    return s.length() > INTERN_MAX ? s : s.intern();
  }

  private static Object read(Field f, Object o) {
    try {
      return f.get(o);
    } catch (IllegalAccessException e) {
      return null;
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

  private static Set<Class<?>> frozenCollections() {
    Set<Class<?>> s = new HashSet<>();
    s.add(List.of().getClass());
    s.add(List.of(1).getClass());
    s.add(List.of(1, 2, 3).getClass());
    s.add(Map.of().getClass());
    s.add(Map.of(1, 1).getClass());
    s.add(Map.of(1, 1, 2, 2).getClass());
    s.add(Collections.unmodifiableList(new ArrayList<>()).getClass());
    s.add(Collections.unmodifiableList(new LinkedList<>()).getClass());
    s.add(Collections.unmodifiableMap(new HashMap<>()).getClass());
    s.add(FrozenMap.class);
    return Set.copyOf(s);
  }
}
