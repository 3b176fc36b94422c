package dev.evictd.config;

import java.io.IOException;
import java.nio.file.AccessDeniedException;
import java.nio.file.FileSystemException;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.NotDirectoryException;
import java.nio.file.Path;
import java.nio.file.attribute.BasicFileAttributes;

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
    return e.getMessage() == null ? "input/output error" : e.getMessage();
  }

  /**
   * What {@code t} says went wrong, in words, never its class's name: a network or TLS failure
   * ({@code connection refused}, {@code unknown host NAME}, {@code TLS handshake failed: ...}), a
   * file's ({@code /ca.crt: no such file}), else its first line.
   */
  public static String words(Throwable t) {
    String m = t.getMessage() == null ? "" : t.getMessage().lines().findFirst().orElse("").strip();
    String detail = m.isEmpty() ? "" : ": " + m;
    if (t instanceof java.net.ConnectException || t instanceof java.net.NoRouteToHostException) {
      return m.isEmpty()
          ? (t instanceof java.net.ConnectException ? "connection refused" : "no route to host")
          : m;
    }
    if (t instanceof java.net.UnknownHostException) {
      return "unknown host" + (m.isEmpty() ? "" : " " + m);
    }
    if (t instanceof java.net.http.HttpConnectTimeoutException) {
      return "connect timed out";
    }
    if (t instanceof java.net.SocketTimeoutException
        || t instanceof java.net.http.HttpTimeoutException) {
      return "timed out" + detail;
    }
    if (t instanceof javax.net.ssl.SSLHandshakeException) {
      return "TLS handshake failed" + detail;
    }
    if (t instanceof javax.net.ssl.SSLException) {
      return "TLS error" + detail;
    }
    if (t instanceof java.io.EOFException) {
      return "the connection was closed" + (m.isEmpty() ? "" : " (" + m + ")");
    }
    if (t instanceof FileSystemException f && f.getFile() != null) {
      return f.getFile() + ": " + cannotRead(Path.of(f.getFile()), f);
    }
    if (t instanceof IOException e) {
      return m.isEmpty() ? reason(e) : m;
    }
    return m.isEmpty() ? "unexpected error" : m;
  }

  /**
   * Why reading {@code file} failed with {@code e}, in words: {@code no such file}, {@code is a
   * directory, not a file}, {@code cannot read: permission denied}, {@code cannot read: REASON}.
   */
  public static String cannotRead(Path file, IOException e) {
    if (e instanceof NoSuchFileException) {
      return "no such file";
    }
    if (Files.isDirectory(file)) {
      return "is a directory, not a file";
    }
    return "cannot read: " + reason(e);
  }

  /**
   * Why writing {@code file} failed with {@code e}, in words: {@code is a directory, not a file},
   * {@code cannot write: permission denied}, {@code cannot write: REASON}.
   */
  public static String cannotWrite(Path file, IOException e) {
    if (Files.isDirectory(file)) {
      return "is a directory, not a file";
    }
    return "cannot write: " + reason(e);
  }

  /**
   * Why {@code file} is not a file to read, as {@link #cannotRead} words it (or {@code not a
   * regular file}: a device, a pipe), or null when it is one: a regular file (through links).
   * Nothing is opened.
   */
  public static String notAFile(Path file) {
    BasicFileAttributes a;
    try {
      a = Files.readAttributes(file, BasicFileAttributes.class);
    } catch (IOException e) {
      return cannotRead(file, e);
    }
    if (a.isDirectory()) {
      return "is a directory, not a file";
    }
    return a.isRegularFile() ? null : "not a regular file";
  }

  /**
   * Why {@code file} cannot be read, as {@link #notAFile} words it, else what opening it fails with
   * ({@code cannot read: permission denied}), or null when it can be read.
   */
  public static String unreadable(Path file) {
    String why = notAFile(file);
    if (why != null) {
      return why;
    }
    try {
      Files.newByteChannel(file).close();
      return null;
    } catch (IOException e) {
      return cannotRead(file, e);
    }
  }
}
