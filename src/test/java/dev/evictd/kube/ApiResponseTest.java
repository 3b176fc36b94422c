package dev.evictd.kube;

import static org.assertj.core.api.Assertions.assertThat;

import org.junit.jupiter.api.Test;

class ApiResponseTest {
  @Test
  void describesStatusBodiesByTheirMessage() {
    var r = new ApiResponse(409, "{\"kind\":\"Status\",\"message\":\"Precondition failed\"}", null);
    assertThat(r.describe()).isEqualTo("HTTP 409: Precondition failed");
    assertThat(new ApiResponse(502, "bad gateway", null).describe())
        .isEqualTo("HTTP 502: bad gateway");
    assertThat(ApiResponse.noResponse("GET /x: timeout").describe()).isEqualTo("GET /x: timeout");
  }

  @Test
  void transientMeansNoResponseServerErrorOrThrottled() {
    assertThat(ApiResponse.noResponse("x").isTransient()).isTrue();
    assertThat(new ApiResponse(500, "", null).isTransient()).isTrue();
    assertThat(new ApiResponse(429, "", null).isTransient()).isTrue();
    assertThat(new ApiResponse(404, "", null).isTransient()).isFalse();
    assertThat(new ApiResponse(403, "", null).isTransient()).isFalse();
    assertThat(new ApiResponse(201, "", null).isSuccess()).isTrue();
  }
}
