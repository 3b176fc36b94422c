package dev.evictd.kube;

import tools.jackson.core.JacksonException;
import tools.jackson.databind.JsonNode;
import tools.jackson.databind.json.JsonMapper;

/**
 * The result of one API request: its HTTP status and body, or (code 0) why no response came.
 *
 * @param code the HTTP status, 0 when the request failed before a response (timeout, connection
 *     refused)
 * @param body the response body ("" when none)
 * @param error what went wrong when there was no response, else null
 */
public record ApiResponse(int code, String body, String error) {
  private static final int MAX_BODY_IN_MESSAGE = 300;
  private static final JsonMapper JSON = JsonMapper.builder().build();
  private static final java.util.regex.Pattern FORBIDDEN_USER =
      java.util.regex.Pattern.compile(
          "User \\\\?\"([^\"\\\\]{1,256})\\\\?\"|\\(user=([^,)]{1,256})[,)]");

  public ApiResponse {
    body = body == null ? "" : body;
  }

  /** A request that got no response. */
  public static ApiResponse noResponse(String error) {
    return new ApiResponse(0, "", error);
  }

  /** Whether the request succeeded (2xx). */
  public boolean isSuccess() {
    return code >= 200 && code < 300;
  }

  /**
   * Whether trying again may help: no response, 5xx, or 429 (API priority and fairness throttling).
   */
  public boolean isTransient() {
    return code == 0 || code >= 500 || code == 429;
  }

  /** One line for logs: the status and the server's message, or the error. */
  public String describe() {
    if (code == 0) {
      return error;
    }
    String message = statusMessage();
    if (code == 403) {
      String user = forbiddenUser();
      return "HTTP 403: not authorized"
          + (user == null ? "" : " as " + user)
          + (message.isEmpty() ? "" : ": " + message);
    }
    return "HTTP " + code + (message.isEmpty() ? "" : ": " + message);
  }

  /**
   * The user a 403 names: the API server's {@code User "NAME" cannot ...} or the kubelet's {@code
   * Forbidden (user=NAME, verb=...)}; null when the body names none.
   */
  public String forbiddenUser() {
    java.util.regex.Matcher m = FORBIDDEN_USER.matcher(body);
    if (m.find()) {
      return m.group(1) != null ? m.group(1) : m.group(2);
    }
    return null;
  }

  /** The message of a Kubernetes Status body, or the body itself (shortened). */
  String statusMessage() {
    String b = body.strip();
    if (b.startsWith("{")) {
      try {
        JsonNode message = JSON.readTree(b).get("message");
        if (message != null && message.isString()) {
          return message.asString();
        }
      } catch (JacksonException e) {
        // not JSON after all: show it as text
      }
    }
    return b.length() > MAX_BODY_IN_MESSAGE ? b.substring(0, MAX_BODY_IN_MESSAGE) + "..." : b;
  }
}
