package dev.evictd.k8s;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.function.Consumer;
import tools.jackson.core.JsonParser;
import tools.jackson.core.JsonToken;

/**
 * The field names of the kubelet's stats summary, type by type, as the statsapi {@code Summary}
 * writes them in JSON (k8s.io/kubelet/pkg/apis/stats/v1alpha1/types.go, with the fields of later
 * releases: swap, the container filesystem, IO and PSI). evictd binds a few of them; a field named
 * nowhere here is almost always a typo ({@code availabeBytes}), which would otherwise leave the
 * signal it feeds without an observation and its thresholds skipped without a word.
 *
 * <p>Types embedded inline in Go ({@code NetworkStats} holds {@code InterfaceStats}' fields, {@code
 * VolumeStats} holds {@code FsStats}', {@code UserDefinedMetric} its descriptor's) are listed with
 * those fields. A map of free keys ({@code labels}) and every scalar are leaves.
 */
public final class SummaryFields {
  private SummaryFields() {}

  /** The type of the document's root. */
  public static final String ROOT = "Summary";

  /**
   * A field's value: a leaf (null type: an amount, a time, a name, a map of free keys), or an
   * object of a schema type, or a list of them.
   */
  record Value(String type, boolean list) {
    static final Value LEAF = new Value(null, false);
  }

  private static final Map<String, Map<String, Value>> TYPES = new LinkedHashMap<>();

  static {
    type("Summary", "node:NodeStats pods:[PodStats");
    type(
        "NodeStats",
        "nodeName systemContainers:[ContainerStats startTime cpu:CPUStats memory:MemoryStats"
            + " io:IOStats network:NetworkStats fs:FsStats runtime:RuntimeStats"
            + " rlimit:RlimitStats swap:SwapStats");
    type("RlimitStats", "time maxpid curproc");
    type("RuntimeStats", "imageFs:FsStats containerFs:FsStats");
    type("ProcessStats", "process_count");
    type(
        "PodStats",
        "podRef:PodReference startTime containers:[ContainerStats cpu:CPUStats"
            + " memory:MemoryStats io:IOStats network:NetworkStats volume:[VolumeStats"
            + " ephemeral-storage:FsStats process_stats:ProcessStats swap:SwapStats");
    type(
        "ContainerStats",
        "name startTime cpu:CPUStats memory:MemoryStats io:IOStats"
            + " accelerators:[AcceleratorStats rootfs:FsStats logs:FsStats"
            + " userDefinedMetrics:[UserDefinedMetric swap:SwapStats");
    type("PodReference", "name namespace uid");
    type("InterfaceStats", "name rxBytes rxErrors txBytes txErrors");
    // the default interface's InterfaceStats, inline
    type("NetworkStats", "time name rxBytes rxErrors txBytes txErrors interfaces:[InterfaceStats");
    type("CPUStats", "time usageNanoCores usageCoreNanoSeconds psi:PSIStats");
    type(
        "MemoryStats",
        "time availableBytes usageBytes workingSetBytes rssBytes pageFaults majorPageFaults"
            + " psi:PSIStats");
    type("IOStats", "time psi:PSIStats");
    type("PSIStats", "full:PSIData some:PSIData");
    type("PSIData", "total avg10 avg60 avg300");
    type("SwapStats", "time swapAvailableBytes swapUsageBytes");
    type("AcceleratorStats", "make model id memoryTotal memoryUsed dutyCycle");
    // FsStats inline
    type(
        "VolumeStats",
        "time availableBytes capacityBytes usedBytes inodesFree inodes inodesUsed name"
            + " pvcRef:PVCReference volumeHealthStats:VolumeHealthStats");
    type("VolumeHealthStats", "abnormal");
    type("PVCReference", "name namespace");
    type("FsStats", "time availableBytes capacityBytes usedBytes inodesFree inodes inodesUsed");
    // UserDefinedMetricDescriptor inline; labels is a map of free keys
    type("UserDefinedMetric", "name type units labels time value");
  }

