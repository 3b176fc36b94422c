package dev.evictd.testing;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Set;
import tools.jackson.databind.JsonNode;
import tools.jackson.dataformat.yaml.YAMLMapper;

/**
 * RBAC for tests: maps HTTP requests to the (API group, resource[/subresource], verb) the API
 * server or the kubelet authorizes them as, and reads the rules of a ClusterRole from a manifest.
 */
public final class Rbac {
  /**
   * What a request is authorized as: {@code resource} includes the subresource ({@code
   * pods/eviction}).
   */
  public record Access(String group, String resource, String verb) {
    @Override
    public String toString() {
      return verb + " " + (group.isEmpty() ? "" : group + "/") + resource;
    }
  }

  private final List<JsonNode> documents;

  private Rbac(List<JsonNode> documents) {
    this.documents = documents;
  }

  /** Reads a multi-document manifest. */
  public static Rbac load(Path manifest) throws IOException {
    List<JsonNode> docs = new ArrayList<>();
    try (var it =
        new YAMLMapper()
            .readerFor(JsonNode.class)
            .<JsonNode>readValues(Files.readString(manifest))) {
      while (it.hasNext()) {
        JsonNode d = it.next();
        if (d != null && !d.isNull() && !d.isMissingNode()) {
          docs.add(d);
        }
      }
    }
    return new Rbac(docs);
  }

  /** The documents of {@code kind}. */
  public List<JsonNode> documents(String kind) {
    return documents.stream().filter(d -> kind.equals(d.path("kind").asString())).toList();
  }

  /** Every (group, resource, verb) the ClusterRole {@code name} grants, wildcards refused. */
  public Set<Access> grants(String clusterRole) {
    Set<Access> grants = new LinkedHashSet<>();
    for (JsonNode role : documents("ClusterRole")) {
      if (!clusterRole.equals(role.path("metadata").path("name").asString())) {
        continue;
      }
      for (JsonNode rule : role.path("rules")) {
        for (JsonNode g : rule.path("apiGroups")) {
          for (JsonNode r : rule.path("resources")) {
            for (JsonNode v : rule.path("verbs")) {
              if (g.asString().equals("*")
                  || r.asString().equals("*")
                  || v.asString().equals("*")) {
                throw new IllegalArgumentException("wildcard in rule " + rule);
              }
              grants.add(new Access(g.asString(), r.asString(), v.asString()));
            }
          }
        }
      }
    }
    return grants;
  }

  /**
   * How the API server authorizes {@code method} on {@code pathAndQuery}, following its
   * request-info rules: {@code /api/v1/...} is the core group, {@code /apis/GROUP/VERSION/...} a
   * named group; an optional {@code namespaces/NS} prefix; then resource, name and subresource
   * (everything after {@code proxy} is the proxied path). GET is get with a name, else list, or
   * watch with {@code watch=true}; DELETE without a name is deletecollection.
   */
  public static Access apiServer(String method, String pathAndQuery) {
    String[] pq = pathAndQuery.split("\\?", 2);
    boolean watch = pq.length > 1 && List.of(pq[1].split("&")).contains("watch=true");
    List<String> parts = new ArrayList<>(List.of(pq[0].replaceAll("^/+", "").split("/")));
    String group;
    if (parts.get(0).equals("api")) {
      group = "";
      parts = parts.subList(2, parts.size());
    } else if (parts.get(0).equals("apis")) {
      group = parts.get(1);
      parts = parts.subList(3, parts.size());
    } else {
      throw new IllegalArgumentException("not a resource path: " + pathAndQuery);
    }
    if (parts.size() > 2 && parts.get(0).equals("namespaces")) {
      parts = parts.subList(2, parts.size());
    }
    String resource = parts.get(0);
    String name = parts.size() > 1 ? parts.get(1) : null;
    if (parts.size() > 2) {
      resource = resource + "/" + parts.get(2);
    }
    String verb =
        switch (method) {
          case "GET", "HEAD" -> name != null ? "get" : watch ? "watch" : "list";
          case "POST" -> "create";
          case "PUT" -> "update";
          case "PATCH" -> "patch";
          case "DELETE" -> name != null ? "delete" : "deletecollection";
          default -> throw new IllegalArgumentException("unknown method " + method);
        };
    return new Access(group, resource, verb);
  }

  /**
   * How the kubelet authorizes a request on its port: {@code /stats/*} as nodes/stats, {@code
   * /metrics*} as nodes/metrics, {@code /logs/*} as nodes/log, {@code /spec/*} as nodes/spec,
   * anything else as nodes/proxy; the verb from the method (GET get, POST create, PUT update, PATCH
   * patch, DELETE delete).
   */
  public static Access kubelet(String method, String path) {
    String p = path.split("\\?", 2)[0];
    String sub =
        p.startsWith("/stats/") || p.equals("/stats")
            ? "stats"
            : p.startsWith("/metrics")
                ? "metrics"
                : p.startsWith("/logs") ? "log" : p.startsWith("/spec") ? "spec" : "proxy";
    String verb =
        switch (method) {
          case "GET", "HEAD" -> "get";
          case "POST" -> "create";
          case "PUT" -> "update";
          case "PATCH" -> "patch";
          case "DELETE" -> "delete";
          default -> throw new IllegalArgumentException("unknown method " + method);
        };
    return new Access("", "nodes/" + sub, verb);
  }
}
