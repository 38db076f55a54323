package org.hcomm.shuffle.benchmarks.ab;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.stream.Stream;

import jdk.jfr.consumer.RecordedEvent;
import jdk.jfr.consumer.RecordedFrame;
import jdk.jfr.consumer.RecordedStackTrace;
import jdk.jfr.consumer.RecordedThread;
import jdk.jfr.consumer.RecordingFile;

/**
 * Where the executors spent the reduce stages, from Java Flight Recorder recordings ({@code -Dab.jfr=true} makes
 * every executor JVM record with JFR's "profile" settings): the task threads' execution samples taken while a reduce
 * stage ran, each put in the category of its innermost frame that belongs to a known component, plus the JVM's own
 * work in the same intervals (GC pauses, JIT compilations recorded by JFR's default threshold).
 */
final class JfrProfile {
    /**
     * Categories in report order. A sample belongs to the category of its innermost frame outside the JDK and the
     * Scala library (so {@code Arrays.copyOf} called by Kryo counts as deserialisation).
     */
    static final List<String> CATEGORIES = List.of("hcomm plugin", "spark shuffle read", "spark shuffle write",
            "(de)serialisation", "compression", "operators (aggregation, sort, join, codegen)", "workload code",
            "other");
    static final String SAMPLES = "taskSamples";
    static final String GC_PAUSE_MS = "gcPauseMs";
    static final String JIT_MS = "jitMs";

    private JfrProfile() {
    }

    static String category(String className) {
        if (className.startsWith("org.apache.spark.shuffle.hcomm.") || className.startsWith("org.hcomm.bridge.")
                || className.startsWith("com.sun.jna.")) {
            return "hcomm plugin";
        }
        if (className.startsWith("org.apache.spark.storage.ShuffleBlockFetcherIterator")
                || className.startsWith("org.apache.spark.network.")
                || className.startsWith("org.apache.spark.shuffle.BlockStoreShuffleReader")
                || className.startsWith("io.netty.")) {
            return "spark shuffle read";
        }
        if (className.startsWith("org.apache.spark.shuffle.")
                || className.startsWith("org.apache.spark.storage.DiskBlockObjectWriter")) {
            return "spark shuffle write";
        }
        if (className.startsWith("com.esotericsoftware.") || className.startsWith("org.apache.spark.serializer.")
                || className.startsWith("java.io.Object")
                || className.startsWith("org.apache.spark.sql.execution.UnsafeRowSerializer")) {
            return "(de)serialisation";
        }
        if (className.startsWith("net.jpountz.") || className.startsWith("com.github.luben.")
                || className.startsWith("org.xerial.snappy.") || className.startsWith("org.apache.spark.io.")
                || className.startsWith("java.util.zip.")) {
            return "compression";
        }
        if (className.startsWith("org.apache.spark.util.collection.")
                || className.startsWith("org.apache.spark.sql.")
                || className.startsWith("org.apache.spark.unsafe.")) {
            return "operators (aggregation, sort, join, codegen)";
        }
        if (className.startsWith("org.hcomm.shuffle.benchmarks.") || className.startsWith("io.trino.tpch.")) {
            return "workload code";
        }
        if (className.startsWith("java.") || className.startsWith("jdk.") || className.startsWith("sun.")
                || className.startsWith("scala.")) {
            return null; // look at the caller
        }
        return "other";
    }

    /**
     * Sums all recordings in {@code dir} over the given wall-clock intervals ({from, to} epoch ms): task-thread
     * samples per category, {@link #SAMPLES}, {@link #GC_PAUSE_MS} and {@link #JIT_MS}.
     */
    static Map<String, Long> summarize(Path dir, List<long[]> intervals) throws IOException {
        Map<String, Long> out = new LinkedHashMap<>();
        for (String c : CATEGORIES) {
            out.put(c, 0L);
        }
        out.put(SAMPLES, 0L);
        out.put(GC_PAUSE_MS, 0L);
        out.put(JIT_MS, 0L);
        List<Path> files;
        try (Stream<Path> s = Files.list(dir)) {
            files = s.filter(p -> p.toString().endsWith(".jfr")).sorted().toList();
        }
        for (Path f : files) {
            for (RecordedEvent e : RecordingFile.readAllEvents(f)) {
                long t = e.getStartTime().toEpochMilli();
                if (!within(intervals, t)) {
                    continue;
                }
                switch (e.getEventType().getName()) {
                    case "jdk.ExecutionSample" -> {
                        RecordedThread th = e.getThread("sampledThread");
                        String name = th == null ? null : th.getJavaName();
                        if (name != null && name.startsWith("Executor task launch worker")) {
                            out.merge(SAMPLES, 1L, Long::sum);
                            out.merge(categoryOf(e.getStackTrace()), 1L, Long::sum);
                        }
                    }
                    case "jdk.GarbageCollection" -> out.merge(GC_PAUSE_MS,
                            e.getDuration("sumOfPauses").toMillis(), Long::sum);
                    case "jdk.Compilation" -> out.merge(JIT_MS, e.getDuration().toMillis(), Long::sum);
                    default -> {
                    }
                }
            }
        }
        return out;
    }

    static String categoryOf(RecordedStackTrace stack) {
        if (stack == null) {
            return "other";
        }
        for (RecordedFrame f : stack.getFrames()) {
            if (f.getMethod() == null || f.getMethod().getType() == null) {
                continue;
            }
            String name = f.getMethod().getType().getName();
            String c = category(name);
            if (c != null) {
                return c;
            }
        }
        return "other";
    }

    private static boolean within(List<long[]> intervals, long t) {
        for (long[] i : intervals) {
            if (t >= i[0] && t <= i[1]) {
                return true;
            }
        }
        return false;
    }

    /** The JVM option that makes an executor record into {@code dir} (one file per JVM, written when it exits). */
    static String option(Path dir) {
        return "-XX:StartFlightRecording=filename=" + dir.toAbsolutePath() + "/,settings=profile,dumponexit=true";
    }

    /** Waits (bounded) until {@code n} recordings are in {@code dir}; executors write theirs as they exit. */
    static void awaitRecordings(Path dir, int n, Duration timeout) throws IOException, InterruptedException {
        long deadline = System.nanoTime() + timeout.toNanos();
        while (System.nanoTime() < deadline) {
            try (Stream<Path> s = Files.list(dir)) {
                if (s.filter(p -> p.toString().endsWith(".jfr")).count() >= n) {
                    Thread.sleep(500); // let the last one finish writing
                    return;
                }
            }
            Thread.sleep(200);
        }
        throw new IOException("only some of " + n + " JFR recordings appeared in " + dir + " within " + timeout);
    }
}
