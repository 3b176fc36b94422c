package dev.evictd.cli;

import dev.evictd.api.EvictionPlan;
import dev.evictd.api.Signal;
import java.time.Instant;
import java.util.List;

/**
 * Where things sit on a timeline picture: its fixed sizes, and the horizontal scale that places
 * every step and every instant on the x axis.
 */
final class TimelineLayout {
  static final int WIDTH = 1200;
  static final int LEFT = 200;
  static final int RIGHT = 210;
  static final int AXIS_HEIGHT = 52;
  private static final int SIGNAL_LANE = 160;
  static final int LANE_GAP = 16;
  static final int PLOT_TOP = 40;
  static final int PLOT_BOTTOM = 10;
  static final int CONDITION_ROW = 20;
  private static final int QUIET_LANE = 96; // a signal without thresholds
  private static final int MIN_GAP = 62;
  private static final int STEP_PAD = 30;
  static final int EVENT_ROW = 18;

  private final Timeline timeline;
  private final List<EvictionPlan> plans;
  private double[] stepSec = new double[0];
  private double[] stepX = new double[0];
  private double pxPerSecondAfter;

  /** The layout of {@code timeline}'s steps. */
  TimelineLayout(Timeline timeline) {
    this.timeline = timeline;
    this.plans = timeline.plans();
    domain();
  }

  /**
   * Where each step sits. Steps are what a fixture is made of, so each gap between two steps gets
   * room for its labels (a minimum width, even between syncs at the same time), and the rest of the
   * width is shared in proportion to the time that passed; a single step sits in the middle.
   */
  private void domain() {
    int n = plans.size();
    stepSec = new double[n];
    stepX = new double[n];
    for (int i = 0; i < n; i++) {
      stepSec[i] = seconds(plans.get(i).now());
    }
    double plot = WIDTH - LEFT - RIGHT;
    if (n <= 1) {
      if (n == 1) {
        stepX[0] = LEFT + plot / 2;
      }
      pxPerSecondAfter = plot / 2 / 60;
      return;
    }
    double inner = plot - 2 * STEP_PAD;
    double min = Math.min(MIN_GAP, inner / (n - 1));
    double total = stepSec[n - 1] - stepSec[0];
    double rest = inner - min * (n - 1);
    stepX[0] = LEFT + STEP_PAD;
    for (int i = 1; i < n; i++) {
      double gap = Math.max(0, stepSec[i] - stepSec[i - 1]);
      stepX[i] = stepX[i - 1] + min + (total > 0 ? gap / total * rest : rest / (n - 1));
    }
    double lastGap = stepSec[n - 1] - stepSec[n - 2];
    pxPerSecondAfter = lastGap > 0 ? (stepX[n - 1] - stepX[n - 2]) / lastGap : STEP_PAD / 5.0;
  }

  /** The x of step {@code step} (from 0); past the last step, the last step's. */
  double sx(int step) {
    return stepX[Math.min(step, stepX.length - 1)];
  }

  private double seconds(Instant i) {
    return timeline.seconds(i);
  }

  /** The x of an instant. */
  double x(Instant i) {
    return x(seconds(i));
  }

  /** A time on the axis: between the steps around it, linearly; past the last one, at its pace. */
  double x(double s) {
    int n = stepX.length;
    double v;
    if (n == 0) {
      v = LEFT;
    } else if (s <= stepSec[0]) {
      v = stepX[0];
    } else if (s >= stepSec[n - 1]) {
      v = stepX[n - 1] + (s - stepSec[n - 1]) * pxPerSecondAfter;
    } else {
      int i = 0;
      while (i + 1 < n && stepSec[i + 1] < s) {
        i++;
      }
      double gap = stepSec[i + 1] - stepSec[i];
      v = gap <= 0 ? stepX[i] : stepX[i] + (s - stepSec[i]) / gap * (stepX[i + 1] - stepX[i]);
    }
    return Math.max(LEFT, Math.min(WIDTH - RIGHT, v));
  }

  /** A signal with thresholds gets the room to show them; one without, a smaller lane. */
  int laneHeight(Signal s) {
    return timeline.in().config().thresholds().stream().anyMatch(t -> t.signal() == s)
        ? SIGNAL_LANE
        : QUIET_LANE;
  }
}
