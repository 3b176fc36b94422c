package dev.evictd.testing;

import java.io.IOException;
import java.net.InetSocketAddress;
import java.net.Socket;

/**
 * A loopback port (127.0.0.1) on which nothing listens, held while the test runs: a connection to
 * it is refused. A port found free and then released could be taken meanwhile by any other process
 * on a shared machine (a test server of another build), which would then answer; a bound socket
 * that never listens keeps it refused.
 */
public final class ClosedPort implements AutoCloseable {
  private final Socket socket;

  private ClosedPort(Socket socket) {
    this.socket = socket;
  }

  /** Binds a fresh loopback port without listening on it. */
  public static ClosedPort bind() throws IOException {
    Socket s = new Socket();
    try {
      s.bind(new InetSocketAddress("127.0.0.1", 0));
    } catch (IOException e) {
      s.close();
      throw e;
    }
    return new ClosedPort(s);
  }

  /** The port number. */
  public int port() {
    return socket.getLocalPort();
  }

  @Override
  public void close() throws IOException {
    socket.close();
  }
}
