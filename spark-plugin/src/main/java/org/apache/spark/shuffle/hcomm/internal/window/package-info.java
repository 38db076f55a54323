/**
 * The communicator path's windows (docs/ARCHITECTURE.md, "The HCCL buffer as a window"): every executor runs a
 * {@link org.apache.spark.shuffle.hcomm.internal.window.WindowServer} on Spark's own network library, through which a
 * reader asks an owner to stream map output ranges ({@link org.apache.spark.shuffle.hcomm.internal.window.WindowProtocol});
 * the bytes then pass one-sidedly through the two ends' HCCL buffers, slice by slice, signalled by channel notifies
 * only ({@link org.apache.spark.shuffle.hcomm.internal.window.WindowBlockFetcher} reads them as a reduce task's
 * blocks, as {@link org.apache.spark.shuffle.hcomm.internal.window.WindowReadPlanner} planned them).
 */
package org.apache.spark.shuffle.hcomm.internal.window;
