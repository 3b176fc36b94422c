package dev.evictd.k8s;

import dev.evictd.api.Quantity;
import dev.evictd.stats.Summary;
import java.math.BigDecimal;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.function.Consumer;
import tools.jackson.core.JacksonException;
import tools.jackson.core.JsonParser;
import tools.jackson.core.JsonToken;
import tools.jackson.core.ObjectReadContext;
import tools.jackson.core.StreamReadConstraints;
import tools.jackson.core.StreamReadFeature;
import tools.jackson.core.json.JsonFactory;

/**
 * Reads a stats summary file that is plain JSON straight from Jackson's token stream, for the
 * commands that read one from a file ({@code evictd plan}): parsing the file as YAML and binding
 * the tree through Jackson's databind cost a fifth of that command's start-up, mostly in code run
 * once.
 *
 * <p>It reads only what it can read exactly as that full path does (printable ASCII without escapes
 * or tabs, strict JSON, no duplicate keys, shallow nesting, every value of the type its field binds
 * without coercion, every field one of the statsapi schema) and hands back null for anything else,
 * valid or not: the caller then takes the full path, which decides and words every error and
 * warning as before.
 */
public final class SummaryStreamReader {
  /** Deeper than any summary; the full path's own limit is 200. */
  private static final int MAX_DEPTH = 64;

  /** Far below the full path's limit on a file's size. */
  private static final int MAX_BYTES = 64 * 1024 * 1024;

  private static final BigDecimal MAX = BigDecimal.valueOf(Long.MAX_VALUE);

  private static final JsonFactory JSON =
      JsonFactory.builder()
          .enable(StreamReadFeature.STRICT_DUPLICATE_DETECTION)
          .streamReadConstraints(StreamReadConstraints.builder().maxNestingDepth(MAX_DEPTH).build())
          .build();

  private SummaryStreamReader() {}

  /** Thrown to hand the file back to the full path; carries nothing. */
  private static final class NotPlain extends RuntimeException {
    private static final long serialVersionUID = 1L;

    NotPlain() {
      super(null, null, false, false);
    }
  }

  private static final NotPlain NOT_PLAIN = new NotPlain();

  /** The summary a plain JSON file holds, or null when the full path must read it. */
  public static Summary read(byte[] bytes) {
    if (bytes.length > MAX_BYTES || !JsonAsYaml.plainAscii(bytes)) {
      return null;
    }
    try (JsonParser p = JSON.createParser(ObjectReadContext.empty(), bytes)) {
      if (p.nextToken() != JsonToken.START_OBJECT) {
        return null;
      }
      Summary s = summary(p);
      return p.nextToken() == null ? s : null;
    } catch (NotPlain | JacksonException e) {
      return null;
    }
  }

  /**
   * The next field of the object {@code p} is in, or null at its end; its value is the current
   * token. A key YAML reads differently ({@code <<}, a merge), or one it could not read as a
   * single-line key, hands the file back.
   */
  private static String field(JsonParser p) {
    JsonToken t = p.nextToken();
    if (t == JsonToken.END_OBJECT) {
      return null;
    }
    String name = p.currentName();
    int line = p.currentTokenLocation().getLineNr();
    if (name.length() > 256 || name.equals("<<")) {
      throw NOT_PLAIN;
    }
    p.nextToken();
    if (p.currentTokenLocation().getLineNr() != line) {
      throw NOT_PLAIN;
    }
    return name;
  }

  private static Summary summary(JsonParser p) {
    Summary.NodeStats node = null;
    List<Summary.PodStats> pods = null;
    for (String f; (f = field(p)) != null; ) {
      switch (f) {
        case "node" -> node = object(p) ? nodeStats(p) : null;
        case "pods" -> pods = podList(p);
        // another capture: the full path words it
        case "kind", "apiVersion", "items", "metadata", "spec" -> throw NOT_PLAIN;
        default -> skip(p, "Summary", f);
      }
    }
    return new Summary(node, pods);
  }

