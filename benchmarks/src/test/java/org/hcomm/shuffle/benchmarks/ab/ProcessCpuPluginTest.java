package org.hcomm.shuffle.benchmarks.ab;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import org.junit.jupiter.api.Test;

/** The executors' per-thread-group CPU accounting, on this very JVM's /proc/self/task. */
class ProcessCpuPluginTest {

    @Test
    void threadsAreGroupedByTheirLinuxName() {
        assertEquals("task", ProcessCpuPlugin.group("Executor task l"));
        assertEquals("jit", ProcessCpuPlugin.group("C2 CompilerThre"));
        assertEquals("gc", ProcessCpuPlugin.group("G1 Refine#0"));
        assertEquals("gc", ProcessCpuPlugin.group("GC Thread#1"));
        assertEquals("hcomm native", ProcessCpuPlugin.group("hcomm-stream"));
        assertEquals("netty", ProcessCpuPlugin.group("shuffle-server-"));
        assertEquals("other", ProcessCpuPlugin.group("main"));
    }

    @Test
    void aBusyThreadShowsUpInItsGroupAndStaysThereAfterItExits() throws Exception {
        ProcessCpuPlugin.ThreadGroupCpu cpu = new ProcessCpuPlugin.ThreadGroupCpu();
        int hcomm = ProcessCpuPlugin.GROUPS.indexOf("hcomm native");
        long before = cpu.sample()[hcomm];
        Thread burner = new Thread(() -> {
            long until = System.nanoTime() + 400_000_000L;
            long x = 0;
            while (System.nanoTime() < until) {
                x += x * 31 + 7;
            }
            if (x == 42) {
                System.out.println(x);
            }
        }, "hcomm-burner");
        burner.start();
        Thread.sleep(200);
        long during = cpu.sample()[hcomm];
        burner.join();
        long after = cpu.sample()[hcomm];
        assertTrue(during > before, "busy hcomm-named thread not seen: " + before + " -> " + during);
        assertTrue(after - before >= 200_000_000L, "expected >= 0.2 s CPU in the group, got " + (after - before));
        assertTrue(cpu.sample()[hcomm] >= after, "group CPU went back after the thread exited");
    }
}
