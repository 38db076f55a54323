package org.apache.spark.shuffle.hcomm.internal.write;

import java.io.DataOutputStream;
import java.io.File;
import java.io.FileOutputStream;
import java.io.IOException;
import java.io.BufferedOutputStream;
import java.io.UncheckedIOException;
import java.nio.channels.FileChannel;
import java.nio.file.Files;
import java.nio.file.StandardOpenOption;
import java.nio.file.StandardCopyOption;
import java.util.Map;
import java.util.Optional;

import org.apache.spark.SparkEnv;
import org.apache.spark.shuffle.IndexShuffleBlockResolver;
import org.apache.spark.shuffle.api.ShuffleExecutorComponents;
import org.apache.spark.shuffle.api.ShuffleMapOutputWriter;
import org.apache.spark.shuffle.api.SingleSpillShuffleMapOutputWriter;

/**
 * The executor side of Spark's shuffle I/O with {@code writeTarget=arena}: map outputs are written into the send
 * arena ({@link ArenaMapOutputWriter}) while it has room, else by Spark's own local-disk writer, which also takes
 * a serialized shuffle's single spill when the arena cannot hold it. Spark's writers (sort, serialized, bypass),
 * their choice and their spills stay Spark's. Thread-safe: each map task's writer is its own, used by its thread.
 */
public final class ArenaExecutorComponents implements ShuffleExecutorComponents {
    private final ShuffleExecutorComponents spark;
    private final PublisherOf publisherOf;
    private final String checksumAlgorithm;

    /** Which publisher a map task's output is for. */
    public interface PublisherOf {
        /** The one the shuffle manager took when Spark got the task's writer, or null (then Spark's file). */
        MapOutputPublisher publisher(int shuffleId, long mapId);
    }

    /** {@code spark}: Spark's local-disk components. */
    public ArenaExecutorComponents(ShuffleExecutorComponents spark, PublisherOf publisherOf,
            String checksumAlgorithm) {
        this.spark = spark;
        this.publisherOf = publisherOf;
        this.checksumAlgorithm = checksumAlgorithm;
    }

    @Override
    public void initializeExecutor(String appId, String execId, Map<String, String> extraConfigs) {
        spark.initializeExecutor(appId, execId, extraConfigs);
    }

    @Override
    public ShuffleMapOutputWriter createMapOutputWriter(int shuffleId, long mapTaskId, int numPartitions)
            throws IOException {
        ArenaMapOutputWriter arena = arenaWriter(shuffleId, mapTaskId, numPartitions, 0);
        return arena != null ? arena : spark.createMapOutputWriter(shuffleId, mapTaskId, numPartitions);
    }

    /**
     * A writer into the arena when this executor has one with room for the output, or null. An output of unknown
     * size ({@code bytes} 0) is expected to be as large as the largest of its shuffle so far, with an eighth more:
     * one that would not fit goes to Spark's file from its first byte, not by an overflow's copy.
     */
    private ArenaMapOutputWriter arenaWriter(int shuffleId, long mapId, int numPartitions, long bytes) {
        MapOutputPublisher p = publisherOf.publisher(shuffleId, mapId);
        if (p == null || !p.writesInPlace()) {
            return null;
        }
        long expected = bytes > 0 ? bytes : p.expectedBytes(shuffleId) * 9 / 8;
        if (p.arena().dataRoom() < Math.max(expected, ArenaMapOutputWriter.MIN_ROOM)) {
            p.metrics().outputsSentToFile.inc();
            return null;
        }
        long index = p.arena().allocate(8L * (numPartitions + 1));
        return index < 0 ? null : new ArenaMapOutputWriter(p, shuffleId, mapId, numPartitions, index, () -> {
            try {
                return spark.createMapOutputWriter(shuffleId, mapId, numPartitions);
            } catch (IOException e) {
                throw new UncheckedIOException("shuffle " + shuffleId + " map " + mapId + ": Spark's file writer for "
                        + "an output that leaves the send arena could not be made", e);
            }
        }, this::writeChecksums, expected);
    }

    /**
     * A serialized shuffle's single spill: read into the arena when it has room for all of it (one pass), else moved
     * to Spark's file by Spark's own writer (no pass).
     */
    @Override
    public Optional<SingleSpillShuffleMapOutputWriter> createSingleFileMapOutputWriter(int shuffleId, long mapId)
            throws IOException {
        Optional<SingleSpillShuffleMapOutputWriter> sparks = spark.createSingleFileMapOutputWriter(shuffleId, mapId);
        if (sparks.isEmpty()) {
            return sparks;
        }
        return Optional.of((spill, lengths, checksums) -> {
            long total = 0;
            for (long len : lengths) {
                total += len;
            }
            ArenaMapOutputWriter w = arenaWriter(shuffleId, mapId, lengths.length, total);
            if (w == null) {
                sparks.get().transferMapSpillFile(spill, lengths, checksums);
                return;
            }
            try (FileChannel in = FileChannel.open(spill.toPath(), StandardOpenOption.READ)) {
                long position = 0;
                for (int i = 0; i < lengths.length; i++) {
                    if (lengths[i] > 0) {
                        w.readPartition(i, in, position, lengths[i]);
                    }
                    position += lengths[i];
                }
                w.commitAllPartitions(checksums);
            } catch (IOException | RuntimeException e) {
                w.abort(e);
                throw e;
            }
        });
    }

    /** Spark's checksum file of an output (what its diagnosis of a corrupt block reads): tmp, then renamed. */
    private void writeChecksums(int shuffleId, long mapId, long[] checksums) throws IOException {
        IndexShuffleBlockResolver resolver =
                (IndexShuffleBlockResolver) SparkEnv.get().shuffleManager().shuffleBlockResolver();
        File file = resolver.getChecksumFile(shuffleId, mapId, checksumAlgorithm, scala.Option.empty());
        File tmp = resolver.createTempFile(file);
        try (DataOutputStream out = new DataOutputStream(new BufferedOutputStream(new FileOutputStream(tmp)))) {
            for (long c : checksums) {
                out.writeLong(c);
            }
        }
        Files.move(tmp.toPath(), file.toPath(), StandardCopyOption.REPLACE_EXISTING);
    }
}
