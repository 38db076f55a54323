/**
 * The endpoint API (Atlas 350 / 950, and soft HComm): an {@link org.hcomm.bridge.endpoint.Endpoint} and what hangs
 * off it, each its own {@link java.lang.AutoCloseable} owner: {@link org.hcomm.bridge.endpoint.RegisteredMemory},
 * {@link org.hcomm.bridge.endpoint.ImportedMemory} and {@link org.hcomm.bridge.endpoint.ChannelSet}s, created and
 * destroyed in batches. The endpoint's handle stays inside this package; reads on its channels are
 * {@code read.ReadStrategy}'s.
 */
package org.hcomm.bridge.endpoint;
