/**
 * Faithful ports of Kubernetes functions that evictd needs bit for bit; each class comment names
 * the upstream file it follows. They turn Kubernetes inputs into the facts of {@code
 * dev.evictd.api} (and raise its exceptions), so this package depends on {@code api} and {@code
 * stats} only.
 *
 * <p>{@link dev.evictd.k8s.SummaryJson} is no port but belongs at this level: the stats Summary's
 * JSON binding parses amounts with {@code api.Quantity}, so in {@code stats} (below {@code api},
 * whose {@code PodStats} carries a {@code Summary.PodStats}) it would close a package cycle.
 *
 * <p>{@link dev.evictd.api.Quantity} and {@link dev.evictd.config.GoDuration} are ports too, but
 * stay where they are: rule files name them ({@code import dev.evictd.api.*}, {@code import
 * dev.evictd.config.GoDuration}) and the rule sandbox allows them by those names.
 */
package dev.evictd.k8s;
