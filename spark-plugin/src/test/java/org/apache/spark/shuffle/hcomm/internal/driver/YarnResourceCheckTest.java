package org.apache.spark.shuffle.hcomm.internal.driver;

import static org.junit.jupiter.api.Assertions.assertDoesNotThrow;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.Map;
import java.util.Set;

import org.apache.spark.SparkConf;
import org.junit.jupiter.api.Test;

/**
 * The YARN resource type check's parts that need no ResourceManager (examples' YarnClusterTest runs it against
 * one): which settings ask YARN for a type, and the message for a type YARN does not declare.
 */
class YarnResourceCheckTest {
    private static final Set<String> DECLARED = Set.of("memory-mb", "vcores", "npu");

    @Test
    void theSettingsThatAskYarnForATypeAreFound() {
        SparkConf conf = new SparkConf(false).set("spark.yarn.executor.resource.npu.amount", "1")
                .set("spark.yarn.am.resource.yarn.io/gpu.amount", "1")
                .set("spark.yarn.driver.resource.fpga.amount", "2")
                .set("spark.executor.resource.npu.amount", "1") // Spark's scheduling, not a request to YARN
                .set("spark.yarn.executor.resource.npu.vendor", "x");
        assertEquals(Map.of("spark.yarn.executor.resource.npu.amount", "npu",
                "spark.yarn.am.resource.yarn.io/gpu.amount", "yarn.io/gpu",
                "spark.yarn.driver.resource.fpga.amount", "fpga"), YarnResourceCheck.requested(conf));
    }

    @Test
    void declaredTypesPass() {
        assertNull(YarnResourceCheck.problem(Map.of("spark.yarn.executor.resource.npu.amount", "npu"), DECLARED));
    }

    @Test
    void anUndeclaredTypeIsNamedWithWhatToSet() {
        String p = YarnResourceCheck.problem(Map.of("spark.yarn.executor.resource.npu.amount", "npu",
                "spark.yarn.executor.resource.ascend.amount", "ascend"), DECLARED);
        assertTrue(p.startsWith("spark.yarn.executor.resource.ascend.amount asks YARN for resource type 'ascend', "
                + "which YARN's ResourceManager does not declare (it declares memory-mb, npu, vcores)"), p);
        assertTrue(p.contains("yarn.resource-types=ascend"), p);
        assertTrue(p.contains("yarn.nodemanager.resource-type.ascend"), p);
        assertTrue(p.contains("DominantResourceCalculator"), p);
    }

    @Test
    void underFallbackNeverAnUndeclaredTypeFailsUnderAutoTheApplicationGoesOn() {
        String problem = YarnResourceCheck.problem(Map.of("spark.yarn.executor.resource.npu.amount", "npu"),
                Set.of("memory-mb", "vcores"));
        SparkConf never = new SparkConf(false).set("spark.shuffle.hcomm.fallback", "never");
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
                () -> YarnResourceCheck.judge(problem, never));
        assertEquals(problem, e.getMessage());
        assertDoesNotThrow(() -> YarnResourceCheck.judge(problem, new SparkConf(false)));
        assertDoesNotThrow(() -> YarnResourceCheck.judge(null, never));
    }

    @Test
    void otherMastersAreNotChecked() {
        SparkConf conf = new SparkConf(false).set("spark.master", "local-cluster[2,1,1024]")
                .set("spark.yarn.executor.resource.ascend.amount", "1");
        assertDoesNotThrow(() -> YarnResourceCheck.verify(conf));
    }
}