  private static Summary.NodeStats nodeStats(JsonParser p) {
    String nodeName = null;
    Summary.MemoryStats memory = null;
    Summary.FsStats fs = null;
    Summary.RuntimeStats runtime = null;
    Summary.RlimitStats rlimit = null;
    List<Summary.ContainerStats> systemContainers = null;
    for (String f; (f = field(p)) != null; ) {
      switch (f) {
        case "nodeName" -> nodeName = string(p);
        case "memory" -> memory = object(p) ? memory(p) : null;
        case "fs" -> fs = object(p) ? fs(p) : null;
        case "runtime" -> runtime = object(p) ? runtime(p) : null;
        case "rlimit" -> rlimit = object(p) ? rlimit(p) : null;
        case "systemContainers" -> systemContainers = containerList(p);
        default -> skip(p, "NodeStats", f);
      }
    }
    return new Summary.NodeStats(nodeName, memory, fs, runtime, rlimit, systemContainers);
  }

  private static Summary.MemoryStats memory(JsonParser p) {
    Instant time = null;
    Long availableBytes = null;
    Long usageBytes = null;
    Long workingSetBytes = null;
    Long rssBytes = null;
    for (String f; (f = field(p)) != null; ) {
      switch (f) {
        case "time" -> time = instant(p);
        case "availableBytes" -> availableBytes = amount(p);
        case "usageBytes" -> usageBytes = amount(p);
        case "workingSetBytes" -> workingSetBytes = amount(p);
        case "rssBytes" -> rssBytes = amount(p);
        default -> skip(p, "MemoryStats", f);
      }
    }
    return new Summary.MemoryStats(time, availableBytes, usageBytes, workingSetBytes, rssBytes);
  }

  private static Summary.FsStats fs(JsonParser p) {
    Instant time = null;
    Long availableBytes = null;
    Long capacityBytes = null;
    Long usedBytes = null;
    Long inodesFree = null;
    Long inodes = null;
    Long inodesUsed = null;
    for (String f; (f = field(p)) != null; ) {
      switch (f) {
        case "time" -> time = instant(p);
        case "availableBytes" -> availableBytes = amount(p);
        case "capacityBytes" -> capacityBytes = amount(p);
        case "usedBytes" -> usedBytes = amount(p);
        case "inodesFree" -> inodesFree = amount(p);
        case "inodes" -> inodes = amount(p);
        case "inodesUsed" -> inodesUsed = amount(p);
        default -> skip(p, "FsStats", f);
      }
    }
    return new Summary.FsStats(
        time, availableBytes, capacityBytes, usedBytes, inodesFree, inodes, inodesUsed);
  }

  private static Summary.RuntimeStats runtime(JsonParser p) {
    Summary.FsStats imageFs = null;
    Summary.FsStats containerFs = null;
    for (String f; (f = field(p)) != null; ) {
      switch (f) {
        case "imageFs" -> imageFs = object(p) ? fs(p) : null;
        case "containerFs" -> containerFs = object(p) ? fs(p) : null;
        default -> skip(p, "RuntimeStats", f);
      }
    }
    return new Summary.RuntimeStats(imageFs, containerFs);
  }

  private static Summary.RlimitStats rlimit(JsonParser p) {
    Instant time = null;
    Long maxpid = null;
    Long curproc = null;
    for (String f; (f = field(p)) != null; ) {
      switch (f) {
        case "time" -> time = instant(p);
        case "maxpid" -> maxpid = amount(p);
        case "curproc" -> curproc = amount(p);
        default -> skip(p, "RlimitStats", f);
      }
    }
    return new Summary.RlimitStats(time, maxpid, curproc);
  }

