package dev.evictd.cli;

import dev.evictd.api.EvictdException;
import java.io.PrintWriter;
import picocli.CommandLine;
import picocli.CommandLine.Command;

/** The evictd command line. The only place that exits the JVM. */
@Command(
    name = "evictd",
    mixinStandardHelpOptions = true,
    versionProvider = Main.Version.class,
    description = "Kubernetes node eviction, kubelet-exact, with its policy in Drools rules.",
    subcommands = {
      TestCommand.class,
      ReplayCommand.class,
      PlanCommand.class,
      ExplainCommand.class,
      RunCommand.class,
      DiffCommand.class,
      CaptureCommand.class,
      RulesCommand.class,
      StatsCommand.class,
      DoctorCommand.class,
      AdmissionWebhookCommand.class,
      CommandLine.HelpCommand.class
    })
public final class Main implements Runnable {
  /** Exit code: success. */
  public static final int OK = 0;

  /** Exit code: a fixture failed (or a check found problems). */
  public static final int FAILED = 1;

  /** Exit code: bad input (unreadable or invalid file, configuration or rules). */
  public static final int BAD_INPUT = 2;

  /** Exit code: an internal error (a bug). */
  public static final int INTERNAL = 3;

  @CommandLine.Spec CommandLine.Model.CommandSpec spec;

  @Override
  public void run() {
    spec.commandLine().usage(spec.commandLine().getOut());
  }

  public static void main(String[] args) {
    System.exit(
        execute(args, new PrintWriter(System.out, true), new PrintWriter(System.err, true)));
  }

  /** Runs the command line with the given output streams; returns the exit code. */
  public static int execute(String[] args, PrintWriter out, PrintWriter err) {
    CommandLine cl = new CommandLine(new Main());
    cl.setOut(out);
    cl.setErr(err);
    cl.setExecutionExceptionHandler(
        (ex, commandLine, parseResult) -> {
          if (ex instanceof EvictdException) {
            commandLine.getErr().println("evictd: " + ex.getMessage());
            return BAD_INPUT;
          }
          commandLine.getErr().println("evictd: internal error: " + ex);
          if (Boolean.getBoolean("evictd.debug")) {
            ex.printStackTrace(commandLine.getErr());
          }
          return INTERNAL;
        });
    cl.setParameterExceptionHandler(
        (ex, a) -> {
          CommandLine c = ex.getCommandLine();
          if (ex.getCause() instanceof EvictdException bad) {
            // a typed option's own parser refused the value: its one line says where and why
            c.getErr().println("evictd: " + bad.getMessage());
            return BAD_INPUT;
          }
          c.getErr().println("evictd: " + ex.getMessage());
          c.getErr()
              .println(
                  "Try '" + c.getCommandSpec().qualifiedName() + " --help' for more information.");
          return BAD_INPUT;
        });
    return cl.execute(args);
  }

  /** Reports the version from the jar manifest. */
  static final class Version implements CommandLine.IVersionProvider {
    @Override
    public String[] getVersion() {
      String v = Main.class.getPackage().getImplementationVersion();
      return new String[] {"evictd " + (v == null ? "(development)" : v)};
    }
  }
}
