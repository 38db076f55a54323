/**
 * Checked facade over the raw HComm mapping: validates arguments, maps status codes to {@link
 * org.hcomm.bridge.HcommException} through {@link org.hcomm.bridge.HcommStatus}, and gives every native handle
 * exactly one {@link java.lang.AutoCloseable} owner ({@link org.hcomm.bridge.Endpoint},
 * {@link org.hcomm.bridge.RegisteredMemory}, {@link org.hcomm.bridge.ImportedMemory},
 * {@link org.hcomm.bridge.ChannelSet}, {@link org.hcomm.bridge.CommThread}) whose {@code close()} is idempotent
 * and whose use after close throws {@link java.lang.IllegalStateException} instead of crashing the JVM.
 *
 * <p>{@link org.hcomm.bridge.HcommNative} loads the library (provider {@code soft} or {@code cann});
 * {@link org.hcomm.bridge.ReadStrategy} hides which calls issue and complete reads. No JNA type appears in a public
 * signature here.
 */
package org.hcomm.bridge;
