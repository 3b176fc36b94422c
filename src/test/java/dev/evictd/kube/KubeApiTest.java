package dev.evictd.kube;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.evictd.api.EvictdException;
import org.junit.jupiter.api.Test;

/** Request paths are built from escaped segments: no name can change which object is addressed. */
class KubeApiTest {
  @Test
  void aNameIsOneEscapedSegment() {
    assertThat(KubeApi.podPath("apps", "web-7d9c.x_y~z"))
        .isEqualTo("/api/v1/namespaces/apps/pods/web-7d9c.x_y~z");
    assertThat(KubeApi.podPath("apps", "big/../../../kube-system/pods/other?dryRun=All"))
        .isEqualTo(
            "/api/v1/namespaces/apps/pods/big%2F..%2F..%2F..%2Fkube-system%2Fpods%2Fother%3FdryRun%3DAll");
    assertThat(KubeApi.podPath("a b#c", "ü%"))
        .isEqualTo("/api/v1/namespaces/a%20b%23c/pods/%C3%BC%25");
    assertThat(KubeApi.eventsPath("kube-system/../default"))
        .isEqualTo("/api/v1/namespaces/kube-system%2F..%2Fdefault/events");
  }

  @Test
  void whatCannotBeOneSegmentIsRefused() {
    for (String bad : new String[] {"", ".", ".."}) {
      assertThatThrownBy(() -> KubeApi.podPath("apps", bad))
          .isInstanceOf(EvictdException.class)
          .hasMessageContaining("not a name for a request path");
    }
    assertThatThrownBy(() -> KubeApi.segment(null)).isInstanceOf(EvictdException.class);
  }
}
