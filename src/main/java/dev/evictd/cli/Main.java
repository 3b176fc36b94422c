package dev.evictd.cli;

import dev.evictd.api.EvictdException;
import dev.evictd.fixture.FixtureLoader;
import java.io.PrintWriter;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Set;
import picocli.CommandLine;
import picocli.CommandLine.Command;

/** The evictd command line. The only place that exits the JVM. */
@Command(
    name = "evictd",
    mixinStandardHelpOptions = true,
    versionProvider = Main.Version.class,
    description = "Kubernetes node eviction, kubelet-exact, with its policy in Drools rules.")
public final class Main implements Runnable {
  /**
   * The subcommands by name, in the order the usage lists them. Registered here rather than in the
   * annotation so that a command line naming one builds only that one: picocli reads every
   * command's options by reflection when it is registered, a fifth of a short command's start-up.
   */
  static final Map<String, Class<?>> SUBCOMMANDS = subcommands();

  static {
    // picocli looks for Groovy's Closure class when it first makes a command (a class evictd never
    // has): that miss opened every jar of the class path, one after the other, on the main thread
    System.setProperty("picocli.disable.closures", "true");
    // slf4j finds its provider with a ServiceLoader unless told which it is: that lookup opened
    // every jar of the class path (a tenth of `evictd plan`'s main thread); evictd logs through
    // logback, and an operator's own -Dslf4j.provider still wins. slf4j then says at INFO which
    // provider it was told: only its warnings and errors are shown, as without the property
    if (System.getProperty("slf4j.provider") == null) {
      System.setProperty("slf4j.provider", "ch.qos.logback.classic.spi.LogbackServiceProvider");
      if (System.getProperty("slf4j.internal.verbosity") == null) {
        System.setProperty("slf4j.internal.verbosity", "WARN");
      }
    }
  }

  private static Map<String, Class<?>> subcommands() {
    Map<String, Class<?>> m = new LinkedHashMap<>();
    m.put("test", TestCommand.class);
    m.put("replay", ReplayCommand.class);
    m.put("plan", PlanCommand.class);
    m.put("explain", ExplainCommand.class);
    m.put("run", RunCommand.class);
    m.put("diff", DiffCommand.class);
    m.put("capture", CaptureCommand.class);
    m.put("rules", RulesCommand.class);
    m.put("stats", StatsCommand.class);
    m.put("doctor", DoctorCommand.class);
    m.put("admission-webhook", AdmissionWebhookCommand.class);
    m.put("help", CommandLine.HelpCommand.class);
    return Collections.unmodifiableMap(m);
  }

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
    throw noCommand(spec.commandLine());
  }

  /**
   * A command line that names a command with subcommands but none of them: nothing was done, so a
   * usage error (exit 2), listing them, not the usage and exit 0 (the line names the command:
   * {@link UsageErrors}).
   */
  static CommandLine.ParameterException noCommand(CommandLine cl) {
    String commands = String.join(", ", cl.getSubcommands().keySet());
    return new CommandLine.ParameterException(cl, "no command given (one of: " + commands + ")");
  }

  public static void main(String[] args) {
    System.exit(
        execute(args, new PrintWriter(System.out, true), new PrintWriter(System.err, true)));
  }

  /** Runs the command line with the given output streams; returns the exit code. */
  public static int execute(String[] args, PrintWriter out, PrintWriter err) {
    boolean defaultsAhead = args.length > 0 && args[0].equals("plan") && defaultRules(args);
    if (defaultsAhead) {
      RulesOption.loadDefaultsAhead();
    }
    try {
      return run(args, TerminalSafeWriter.wrap(out), TerminalSafeWriter.wrap(err));
    } finally {
      if (defaultsAhead) {
        RulesOption.settleDefaultsAhead(); // a command that did not take them leaves no thread
      }
    }
  }

  /**
   * Whether a command line leaves the rules and how they load at their defaults (the packaged
   * rules, no pin, no cache directory of its own...): its rules can load before it is read. Only a
   * guess to save the work of a load no one takes: {@link RulesOption} takes it only once its
   * options are read and are indeed the defaults.
   */
  static boolean defaultRules(String[] args) {
    for (String a : args) {
      if (a.startsWith("--rules")
          || a.startsWith("--allow-unsafe-rules")
          || a.startsWith("--strict-permissions")
          || a.startsWith("@")
          || a.equals("-h")
          || a.equals("--help")
          || a.equals("-V")
          || a.equals("--version")) {
        return false;
      }
    }
    return true;
  }

  private static int run(String[] args, PrintWriter out, PrintWriter err) {
    if (args.length > 0 && PARSE_PODS.contains(args[0])) {
      boolean plan = args[0].equals("plan");
      Thread prepare = new Thread(() -> prepareParsing(plan), "evictd-prepare");
      prepare.setDaemon(true);
      prepare.start();
    }
    CommandLine cl = new CommandLine(new Main());
    Class<?> named = args.length == 0 ? null : SUBCOMMANDS.get(args[0]);
    if (named != null && named != CommandLine.HelpCommand.class) {
      cl.addSubcommand(args[0], subcommand(named));
    } else {
      // the usage, help, an unknown command: every command
      SUBCOMMANDS.forEach((name, c) -> cl.addSubcommand(name, subcommand(c)));
    }
    // after the subcommands: registering reaches those a command line has at the time
    Converters.registerOn(cl);
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
          if (ex.getCause() != null && ex.getArgSpec() != null) {
            // a value its type refuses: picocli's words name Java's types and exceptions
            c.getErr()
                .println(
                    "evictd: " + Converters.refusal(ex.getArgSpec(), ex.getValue(), ex.getCause()));
            return BAD_INPUT;
          }
          // an unknown option or command, something required missing: one line, not picocli's two
          c.getErr().println(UsageErrors.line(ex, a));
          return BAD_INPUT;
        });
    return cl.execute(args);
  }

  /** The commands that parse pod files: their parser is built on a second thread at start. */
  private static final Set<String> PARSE_PODS = Set.of("test", "replay", "plan", "explain", "diff");

  /**
   * Builds the pod parser while picocli reads the command line and the command loads its rules:
   * with two cores, most of what parsing the first pods file costs.
   */
  private static void prepareParsing(boolean plan) {
    try {
      if (plan) {
        FixtureLoader.preparePods(); // its summary is a file, most often plain JSON
      } else {
        FixtureLoader.prepare();
      }
    } catch (RuntimeException | LinkageError e) {
      // nothing is lost: the command's own parse builds the same again and reports what fails
    }
  }

  /**
   * A subcommand's own command line: made on its own, as picocli makes the top level one, so that
   * its model transformer (the flags of every configuration key) is applied.
   */
  private static CommandLine subcommand(Class<?> c) {
    return new CommandLine(c);
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
