package org.apache.spark.shuffle.hcomm.internal;

import org.apache.spark.storage.BlockManagerId;
import org.hcomm.bridge.transport.PeerChannels;

/**
 * One map output a reduce task reads one-sidedly: the contiguous reduce partitions
 * {@code [firstReduce, endReduce)} of it, found through the owner's published index.
 */
record MapRead(BlockManagerId owner, long mapId, int mapIndex, int firstReduce, int endReduce, long indexAddress,
        long dataAddress, PeerChannels.PeerChannel channel) {
}
