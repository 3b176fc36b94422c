package dev.evictd.linux;

import dev.evictd.api.PressureLine;
import dev.evictd.api.PressureObservation;
import dev.evictd.api.PressureResource;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Clock;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.atomic.AtomicBoolean;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Reads the kernel's pressure stall averages (PSI) of memory, io and cpu from {@code
 * <proc>/pressure/*}, once per sync, as {@link PressureObservation} facts. Without PSI (kernel
 * without CONFIG_PSI, or booted with psi=0) it warns once and returns nothing: rules that match PSI
 * facts simply do not fire.
 */
public final class PsiReader {
  private static final Logger LOG = LoggerFactory.getLogger(PsiReader.class);

  private final Path dir;
  private final Clock clock;
  private final AtomicBoolean warned = new AtomicBoolean();

  /** Reads {@code <procRoot>/pressure/{memory,io,cpu}}. */
  public PsiReader(Path procRoot, Clock clock) {
    this.dir = procRoot.resolve("pressure");
    this.clock = clock;
  }

  /** The pressure file of a resource under {@code procRoot}. */
  public static Path file(Path procRoot, PressureResource resource) {
    return procRoot.resolve("pressure").resolve(resource.key());
  }

  /** Whether the memory pressure file can be read. */
  public boolean available() {
    return Files.isReadable(dir.resolve(PressureResource.MEMORY.key()));
  }

  /**
   * The current averages of every resource and line the kernel reports; empty (after one warning)
   * without PSI.
   */
  public List<PressureObservation> read() {
    Instant now = clock.instant();
    List<PressureObservation> out = new ArrayList<>();
    List<String> missing = new ArrayList<>();
    for (PressureResource r : PressureResource.values()) {
      Path f = dir.resolve(r.key());
      try {
        out.addAll(parse(r, KernelFiles.read(f), now));
      } catch (IOException | RuntimeException e) {
        missing.add(f + " (" + e.getMessage() + ")");
      }
    }
    if (!missing.isEmpty() && warned.compareAndSet(false, true)) {
      LOG.warn(
          "PSI not available: cannot read {}; rules on pressure averages will not fire",
          String.join(", ", missing));
    }
    return out;
  }

  /**
   * Parses a pressure file: lines {@code some|full avg10=N avg60=N avg300=N total=N}.
   *
   * @throws IllegalArgumentException naming the line when it is malformed
   */
  public static List<PressureObservation> parse(
      PressureResource resource, String text, Instant time) {
    List<PressureObservation> out = new ArrayList<>();
    for (String line : text.split("\n")) {
      String t = line.trim();
      if (t.isEmpty()) {
        continue;
      }
      String[] f = t.split("\\s+");
      PressureLine kind;
      if (f[0].equals("some")) {
        kind = PressureLine.SOME;
      } else if (f[0].equals("full")) {
        kind = PressureLine.FULL;
      } else {
        throw new IllegalArgumentException("not a PSI line: \"" + t + "\"");
      }
      Double a10 = null;
      Double a60 = null;
      Double a300 = null;
      long total = -1;
      try {
        for (int i = 1; i < f.length; i++) {
          int eq = f[i].indexOf('=');
          if (eq < 0) {
            throw new IllegalArgumentException("not a PSI line: \"" + t + "\"");
          }
          String k = f[i].substring(0, eq);
          String v = f[i].substring(eq + 1);
          switch (k) {
            case "avg10" -> a10 = Double.parseDouble(v);
            case "avg60" -> a60 = Double.parseDouble(v);
            case "avg300" -> a300 = Double.parseDouble(v);
            case "total" -> total = Long.parseLong(v);
            default -> {
              // a field a newer kernel added: ignored
            }
          }
        }
      } catch (NumberFormatException e) {
        throw new IllegalArgumentException("not a PSI line: \"" + t + "\"");
      }
      if (a10 == null || a60 == null || a300 == null) {
        throw new IllegalArgumentException("PSI line without avg10/avg60/avg300: \"" + t + "\"");
      }
      out.add(new PressureObservation(resource, kind, a10, a60, a300, total, time));
    }
    return out;
  }
}
