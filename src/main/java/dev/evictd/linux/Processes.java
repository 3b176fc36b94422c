package dev.evictd.linux;

import java.io.IOException;

/** Signals processes (through jnr-posix {@code kill}). */
public final class Processes {
  /** SIGTERM: asks a process to stop. */
  public static final int SIGTERM = Native.SIGTERM;

  /** SIGKILL: stops a process at once. */
  public static final int SIGKILL = Native.SIGKILL;

  private Processes() {}

  /** Whether signals can be sent (libc is bound). */
  public static boolean available() {
    return Native.available();
  }

  /** Sends {@code signal} to {@code pid}; returns false when the process is already gone. */
  public static boolean signal(int pid, int signal) throws IOException {
    return Native.kill(pid, signal);
  }
}
