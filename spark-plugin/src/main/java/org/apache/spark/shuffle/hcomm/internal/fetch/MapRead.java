package org.apache.spark.shuffle.hcomm.internal.fetch;

import java.util.List;

import org.apache.spark.storage.BlockId;
import org.apache.spark.storage.BlockManagerId;
import org.hcomm.bridge.transport.PeerChannels;
import scala.Tuple3;

/**
 * One map output a reduce task reads one-sidedly: the contiguous reduce partitions
 * {@code [firstReduce, endReduce)} of it, found through the owner's published index; {@code blocks} are the
 * tracker's (block, size, map index) entries it covers, for falling back to Spark's fetch; {@code crossHost} says
 * the owner's block manager is on another host than the reader's (its bytes go through the NIC); {@code offsets}:
 * the partitions' offsets from {@code dataAddress} (entries {@code firstReduce..endReduce} of the index) when they
 * travelled with the output's publication, else null (the reader reads them from {@code indexAddress} first).
 */
public record MapRead(BlockManagerId owner, boolean crossHost, long mapId, int mapIndex, int firstReduce, int endReduce,
        long indexAddress, long dataAddress, PeerChannels.PeerChannel channel,
        List<Tuple3<BlockId, Object, Object>> blocks, long[] offsets) {
}
