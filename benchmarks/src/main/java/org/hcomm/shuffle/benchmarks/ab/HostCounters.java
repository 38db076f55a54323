package org.hcomm.shuffle.benchmarks.ab;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;

/**
 * The host's page-cache counters from {@code /proc/vmstat}, read around a measured job: how many file pages the job
 * (and anything else on the host) had to read back from disk after the kernel evicted them
 * ({@code workingset_refault_file}), and major faults. On this machine the hypervisor's guest runs DAMON proactive
 * reclaim, which pages out file pages idle for about a minute: shuffle files written early in a long map stage can be
 * gone from the page cache when the reduce stage reads them, in every configuration. Runs are sequential, so the
 * difference across a job belongs to it. Empty where {@code /proc/vmstat} cannot be read.
 */
final class HostCounters {
    static final List<String> KEYS = List.of("workingset_refault_file", "pgmajfault");

    private HostCounters() {
    }

    static Map<String, Long> read() {
        Map<String, Long> out = new TreeMap<>();
        try {
            for (String line : Files.readAllLines(Path.of("/proc/vmstat"))) {
                String[] kv = line.split(" ");
                if (kv.length == 2 && KEYS.contains(kv[0])) {
                    out.put(kv[0], Long.parseLong(kv[1]));
                }
            }
        } catch (IOException | RuntimeException e) {
            out.clear();
        }
        return out;
    }

    /** The growth of each counter present in both readings. */
    static Map<String, Long> since(Map<String, Long> before, Map<String, Long> after) {
        Map<String, Long> out = new TreeMap<>();
        after.forEach((k, v) -> {
            if (before.containsKey(k)) {
                out.put(k, v - before.get(k));
            }
        });
        return out;
    }
}
