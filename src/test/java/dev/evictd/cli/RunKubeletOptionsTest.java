package dev.evictd.cli;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.PrintWriter;
import java.io.StringWriter;
import java.nio.file.Files;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@code evictd run} with kubelet settings that cannot work: one line naming the setting and the
 * file, exit 2, before anything connects anywhere (never "internal error").
 */
class RunKubeletOptionsTest {
  static String[] run(String... rest) {
    String[] args = new String[rest.length + 3];
    args[0] = "run";
    args[1] = "--node-name";
    args[2] = "node-1";
    System.arraycopy(rest, 0, args, 3, rest.length);
    return args;
  }

  static void assertOneLineExitTwo(String expectedStart, String... args) {
    StringWriter err = new StringWriter();
    int code =
        Main.execute(args, new PrintWriter(new StringWriter(), true), new PrintWriter(err, true));
    assertThat(code).as(err.toString()).isEqualTo(2);
    assertThat(err.toString()).startsWith(expectedStart).doesNotContain("internal error");
    assertThat(err.toString().lines()).hasSize(1);
  }

  @Test
  void misconfiguredKubeletAccessIsOneLineAndExitTwo(@TempDir Path dir) throws Exception {
    Path token = Files.writeString(dir.resolve("token"), "t");
    Path notPem = Files.writeString(dir.resolve("ca.crt"), "not a certificate");
    assertOneLineExitTwo(
        "evictd: kubeletTokenFile " + dir.resolve("missing") + ": no such file",
        run(
            "--kubelet-url",
            "https://127.0.0.1:10250",
            "--kubelet-token-file",
            dir.resolve("missing").toString()));
    assertOneLineExitTwo(
        "evictd: kubeletCaFile " + dir.resolve("no-ca") + ": no such file",
        run(
            "--kubelet-url",
            "https://127.0.0.1:10250",
            "--kubelet-token-file",
            token.toString(),
            "--kubelet-ca-file",
            dir.resolve("no-ca").toString()));
    assertOneLineExitTwo(
        "evictd: kubeletCaFile " + notPem + ": ",
        run(
            "--kubelet-url",
            "https://127.0.0.1:10250",
            "--kubelet-token-file",
            token.toString(),
            "--kubelet-ca-file",
            notPem.toString()));
    assertOneLineExitTwo(
        "evictd: kubeletUrl http://127.0.0.1:10255: plain HTTP would send the token in clear",
        run("--kubelet-url", "http://127.0.0.1:10255"));
    assertOneLineExitTwo(
        "evictd: --kubelet-insecure-skip-tls-verify: give either kubeletCaFile or"
            + " kubeletInsecureSkipTLSVerify, not both",
        run(
            "--kubelet-url",
            "https://127.0.0.1:10250",
            "--kubelet-insecure-skip-tls-verify",
            "--kubelet-ca-file",
            token.toString()));
  }
}
