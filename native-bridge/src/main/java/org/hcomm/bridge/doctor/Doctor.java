package org.hcomm.bridge.doctor;

import java.io.IOException;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.function.Function;
import org.hcomm.bridge.HcommNative;
import org.hcomm.bridge.LoadOptions;
import org.hcomm.bridge.install.Api;
import org.hcomm.bridge.install.Finding;
import org.hcomm.bridge.install.Finding.Check;
import org.hcomm.bridge.install.Install;
import org.hcomm.bridge.raw.HcommSymbol.Need;

/**
 * {@code hcomm doctor}: is this host ready for the HComm shuffle? One line per check (library, symbols, ABI,
 * product, end to end, Spark) with PASS / WARN / FAIL / SKIP and what to do; exit code 0 when the shuffle can run
 * as configured, 1 when a check failed, 2 on a usage error.
 *
 * <pre>
 * java -jar &lt;bundle&gt;.jar doctor [--provider soft|cann] [--library PATH] [--address IP]
 *     [--api auto|endpoint|communicator] [--read-strategy onThread|nbiFence] [--devices OWNER,READER]
 *     [--bytes N] [--json FILE]
 * </pre>
 * {@code --api} is {@code spark.shuffle.hcomm.api}: with {@code auto} (the default) the SoC decides, as in an
 * executor ({@link ApiPath}), and every check judges the path it takes; {@code --devices} are the two NPUs of the
 * communicator path's end-to-end check (one rank each).
 * The bundle's {@code Main-Class} adds the Spark check; this jar's own {@link #main} runs the others and says
 * where the Spark check is.
 */
public final class Doctor {
    /** What the doctor is asked to check: what to load ({@code load}, its API as asked) and how to read. */
    public record Options(LoadOptions load, String address, long bytes, Path json, int ownerDevice,
            int readerDevice) {}

    /** The findings, in check order, and the path checked ({@code endpoint} or {@code communicator}) and why. */
    public record Report(Options options, Api path, String why, List<Finding> findings) {
        public boolean canRun() {
            return findings.stream().noneMatch(Finding::failed);
        }
    }

    static final String USAGE = "usage: doctor [--provider soft|cann] [--library PATH] [--address IP] "
            + "[--api auto|endpoint|communicator] [--read-strategy onThread|nbiFence] [--devices OWNER,READER] "
            + "[--bytes N] [--json FILE]";
    private static final long DEFAULT_BYTES = 256L << 20;
    private static final long MAX_BYTES = 1L << 30;

    private Doctor() {}

    /** This jar's entry point: {@code doctor [options]}. */
    public static void main(String[] args) {
        System.exit(main(args, o -> Finding.skip(Check.SPARK, "run from the Spark bundle jar (java -jar "
                + "hcomm-spark<line>_<scala>-<version>.jar doctor) to check the Spark line"), System.out));
    }

    /**
     * Runs {@code doctor [options]} with {@code spark} as the Spark check; prints the report to {@code out};
     * returns the exit code.
     */
    public static int main(String[] args, Function<Options, Finding> spark, PrintStream out) {
        quietJdkLogging();
        Options options;
        try {
            options = parse(args);
        } catch (IllegalArgumentException e) {
            out.println(e.getMessage());
            out.println(USAGE);
            return 2;
        }
        Report report = run(options, spark);
        out.print(text(report));
        if (options.json() != null) {
            try {
                Files.writeString(options.json(), json(report), StandardCharsets.UTF_8);
            } catch (IOException e) {
                out.println("could not write " + options.json() + ": " + e);
                return 1;
            }
        }
        return report.canRun() ? 0 : 1;
    }

    /**
     * Run from a jar without SLF4J, the bridge logs through the JDK's logging, whose INFO lines would repeat the
     * report on stderr: only warnings there.
     */
    static void quietJdkLogging() {
        java.util.logging.Logger.getLogger("").setLevel(java.util.logging.Level.WARNING);
    }

    static Options parse(String[] args) {
        int i = 0;
        if (args.length > 0 && args[0].equals("doctor")) {
            i = 1;
        } else if (args.length > 0 && !args[0].startsWith("--")) {
            throw new IllegalArgumentException("unknown command '" + args[0] + "' (known: doctor)");
        }
        LoadOptions load = LoadOptions.DEFAULTS.withApi(Api.AUTO);
        String address = "127.0.0.1";
        long bytes = DEFAULT_BYTES;
        Path json = null;
        int[] devices = {0, 1};
        for (; i < args.length; i++) {
            String opt = args[i];
            if (i + 1 >= args.length) {
                throw new IllegalArgumentException(opt + " needs a value");
            }
            String v = args[++i];
            LoadOptions loading = load.with(opt, v); // --provider, --library, --api, --read-strategy
            if (loading != null) {
                load = loading;
                continue;
            }
            switch (opt) {
                case "--address":
                    address = v;
                    break;
                case "--devices":
                    devices = parseDevices(v);
                    break;
                case "--bytes":
                    bytes = parseBytes(v);
                    break;
                case "--json":
                    json = Path.of(v);
                    break;
                default:
                    throw new IllegalArgumentException("unknown option " + opt + " (known: --provider, --library, "
                            + "--address, --api, --read-strategy, --devices, --bytes, --json)");
            }
        }
        return new Options(load, address, bytes, json, devices[0], devices[1]);
    }

    private static int[] parseDevices(String v) {
        String[] w = v.split(",");
        try {
            int[] d = {Integer.parseInt(w[0].trim()), Integer.parseInt(w[w.length - 1].trim())};
            if (w.length == 2 && d[0] >= 0 && d[1] >= 0 && d[0] != d[1]) {
                return d;
            }
        } catch (NumberFormatException e) {
            // said below
        }
        throw new IllegalArgumentException("--devices " + v + " is not valid; name two different NPUs, the "
                + "owner's and the reader's, e.g. 0,1");
    }

