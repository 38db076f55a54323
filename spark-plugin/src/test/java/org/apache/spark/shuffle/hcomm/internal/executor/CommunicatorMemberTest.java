package org.apache.spark.shuffle.hcomm.internal.executor;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.Map;
import org.apache.spark.SparkConf;
import org.apache.spark.api.plugin.PluginContext;
import org.apache.spark.resource.ResourceInformation;
import org.apache.spark.shuffle.hcomm.TestPluginContext;
import org.apache.spark.shuffle.hcomm.internal.conf.HcommConf;
import org.apache.spark.shuffle.hcomm.internal.conf.HcommSettings;
import org.apache.spark.shuffle.hcomm.internal.rpc.Messages;
import org.junit.jupiter.api.Test;

/** Which NPU an executor uses on the communicator path, and which SoCs take that path. */
class CommunicatorMemberTest {

    /** A plugin context that only knows its executor id and resources. */
    private static PluginContext context(Map<String, ResourceInformation> resources) {
        return new TestPluginContext("7", resources);
    }

    private static SparkConf resource(String name) {
        return new SparkConf(false).set(HcommConf.COMMUNICATOR_RESOURCE.key(), name);
    }

    /** Settings naming resource {@code name}, which Spark schedules. */
    private static HcommSettings scheduled(String name) {
        return HcommSettings.parse(resource(name).set("spark.executor.resource." + name + ".amount", "1"));
    }

    /** Without a resource the executor names no NPU: the driver assigns the lowest one free on its host. */
    @Test
    void noResourceConfiguredLeavesTheNpuToTheDriver() {
        assertEquals(Messages.RegisterExecutor.NO_DEVICE,
                CommunicatorMember.device(context(Map.of()), HcommSettings.parse(new SparkConf(false))));
    }

    @Test
    void theResourceSparkAssignedIsTheDevice() {
        var npu = new ResourceInformation("npu", new String[] {"3", "4"});
        assertEquals(3, CommunicatorMember.device(context(Map.of("npu", npu)), scheduled("npu")));
    }

    @Test
    void aResourceTheExecutorWasNotGivenIsAnErrorNamingTheKey() {
        IllegalStateException e = assertThrows(IllegalStateException.class,
                () -> CommunicatorMember.device(context(Map.of()), scheduled("npu")));
        assertTrue(e.getMessage().contains(HcommConf.COMMUNICATOR_RESOURCE.key()), e.getMessage());
    }

    @Test
    void anAddressThatIsNotANumberIsAnErrorNamingTheKey() {
        var npu = new ResourceInformation("npu", new String[] {"card-a"});
        IllegalStateException e = assertThrows(IllegalStateException.class,
                () -> CommunicatorMember.device(context(Map.of("npu", npu)), scheduled("npu")));
        assertTrue(e.getMessage().contains("card-a") && e.getMessage().contains(HcommConf.COMMUNICATOR_RESOURCE.key())
                && e.getMessage().contains("ASCEND_RT_VISIBLE_DEVICES"), e.getMessage());
    }

    @Test
    void onlyA2AndA3TakeTheCommunicatorPath() {
        assertTrue(CommunicatorMember.isA2OrA3("Ascend910B3"));
        assertTrue(CommunicatorMember.isA2OrA3("Ascend910_9391"));
        assertFalse(CommunicatorMember.isA2OrA3("Ascend950PR"));
        assertFalse(CommunicatorMember.isA2OrA3("Ascend910"));
        assertFalse(CommunicatorMember.isA2OrA3(null));
    }

    @Test
    void aResourceSparkDoesNotScheduleFailsValidationNamingBothKeys() {
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
                () -> HcommConf.validate(resource("npu")));
        assertTrue(e.getMessage().contains(HcommConf.COMMUNICATOR_RESOURCE.key())
                && e.getMessage().contains("spark.executor.resource.npu.amount"), e.getMessage());
        HcommConf.validate(resource("npu").set("spark.executor.resource.npu.amount", "1"));
    }

    @Test
    void anHcclBufferThatCannotHoldAWindowPerHalfFailsValidation() {
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> HcommConf.validate(
                new SparkConf(false).set(HcommConf.COMMUNICATOR_BUFFER_SIZE.key(), "4m")));
        assertTrue(e.getMessage().contains(HcommConf.COMMUNICATOR_BUFFER_SIZE.key()), e.getMessage());
    }
}
