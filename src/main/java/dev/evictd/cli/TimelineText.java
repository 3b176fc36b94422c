package dev.evictd.cli;

import dev.evictd.api.EvictionDecision;
import dev.evictd.api.EvictionPlan;
import dev.evictd.api.NodeConditionType;
import dev.evictd.api.Quantity;
import dev.evictd.api.Signal;
import dev.evictd.api.Threshold;
import java.util.List;
import java.util.Locale;
import java.util.stream.Collectors;

/**
 * How a timeline page writes values: HTML/XML escaping, amounts and coordinates, labels cut to the
 * room they have, and the parts of a plan (threshold states, conditions, reclaim, eviction method)
 * as short text.
 */
final class TimelineText {
  static final double CHAR = 6.4; // average width of an 11px sans-serif character

  private TimelineText() {}

  /** {@code th}'s status in {@code p}, or null when the plan does not list it. */
  static EvictionPlan.ThresholdStatus status(EvictionPlan p, Threshold th) {
    for (EvictionPlan.ThresholdStatus st : p.thresholds()) {
      if (st.threshold().id().equals(th.id())) {
        return st;
      }
    }
    return null;
  }

  /** {@code q} as a long, capped at {@link Long#MAX_VALUE}. */
  static long amount(Quantity q) {
    return q.toBigDecimal().min(java.math.BigDecimal.valueOf(Long.MAX_VALUE)).longValue();
  }

  /** A threshold's state at a step, e.g. {@code memory.available < 1Gi: met, in grace}. */
  static String thresholdState(EvictionPlan.ThresholdStatus s) {
    StringBuilder sb = new StringBuilder(s.threshold().id());
    if (s.quantity() != null) {
      sb.append(" < ").append(s.quantity());
    }
    sb.append(s.met() ? ": met" : ": not yet resolved");
    if (!s.threshold().isHard()) {
      sb.append(s.gracePeriodMet() ? ", grace met" : ", in grace");
    }
    if (s.actionable()) {
      sb.append(", actionable");
    }
    return sb.toString();
  }

  /** Node conditions as a list, or {@code none}. */
  static String conditions(List<NodeConditionType> cs) {
    return cs.isEmpty() ? "none" : cs.stream().map(Enum::name).collect(Collectors.joining(", "));
  }

  /** What node-level reclaim freed at a step, and whether that was enough. */
  static String reclaim(EvictionPlan p) {
    return "node-level reclaim: "
        + reclaimShort(p)
        + (p.reclaimResolved() ? " (enough: no eviction)" : " (not enough)");
  }

  /** What node-level reclaim freed at a step. */
  static String reclaimShort(EvictionPlan p) {
    return p.reclaimed().stream().map(Object::toString).collect(Collectors.joining(", "));
  }

  /** An eviction's method as the text output writes it, e.g. {@code delete-pod}. */
  static String method(EvictionDecision d) {
    return d.method().name().toLowerCase(Locale.ROOT).replace('_', '-');
  }

  /** Amounts as people read them: 1.5Gi, 350Mi; counts as 12.3k. */
  static String human(long v, Signal s) {
    String[] units = s.binaryUnits() ? new String[] {"", "Ki", "Mi", "Gi", "Ti", "Pi", "Ei"} : null;
    double base = s.binaryUnits() ? 1024 : 1000;
    if (units == null) {
      units = new String[] {"", "k", "M", "G", "T", "P", "E"};
    }
    double x = v;
    int u = 0;
    while (Math.abs(x) >= base && u < units.length - 1) {
      x /= base;
      u++;
    }
    String n =
        x >= 100 || u == 0
            ? String.format(Locale.ROOT, "%.0f", x)
            : x >= 10
                ? String.format(Locale.ROOT, "%.1f", x)
                : String.format(Locale.ROOT, "%.2f", x);
    if (n.contains(".")) {
      n = n.replaceAll("0+$", "").replaceAll("\\.$", "");
    }
    return n + units[u];
  }

  /** {@code s} cut to {@code px} of width with an ellipsis; empty when not even that fits. */
  static String fit(String s, double px) {
    int max = (int) Math.floor(px / CHAR);
    if (s.length() <= max) {
      return s;
    }
    return max < 6 ? "" : s.substring(0, max - 1) + "\u2026";
  }

  /** A coordinate with one decimal. */
  static String f(double v) {
    return String.format(Locale.ROOT, "%.1f", v);
  }

  /**
   * Escapes text for HTML and XML content and attribute values. Characters XML cannot carry (C0
   * controls but tab and newline, lone surrogates, U+FFFE/U+FFFF) become U+FFFD, so the SVG stays
   * well-formed whatever a pod name or message holds.
   */
  static String esc(String s) {
    if (s == null) {
      return "";
    }
    StringBuilder b = new StringBuilder(s.length() + 16);
    for (int i = 0; i < s.length(); i++) {
      char c = s.charAt(i);
      switch (c) {
        case '&' -> b.append("&amp;");
        case '<' -> b.append("&lt;");
        case '>' -> b.append("&gt;");
        case '"' -> b.append("&quot;");
        case '\'' -> b.append("&#39;");
        default -> {
          if (Character.isHighSurrogate(c)
              && i + 1 < s.length()
              && Character.isLowSurrogate(s.charAt(i + 1))) {
            b.append(c).append(s.charAt(++i));
          } else if ((c < 0x20 && c != '\t' && c != '\n')
              || Character.isSurrogate(c)
              || c == 0xFFFE
              || c == 0xFFFF
              || (c >= 0x7F && c < 0xA0)) {
            b.append('\uFFFD');
          } else {
            b.append(c);
          }
        }
      }
    }
    return b.toString();
  }
}
