package org.apache.spark.shuffle.hcomm.internal.fetch;

import java.util.zip.Checksum;

import org.apache.spark.SparkConf;
import org.apache.spark.SparkEnv;
import org.apache.spark.network.shuffle.checksum.ShuffleChecksumHelper;
import org.apache.spark.storage.BlockManagerId;
import org.hcomm.bridge.transport.ReadBatch;
import org.hcomm.bridge.transport.TransportException;

/**
 * Where a block that failed to decode went bad, the way Spark's own fetch tells (SPARK-36206): the checksum of the
 * block's bytes as this reader gets them, computed with the algorithm of Spark's shuffle checksums, goes to the
 * owner's block manager, which compares it with the checksum its writer stored and with one it computes again over
 * the file on its disk. The bytes are read again one-sidedly into a scratch chunk (the chunks of a block already
 * consumed may hold other bytes by now).
 */
final class CorruptionDiagnosis {
    private CorruptionDiagnosis() {
    }

    /**
     * Reads {@code length} bytes at {@code src} of {@code read}'s owner again through {@code scratch}, checksummed with
     * {@code algorithm}, until {@code deadline} ({@code System.nanoTime()}), and asks the owner's block manager where
     * they went bad. Returns what to say; a failed read again throws.
     */
    static String diagnose(String algorithm, long deadline, int shuffleId, MapRead read, int reduceId, long src,
            long length, ReadBatch batch, ReceiveBuffer.Chunk scratch, int chunkSize) throws TransportException {
        Checksum checksum = ShuffleChecksumHelper.getChecksumByAlgorithm(algorithm);
        for (long at = 0; at < length; at += chunkSize) {
            if (System.nanoTime() > deadline) {
                return "where it went bad cannot be told: reading the block again took longer than readTimeout";
            }
            int n = (int) Math.min(chunkSize, length - at);
            batch.read(read.channel(), scratch.address, src + at, n);
            batch.await();
            checksum.update(scratch.view.slice(0, n)); // straight from the chunk, no copy
        }
        BlockManagerId owner = read.owner();
        Object cause = SparkEnv.get().blockManager().blockStoreClient().diagnoseCorruption(owner.host(), owner.port(),
                owner.executorId(), shuffleId, read.mapId(), reduceId, checksum.getValue(), algorithm);
        return "Spark's checksum diagnosis: " + cause + explain(String.valueOf(cause));
    }

    /** The algorithm of Spark's shuffle checksums (its writers store one per partition), or null when they are off. */
    static String checksumAlgorithm() {
        var config = org.apache.spark.internal.config.package$.MODULE$;
        SparkConf conf = SparkEnv.get().conf();
        return (Boolean) conf.get(config.SHUFFLE_CHECKSUM_ENABLED()) ? conf.get(config.SHUFFLE_CHECKSUM_ALGORITHM())
                : null;
    }

    /** What Spark's diagnosis causes mean for a one-sided read. */
    private static String explain(String cause) {
        return switch (cause) {
            case "DISK_ISSUE" -> ", the owner's file no longer matches the checksum its writer stored";
            case "NETWORK_ISSUE" -> ", the owner's file is intact: the bytes changed in the owner's registered "
                    + "memory or on the way";
            case "CHECKSUM_VERIFY_PASS" -> ", the bytes read again match the writer's checksum: the first read "
                    + "went bad on the way or in this executor";
            default -> "";
        };
    }
}
