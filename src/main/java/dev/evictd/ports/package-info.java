/**
 * The agent's seams, as the kubelet's eviction {@code types.go} declares its interfaces: where
 * statistics come from ({@link dev.evictd.ports.StatsProvider}), the node's pods ({@link
 * dev.evictd.ports.PodSource}), how a pod is evicted ({@link dev.evictd.ports.PodEvictor}), node
 * reclaim ({@link dev.evictd.ports.NodeReclaimer}) and events ({@link dev.evictd.ports.EventSink}).
 * {@code kube}, {@code linux} and {@code executor} implement them, {@code agent} uses them; the
 * seams name only facts and values ({@code api}, {@code stats}), never an implementation (one
 * exception: {@link dev.evictd.ports.PodSource#isGone} reads a pod's uid as the engine's {@code
 * PodFacts} does). The notifier factory stays in {@code linux} while its spec names cgroup types.
 */
package dev.evictd.ports;