  private static Summary.ContainerStats container(JsonParser p) {
    String name = null;
    Summary.MemoryStats memory = null;
    Summary.FsStats rootfs = null;
    Summary.FsStats logs = null;
    for (String f; (f = field(p)) != null; ) {
      switch (f) {
        case "name" -> name = string(p);
        case "memory" -> memory = object(p) ? memory(p) : null;
        case "rootfs" -> rootfs = object(p) ? fs(p) : null;
        case "logs" -> logs = object(p) ? fs(p) : null;
        default -> skip(p, "ContainerStats", f);
      }
    }
    return new Summary.ContainerStats(name, memory, rootfs, logs);
  }

  private static Summary.PodStats pod(JsonParser p) {
    Summary.PodReference podRef = null;
    List<Summary.ContainerStats> containers = null;
    Summary.MemoryStats memory = null;
    List<Summary.VolumeStats> volumes = null;
    Summary.FsStats ephemeralStorage = null;
    Summary.ProcessStats processStats = null;
    for (String f; (f = field(p)) != null; ) {
      switch (f) {
        case "podRef" -> podRef = object(p) ? podRef(p) : null;
        case "containers" -> containers = containerList(p);
        case "memory" -> memory = object(p) ? memory(p) : null;
        case "volume" -> volumes = volumeList(p);
        case "ephemeral-storage" -> ephemeralStorage = object(p) ? fs(p) : null;
        case "process_stats" -> processStats = object(p) ? processStats(p) : null;
        default -> skip(p, "PodStats", f);
      }
    }
    return new Summary.PodStats(
        podRef, containers, memory, volumes, ephemeralStorage, processStats);
  }

  private static Summary.PodReference podRef(JsonParser p) {
    String name = null;
    String namespace = null;
    String uid = null;
    for (String f; (f = field(p)) != null; ) {
      switch (f) {
        case "name" -> name = string(p);
        case "namespace" -> namespace = string(p);
        case "uid" -> uid = string(p);
        default -> skip(p, "PodReference", f);
      }
    }
    return new Summary.PodReference(name, namespace, uid);
  }

  private static Summary.ProcessStats processStats(JsonParser p) {
    Long processCount = null;
    for (String f; (f = field(p)) != null; ) {
      if (f.equals("process_count")) {
        processCount = amount(p);
      } else {
        skip(p, "ProcessStats", f);
      }
    }
    return new Summary.ProcessStats(processCount);
  }

  private static Summary.VolumeStats volume(JsonParser p) {
    String name = null;
    Instant time = null;
    Long availableBytes = null;
    Long capacityBytes = null;
    Long usedBytes = null;
    Long inodesFree = null;
    Long inodes = null;
    Long inodesUsed = null;
    for (String f; (f = field(p)) != null; ) {
      switch (f) {
        case "name" -> name = string(p);
        case "time" -> time = instant(p);
        case "availableBytes" -> availableBytes = amount(p);
        case "capacityBytes" -> capacityBytes = amount(p);
        case "usedBytes" -> usedBytes = amount(p);
        case "inodesFree" -> inodesFree = amount(p);
        case "inodes" -> inodes = amount(p);
        case "inodesUsed" -> inodesUsed = amount(p);
        default -> skip(p, "VolumeStats", f);
      }
    }
    return new Summary.VolumeStats(
        name, time, availableBytes, capacityBytes, usedBytes, inodesFree, inodes, inodesUsed);
  }

  private static List<Summary.PodStats> podList(JsonParser p) {
    if (!array(p)) {
      return null;
    }
    List<Summary.PodStats> out = new ArrayList<>();
    while (element(p)) {
      out.add(pod(p));
    }
    return out;
  }

  private static List<Summary.ContainerStats> containerList(JsonParser p) {
    if (!array(p)) {
      return null;
    }
    List<Summary.ContainerStats> out = new ArrayList<>();
    while (element(p)) {
      out.add(container(p));
    }
    return out;
  }