  /**
   * Adds a type: its fields' JSON names, each alone (a leaf) or as {@code name:T} (an object of
   * type T) or {@code name:[T} (a list of them).
   */
  private static void type(String name, String fields) {
    Map<String, Value> out = new LinkedHashMap<>();
    for (String f : fields.split(" ")) {
      int colon = f.indexOf(':');
      if (colon < 0) {
        out.put(f, Value.LEAF);
      } else {
        String t = f.substring(colon + 1);
        boolean list = t.startsWith("[");
        out.put(f.substring(0, colon), new Value(list ? t.substring(1) : t, list));
      }
    }
    TYPES.put(name, Map.copyOf(out));
  }

  /** The schema's type names. */
  public static Set<String> types() {
    return Set.copyOf(TYPES.keySet());
  }

  /** The JSON field names of {@code type}; empty for a type the schema does not have. */
  public static Set<String> fields(String type) {
    Map<String, Value> f = TYPES.get(type);
    return f == null ? Set.of() : f.keySet();
  }

  /** The value of {@code type}'s field {@code name}, or null when the type has no such field. */
  static Value value(String type, String name) {
    Map<String, Value> f = TYPES.get(type);
    return f == null ? null : f.get(name);
  }

  /**
   * A field the schema does not have.
   *
   * @param path where it is below the summary's root: names and list indexes, the field's name last
   * @param type the schema type of the object that holds it
   */
  public record Unknown(List<Object> path, String type) {
    public Unknown {
      path = List.copyOf(path);
    }

    /** The field's name as written. */
    public String name() {
      return (String) path.get(path.size() - 1);
    }

    /** The fields the holding object may have. */
    public Set<String> known() {
      return fields(type);
    }

    /** The path as messages show it: {@code pods[0].memory.workingSetByte}. */
    public String shown() {
      return show(path, false);
    }

    /**
     * The path with list indexes left out ({@code pods[].memory.workingSetByte}): the same field in
     * every pod's or container's entry is one field.
     */
    public String field() {
      return show(path, true);
    }

    private static String show(List<Object> path, boolean anyIndex) {
      StringBuilder b = new StringBuilder();
      for (Object e : path) {
        if (e instanceof Integer i) {
          b.append('[').append(anyIndex ? "" : i).append(']');
        } else {
          b.append(b.length() == 0 ? "" : ".").append(e);
        }
      }
      return b.toString();
    }
  }

  /**
   * Consumes the value of {@code type}'s field {@code name} (the parser's current token) as {@code
   * skipChildren} would, reporting to {@code sink} the field itself when {@code type} has no such
   * field, else every unknown field inside its value. {@code path} leads to the object that holds
   * the field.
   */
  public static void skip(
      JsonParser p, String type, String name, List<Object> path, Consumer<Unknown> sink) {
    List<Object> at = new ArrayList<>(path);
    at.add(name);
    Value v = value(type, name);
    if (v == null) {
      sink.accept(new Unknown(at, type));
      p.skipChildren();
    } else {
      walk(p, v, at, sink);
    }
  }

  private static void walk(JsonParser p, Value v, List<Object> at, Consumer<Unknown> sink) {
    JsonToken t = p.currentToken();
    if (v.type() == null) {
      p.skipChildren();
    } else if (v.list() && t == JsonToken.START_ARRAY) {
      Value item = new Value(v.type(), false);
      int i = 0;
      while (p.nextToken() != JsonToken.END_ARRAY) {
        at.add(i++);
        walk(p, item, at, sink);
        at.remove(at.size() - 1);
      }
    } else if (!v.list() && t == JsonToken.START_OBJECT) {
      for (String f = p.nextName(); f != null; f = p.nextName()) {
        p.nextToken();
        at.add(f);
        Value fv = value(v.type(), f);
        if (fv == null) {
          sink.accept(new Unknown(at, v.type()));
          p.skipChildren();
        } else {
          walk(p, fv, at, sink);
        }
        at.remove(at.size() - 1);
      }
    } else {
      p.skipChildren(); // null, or a shape evictd does not read: not this check's business
    }
  }
}
