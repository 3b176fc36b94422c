package dev.evictd.kube;

import java.time.Duration;
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
 * @param retryAfter the server's {@code Retry-After} (throttling), null when it sent none
 * @param maybeCarriedOut no response, but the request was sent: the server may have carried it out
 *     (a timeout, a connection dropped after sending); false when it never left (connection
 *     refused, no route) or a response came
 */
public record ApiResponse(
    int code, String body, String error, Duration retryAfter, boolean maybeCarriedOut) {
  private static final int MAX_BODY_IN_MESSAGE = 300;
  private static final JsonMapper JSON = JsonMapper.builder().build();
  private static final java.util.regex.Pattern FORBIDDEN_USER =
      java.util.regex.Pattern.compile(
          "User \\\\?\"([^\"\\\\]{1,256})\\\\?\"|\\(user=([^,)]{1,256})[,)]");

  /** The cause reason the API server gives a PodDisruptionBudget's refusal of an eviction. */
  public static final String DISRUPTION_BUDGET_CAUSE = "DisruptionBudget";

  public ApiResponse {
    body = body == null ? "" : body;
  }

  /** A response without Retry-After. */
  public ApiResponse(int code, String body, String error) {
    this(code, body, error, null, false);
  }

  /** A request that never reached the server (nothing was carried out). */
  public static ApiResponse noResponse(String error) {
    return new ApiResponse(0, "", error, null, false);
  }

  /** A request that was sent but got no answer: the server may have carried it out. */
  public static ApiResponse noAnswer(String error) {
    return new ApiResponse(0, "", error, null, true);
  }

  /**
   * The message of the {@code DisruptionBudget} cause of a 429 (the budget's own explanation, e.g.
   * "The disruption budget web needs 2 healthy pods and has 2 currently"), the Status message when
   * the cause has none; null when this is not a budget's refusal (a throttling 429 has no such
   * cause).
   */
  public String disruptionBudgetCause() {
    if (code != 429) {
      return null;
    }
    JsonNode status = statusBody();
    if (status == null) {
      return null;
    }
    for (JsonNode cause : status.path("details").path("causes")) {
      if (DISRUPTION_BUDGET_CAUSE.equals(cause.path("reason").asString(""))) {
        String m = cause.path("message").asString("");
        return m.isEmpty() ? statusMessage() : m;
      }
    }
    return null;
  }

  /**
   * Whether a write may be sent again: a transient failure that is not a budget's refusal and was
   * certainly not carried out (a request that got no answer is checked, not repeated).
   */
  public boolean isRetryableWrite() {
    return isTransient() && !maybeCarriedOut && disruptionBudgetCause() == null;
  }

  /** Whether this is a throttling answer (429 without a disruption budget cause). */
  public boolean isThrottled() {
    return code == 429 && disruptionBudgetCause() == null;
  }

  private JsonNode statusBody() {
    String b = body.strip();
    if (!b.startsWith("{")) {
      return null;
    }
    try {
      return JSON.readTree(b);
    } catch (JacksonException e) {
      return null;
    }
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

  /** One line for logs: the status and the server's message (and the budget's), or the error. */
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
    String budget = disruptionBudgetCause();
    if (budget != null && !budget.equals(message)) {
      message = message.isEmpty() ? budget : message + " (" + budget + ")";
    }
    return "HTTP "
        + code
        + (message.isEmpty() ? "" : ": " + message)
        + (retryAfter == null ? "" : " (Retry-After " + retryAfter.toSeconds() + "s)");
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