    private static long parseBytes(String v) {
        long bytes;
        try {
            bytes = Long.parseLong(v);
        } catch (NumberFormatException e) {
            bytes = -1;
        }
        if (bytes < 8 || bytes > MAX_BYTES || bytes % 8 != 0) {
            throw new IllegalArgumentException("--bytes " + v + " is not valid; use a multiple of 8 from 8 to "
                    + MAX_BYTES + " (1 GiB)");
        }
        return bytes;
    }

    /** Runs every check in order; a check that needs what a failed one found is skipped, saying so. */
    public static Report run(Options o, Function<Options, Finding> spark) {
        LoadOptions load = o.load();
        Need strategy = load.strategyNeed();
        // the path the SoC takes, decided before the library is bound so that the quick checks judge that path
        ApiPath path = ApiPath.decide(load.api(), Install.discover(load.provider(), load.libraryPath()));
        // the quick checks as an executor on that path runs them: the loader's, in this process (the end-to-end
        // check's owner process loads as this one did)
        HcommNative.load(load.withApi(path.chosen()));
        List<Finding> findings = new ArrayList<>();
        for (Finding f : HcommNative.quickChecks()) {
            findings.add(f.check() == Check.SYMBOLS && path.communicator() ? ApiPath.withAcl(f, HcommNative.install())
                    : f);
        }
        boolean opened = findings.stream().anyMatch(f -> f.check() == Check.LIBRARY && !f.failed());
        findings.add(opened ? ProductCheck.check(strategy, path)
                : Finding.skip(Check.PRODUCT, "the library did not load"));
        boolean failed = findings.stream().anyMatch(Finding::failed);
        findings.add(failed ? Finding.skip(Check.END_TO_END, "a check above failed: a read could crash or "
                + "cannot work, so none is tried")
                : path.communicator() ? CommunicatorEndToEnd.run(load.provider(), o.address(), o.bytes(),
                        o.ownerDevice(), o.readerDevice())
                : EndToEnd.run(load.provider(), o.address(), o.bytes(), strategy));
        findings.add(spark.apply(o));
        return new Report(o, path.chosen(), path.requested() != Api.AUTO ? "set explicitly"
                : path.soc() == null ? "SoC unknown" : "SoC " + path.soc(), findings);
    }

    /** The printed report. */
    static String text(Report r) {
        StringBuilder b = new StringBuilder();
        b.append("hcomm doctor: provider ").append(r.options().load().provider()).append(", api ")
                .append(r.options().load().api()).append(": the ").append(r.path()).append(" path (").append(r.why())
                .append(")");
        if (r.path() == Api.ENDPOINT) {
            b.append(", readStrategy ").append(LoadOptions.strategyName(r.options().load().readStrategy()));
        }
        b.append('\n');
        for (Finding f : r.findings()) {
            b.append(String.format("%-4s  %-10s  %s%n", f.status(), f.check().label(), f.summary()));
            if (!f.advice().isEmpty()) {
                b.append(String.format("%-4s  %-10s  do: %s%n", "", "", f.advice()));
            }
        }
        long fails = r.findings().stream().filter(Finding::failed).count();
        if (r.canRun()) {
            return b.append("ready: the HComm shuffle can run here as checked\n").toString();
        }
        b.append("not ready: ").append(fails).append(" check(s) failed; fix the FAIL lines above\n");
        if (failed(r, Check.LIBRARY, Check.SYMBOLS, Check.ABI)) {
            b.append("  executors refuse this install too: with fallback auto Spark's fetch moves every block, with "
                    + "never they stop\n");
        } else if (failed(r, Check.PRODUCT, Check.END_TO_END)) {
            b.append("  executors do not run this check: they would start, and their one-sided reads fail (fetch "
                    + "failures, or Spark's fetch with fallback auto)\n");
        }
        if (failed(r, Check.SPARK)) {
            b.append("  this bundle does not fit the Spark found: the application would stop at start-up, naming "
                    + "the bundle to use\n");
        }
        return b.toString();
    }

    private static boolean failed(Report r, Check... checks) {
        List<Check> which = List.of(checks);
        return r.findings().stream().anyMatch(f -> f.failed() && which.contains(f.check()));
    }

    /** The report as JSON. */
    static String json(Report r) {
        LoadOptions load = r.options().load();
        StringBuilder b = new StringBuilder("{\"provider\":").append(quote(load.provider().toString()))
                .append(",\"api\":").append(quote(load.api().toString())).append(",\"path\":")
                .append(quote(r.path().toString())).append(",\"why\":").append(quote(r.why()))
                .append(",\"readStrategy\":").append(quote(LoadOptions.strategyName(load.readStrategy())))
                .append(",\"ready\":").append(r.canRun()).append(",\"findings\":[");
        for (int i = 0; i < r.findings().size(); i++) {
            Finding f = r.findings().get(i);
            b.append(i == 0 ? "" : ",").append("{\"check\":").append(quote(f.check().label()))
                    .append(",\"status\":").append(quote(f.status().name()))
                    .append(",\"summary\":").append(quote(f.summary()))
                    .append(",\"advice\":").append(quote(f.advice())).append('}');
        }
        return b.append("]}\n").toString();
    }

    private static String quote(String s) {
        StringBuilder b = new StringBuilder("\"");
        for (char c : s.toCharArray()) {
            if (c == '"' || c == '\\') {
                b.append('\\').append(c);
            } else if (c < 0x20) {
                b.append(String.format("\\u%04x", (int) c));
            } else {
                b.append(c);
            }
        }
        return b.append('"').toString();
    }
}
