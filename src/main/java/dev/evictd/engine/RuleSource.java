package dev.evictd.engine;

/**
 * One rule file's text and where it came from.
 *
 * @param name the file name, unique within a rule set (e.g. {@code rank-memory.drl})
 * @param path the path shown in messages (e.g. {@code rules/rank-memory.drl})
 * @param text the DRL source
 */
public record RuleSource(String name, String path, String text) {}