  private static List<Summary.VolumeStats> volumeList(JsonParser p) {
    if (!array(p)) {
      return null;
    }
    List<Summary.VolumeStats> out = new ArrayList<>();
    while (element(p)) {
      out.add(volume(p));
    }
    return out;
  }

  /** Hands the file back on a field the statsapi schema does not have. */
  private static final Consumer<SummaryFields.Unknown> HAND_BACK =
      u -> {
        throw NOT_PLAIN;
      };

  /**
   * Skips a field this reader does not bind; one the statsapi schema does not have, or one inside
   * it, hands the file back (the full path warns about it).
   */
  private static void skip(JsonParser p, String type, String field) {
    SummaryFields.skip(p, type, field, List.of(), HAND_BACK);
  }

  /** Whether the value is an object (false: null); anything else hands the file back. */
  private static boolean object(JsonParser p) {
    return nullOr(p, JsonToken.START_OBJECT);
  }

  /** Whether the value is an array (false: null); anything else hands the file back. */
  private static boolean array(JsonParser p) {
    return nullOr(p, JsonToken.START_ARRAY);
  }

  private static boolean nullOr(JsonParser p, JsonToken wanted) {
    JsonToken t = p.currentToken();
    if (t == wanted) {
      return true;
    }
    if (t == JsonToken.VALUE_NULL) {
      return false;
    }
    throw NOT_PLAIN;
  }

  /**
   * Whether the array goes on with an object (false: its end); a null or any other element hands
   * the file back (null elements: the records refuse them, with the full path's message).
   */
  private static boolean element(JsonParser p) {
    JsonToken t = p.nextToken();
    if (t == JsonToken.END_ARRAY) {
      return false;
    }
    if (t != JsonToken.START_OBJECT) {
      throw NOT_PLAIN;
    }
    return true;
  }

  private static String string(JsonParser p) {
    JsonToken t = p.currentToken();
    if (t == JsonToken.VALUE_STRING) {
      return p.getString();
    }
    if (t == JsonToken.VALUE_NULL) {
      return null;
    }
    throw NOT_PLAIN;
  }

  /**
   * An amount, as {@link QuantityLongDeserializer} reads it when it reads it without an error: a
   * non-negative integer within a long, or a quantity string.
   */
  private static Long amount(JsonParser p) {
    JsonToken t = p.currentToken();
    if (t == JsonToken.VALUE_NUMBER_INT) {
      JsonParser.NumberType type = p.getNumberType();
      if (type == JsonParser.NumberType.INT || type == JsonParser.NumberType.LONG) {
        long v = p.getLongValue();
        if (v >= 0) {
          return v;
        }
      }
      throw NOT_PLAIN;
    }
    if (t == JsonToken.VALUE_STRING) {
      Quantity q;
      try {
        q = Quantity.parse(p.getString().trim());
      } catch (IllegalArgumentException e) {
        throw NOT_PLAIN;
      }
      if (q.sign() < 0 || q.toBigDecimal().compareTo(MAX) > 0) {
        throw NOT_PLAIN;
      }
      return q.value();
    }
    if (t == JsonToken.VALUE_NULL) {
      return null;
    }
    throw NOT_PLAIN;
  }

  /**
   * A time in the form the kubelet writes ({@code 2026-01-01T00:00:00Z}, with or without a
   * fraction), which Jackson's reader parses with the same ISO formatter; any other form hands the
   * file back.
   */
  private static Instant instant(JsonParser p) {
    JsonToken t = p.currentToken();
    if (t == JsonToken.VALUE_NULL) {
      return null;
    }
    if (t != JsonToken.VALUE_STRING) {
      throw NOT_PLAIN;
    }
    String s = p.getString();
    if (s.length() < 20 || s.charAt(10) != 'T' || s.charAt(s.length() - 1) != 'Z') {
      throw NOT_PLAIN;
    }
    try {
      return Instant.parse(s);
    } catch (RuntimeException e) {
      throw NOT_PLAIN;
    }
  }
}
