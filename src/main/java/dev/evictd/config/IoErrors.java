package dev.evictd.config;

import java.io.IOException;
import java.nio.file.AccessDeniedException;
import java.nio.file.FileSystemException;
import java.nio.file.NoSuchFileException;
import java.nio.file.NotDirectoryException;

/**
 * Says what went wrong with a file in words: the JDK's file exceptions often carry only the path
 * (an {@link AccessDeniedException}'s message is the file name), which reads as no reason at all.
 */
public final class IoErrors {
  private IoErrors() {}

  /** The reason of {@code e}, e.g. {@code permission denied}, {@code no such file or directory}. */
  public static String reason(IOException e) {
    if (e instanceof AccessDeniedException) {
      return "permission denied";
    }
    if (e instanceof NoSuchFileException) {
      return "no such file or directory";
    }
    if (e instanceof NotDirectoryException) {
      return "not a directory";
    }
    if (e instanceof FileSystemException f && f.getReason() != null) {
      return f.getReason();
    }
    return e.getMessage() == null ? e.getClass().getSimpleName() : e.getMessage();
  }
}
