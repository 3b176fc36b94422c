package dev.evictd.api;

/** An owner reference of a pod (e.g. its ReplicaSet or StatefulSet). */
public record PodOwner(String kind, String name, String uid, boolean controller) {}
