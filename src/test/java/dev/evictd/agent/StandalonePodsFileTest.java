package dev.evictd.agent;

import static org.assertj.core.api.Assertions.assertThat;

import ch.qos.logback.classic.Level;
import ch.qos.logback.classic.Logger;
import ch.qos.logback.classic.spi.ILoggingEvent;
import ch.qos.logback.core.read.ListAppender;
import dev.evictd.engine.PodFacts;
import dev.evictd.linux.HostPaths;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Clock;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.slf4j.LoggerFactory;

/**
 * {@code evictd run --standalone --pods-file} on a capture of every node's pods ({@code kubectl get
 * pods -A}): the agent keeps the pods its node's kubelet counts as active, as {@code evictd plan}
 * does, and says once at start what it left out.
 */
class StandalonePodsFileTest {
  @Test
  void podsOfOtherNodesAndFinishedPodsAreLeftOutAndLoggedOnce(@TempDir Path dir)
      throws IOException {
    Path pods = dir.resolve("pods.yaml");
    Files.writeString(
        pods,
        """
        kind: PodList
        items:
          - metadata: {name: far, namespace: a, uid: u-far}
            spec: {nodeName: worker-8, containers: [{name: c}]}
          - metadata: {name: done, namespace: a, uid: u-done}
            spec: {nodeName: worker-7, containers: [{name: c}]}
            status: {phase: Failed}
          - metadata: {name: here, namespace: a, uid: u-here}
            spec: {nodeName: worker-7, containers: [{name: c}]}
          - metadata: {name: plain, namespace: a, uid: u-plain}
            spec: {containers: [{name: c}]}
        """);
    // the node name as the agent derives it when no flag names it
    AgentConfig c =
        AgentConfig.resolve(
            null,
            Map.of("standalone", true, "podsFile", pods.toString()),
            Map.of("NODE_NAME", "worker-7"));
    ListAppender<ILoggingEvent> log = new ListAppender<>();
    Logger logger = (Logger) LoggerFactory.getLogger(Agent.class);
    Level level = logger.getLevel();
    log.start();
    logger.addAppender(log);
    logger.setLevel(Level.INFO);
    NodeSources sources;
    try {
      sources = NodeSources.standalone(c, HostPaths.defaults(), Clock.systemUTC());
    } finally {
      logger.setLevel(level);
      logger.detachAppender(log);
    }
    assertThat(sources.pods().activePods())
        .extracting(PodFacts::uid)
        .containsExactly("u-here", "u-plain");
    List<String> lines = log.list.stream().map(ILoggingEvent::getFormattedMessage).toList();
    assertThat(lines)
        .containsOnlyOnce(
            "standalone: podsFile "
                + pods
                + ": 1 of 4 pods run on other nodes than worker-7 and are left out (capture with"
                + " --field-selector spec.nodeName=worker-7, or name the node with --node-name)",
            "standalone: podsFile "
                + pods
                + ": 1 finished pods (Succeeded or Failed) are left out, as the kubelet leaves"
                + " them out",
            "standalone: host statistics, 2 pods from " + pods + ", dry run");
  }
}
