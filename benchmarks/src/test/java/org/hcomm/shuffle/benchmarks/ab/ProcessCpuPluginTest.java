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
        java.util.concurrent.CountDownLatch burnt = new java.util.concurrent.CountDownLatch(1);
        java.util.concurrent.CountDownLatch exit = new java.util.concurrent.CountDownLatch(1);
        Thread burner = new Thread(() -> {
            // 300 ms of this thread's own CPU, however long the two shared cores take to give it
            java.lang.management.ThreadMXBean mx = java.lang.management.ManagementFactory.getThreadMXBean();
            long x = 0;
            while (mx.getCurrentThreadCpuTime() < 300_000_000L) {
                x += x * 31 + 7;
            }
            if (x == 42) {
                System.out.println(x);
            }
            burnt.countDown();
            try {
                exit.await();
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        }, "hcomm-burner");
        burner.start();
        burnt.await();
        long during = cpu.sample()[hcomm]; // sampled while the thread is alive and done burning
        exit.countDown();
        burner.join();
        long after = cpu.sample()[hcomm];
        assertTrue(during - before >= 250_000_000L, "expected >= 0.25 s CPU in the group, got " + (during - before));
        assertTrue(after >= during, "group CPU went back after the thread exited: " + during + " -> " + after);
    }
}
