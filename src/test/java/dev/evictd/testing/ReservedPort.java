package dev.evictd.testing;

import java.io.IOException;
import java.net.InetSocketAddress;
import java.net.Socket;

/**
 * A loopback port (127.0.0.1) held for a server the test starts on that exact port, for tests that
 * must know the port before the server reports it (a port of 0 is only known once the server's
 * start returns). A port found free and then released could be taken meanwhile by any other process
 * on a shared machine; this one stays bound, with SO_REUSEADDR and never listening, for as long as
 * the test holds it. On Linux that lets a server socket that also sets SO_REUSEADDR (the JDK's do)
 * bind and listen on it, while no other process's bind to port 0 or outgoing connection is given
 * it; before the server listens and after it closes, connections to it are refused.
 */
public final class ReservedPort implements AutoCloseable {
  private final Socket socket;

  private ReservedPort(Socket socket) {
    this.socket = socket;
  }

  /** Binds a fresh loopback port with SO_REUSEADDR, without listening on it. */
  public static ReservedPort bind() throws IOException {
    Socket s = new Socket();
    try {
      s.setReuseAddress(true);
      s.bind(new InetSocketAddress("127.0.0.1", 0));
    } catch (IOException e) {
      s.close();
      throw e;
    }
    return new ReservedPort(s);
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
