/**
 * The bridge's root: the loader ({@link org.hcomm.bridge.HcommNative}, provider {@code soft} or {@code cann}), soft
 * HComm's process-wide functions ({@link org.hcomm.bridge.SoftHcomm}), the bridge's log, and the base of every
 * checked owner of a native handle ({@link org.hcomm.bridge.NativeOwner}: close releases exactly once, use after
 * close is an {@link java.lang.IllegalStateException} instead of a crash, a forgotten close is logged). Also here:
 * {@link org.hcomm.bridge.Engine} and {@link org.hcomm.bridge.CommThread}, which channels and reads share.
 *
 * <p>The checked facade over the raw mapping ({@code raw}) is split by role: {@code error} (status codes and the
 * exception that carries them), {@code endpoint} (an endpoint and what hangs off it: memory, channels), {@code read}
 * (issuing and completing one-sided reads; batch mode), {@code communicator} (the HCCL communicator path of Atlas
 * A2/A3). {@code transport} sits above them all and is what the plugin uses. No JNA type appears in a public
 * signature of the facade.
 */
package org.hcomm.bridge;
