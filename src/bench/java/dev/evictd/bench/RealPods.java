package dev.evictd.bench;

import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.client.utils.KubernetesSerialization;

/**
 * Pods as an API server sends a Deployment's pods, for the footprint benchmark: parsed from JSON as
 * the informer parses each list and watch event (every pod with strings of its own), with what such
 * a pod carries: labels and annotations, an owner reference, managedFields, a service account token
 * volume, env, probes, ports, tolerations, conditions and a container status (about 5 KiB of JSON;
 * the bench's own pods are 0.5 KiB).
 */
public final class RealPods {
  private static final KubernetesSerialization JSON = new KubernetesSerialization();

  private static final String TEMPLATE =
      """
      {"apiVersion":"v1","kind":"Pod","metadata":{"name":"%2$s","generateName":"%5$s-7d9f8b6c4-",
       "namespace":"%1$s","uid":"%3$s","resourceVersion":"%4$d",
       "creationTimestamp":"2026-01-01T00:00:00Z",
       "labels":{"app.kubernetes.io/name":"%5$s","app.kubernetes.io/part-of":"shop",
        "pod-template-hash":"7d9f8b6c4"},
       "annotations":{"kubectl.kubernetes.io/restartedAt":"2026-01-01T00:00:00Z",
        "prometheus.io/scrape":"true","prometheus.io/port":"9090"},
       "ownerReferences":[{"apiVersion":"apps/v1","kind":"ReplicaSet","name":"%5$s-7d9f8b6c4",
        "uid":"0f6a3c1e-%6$08d","controller":true,"blockOwnerDeletion":true}],
       "managedFields":[{"manager":"kube-controller-manager","operation":"Update","apiVersion":"v1",
        "time":"2026-01-01T00:00:00Z","fieldsType":"FieldsV1","fieldsV1":{"f:metadata":{
        "f:generateName":{},"f:labels":{".":{},"f:app.kubernetes.io/name":{},
        "f:pod-template-hash":{}},"f:ownerReferences":{}},"f:spec":{"f:containers":{
        "k:{\\"name\\":\\"app\\"}":{".":{},"f:env":{},"f:image":{},"f:name":{},"f:ports":{},
        "f:resources":{}}}}}},
        {"manager":"kubelet","operation":"Update","apiVersion":"v1","time":"2026-01-01T00:00:05Z",
        "fieldsType":"FieldsV1","subresource":"status","fieldsV1":{"f:status":{"f:conditions":{},
        "f:containerStatuses":{},"f:hostIP":{},"f:phase":{},"f:podIP":{},"f:startTime":{}}}}]},
      "spec":{"nodeName":"node","priority":%7$d,"schedulerName":"default-scheduler",
       "serviceAccountName":"default","restartPolicy":"Always","dnsPolicy":"ClusterFirst",
       "terminationGracePeriodSeconds":30,"enableServiceLinks":true,"preemptionPolicy":"PreemptLowerPriority",
       "securityContext":{},
       "containers":[{"name":"app","image":"registry.example/shop/%5$s:1.4.2",
        "imagePullPolicy":"IfNotPresent","ports":[{"name":"http","containerPort":8080,"protocol":"TCP"},
        {"name":"metrics","containerPort":9090,"protocol":"TCP"}],
        "env":[{"name":"LOG_LEVEL","value":"info"},{"name":"POD_NAME","valueFrom":{"fieldRef":
        {"apiVersion":"v1","fieldPath":"metadata.name"}}},{"name":"DB_PASSWORD","valueFrom":
        {"secretKeyRef":{"name":"db","key":"password"}}}],
        "resources":{"requests":{"cpu":"100m","memory":"%8$dMi"},"limits":{"memory":"1Gi"}},
        "livenessProbe":{"httpGet":{"path":"/healthz","port":8080,"scheme":"HTTP"},
        "periodSeconds":10,"timeoutSeconds":1,"successThreshold":1,"failureThreshold":3},
        "readinessProbe":{"httpGet":{"path":"/ready","port":8080,"scheme":"HTTP"},
        "periodSeconds":5,"timeoutSeconds":1,"successThreshold":1,"failureThreshold":3},
        "volumeMounts":[{"name":"kube-api-access-%9$s","readOnly":true,
        "mountPath":"/var/run/secrets/kubernetes.io/serviceaccount"}],
        "terminationMessagePath":"/dev/termination-log","terminationMessagePolicy":"File"}],
       "volumes":[{"name":"kube-api-access-%9$s","projected":{"defaultMode":420,"sources":[
        {"serviceAccountToken":{"expirationSeconds":3607,"path":"token"}},
        {"configMap":{"name":"kube-root-ca.crt","items":[{"key":"ca.crt","path":"ca.crt"}]}},
        {"downwardAPI":{"items":[{"path":"namespace","fieldRef":{"apiVersion":"v1",
        "fieldPath":"metadata.namespace"}}]}}]}}],
       "tolerations":[{"key":"node.kubernetes.io/not-ready","operator":"Exists","effect":"NoExecute",
        "tolerationSeconds":300},{"key":"node.kubernetes.io/unreachable","operator":"Exists",
        "effect":"NoExecute","tolerationSeconds":300}]},
      "status":{"phase":"Running","qosClass":"Burstable","hostIP":"10.0.0.7","podIP":"10.244.%10$d.%11$d",
       "podIPs":[{"ip":"10.244.%10$d.%11$d"}],"startTime":"2026-01-01T00:00:01Z",
       "conditions":[{"type":"PodReadyToStartContainers","status":"True","lastTransitionTime":"2026-01-01T00:00:03Z"},
        {"type":"Initialized","status":"True","lastTransitionTime":"2026-01-01T00:00:01Z"},
        {"type":"Ready","status":"True","lastTransitionTime":"2026-01-01T00:00:09Z"},
        {"type":"ContainersReady","status":"True","lastTransitionTime":"2026-01-01T00:00:09Z"},
        {"type":"PodScheduled","status":"True","lastTransitionTime":"2026-01-01T00:00:00Z"}],
       "containerStatuses":[{"name":"app","ready":true,"started":true,"restartCount":0,
        "image":"registry.example/shop/%5$s:1.4.2",
        "imageID":"registry.example/shop/%5$s@sha256:5f1d2c3b4a5968778695a4b3c2d1e0f9e8d7c6b5a4938271605f4e3d2c1b0a99",
        "containerID":"containerd://%12$s","state":{"running":{"startedAt":"2026-01-01T00:00:04Z"}}}]}}
      """;

  private RealPods() {}

  /** {@code g} as a Deployment's pod, freshly parsed (nothing shared with any other pod). */
  public static Pod pod(BenchData.GenPod g) {
    String app = "app-" + (g.index() % 37);
    String json =
        TEMPLATE.formatted(
            g.ns(),
            g.name(),
            g.uid(),
            1000 + g.index(),
            app,
            g.index() % 37,
            g.priority(),
            Math.max(16, g.requestMi()),
            Integer.toString(g.index() % 100_000, 36),
            (g.index() >> 8) & 255,
            g.index() & 255,
            String.format("%064x", (long) g.index() * 2654435761L));
    return JSON.unmarshal(json, Pod.class);
  }
}
