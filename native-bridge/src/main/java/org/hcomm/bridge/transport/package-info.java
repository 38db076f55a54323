/**
 * The transport the Spark plugin uses: the third layer of the bridge, above the raw mapping ({@code raw}) and the
 * checked facade ({@code org.hcomm.bridge}). It speaks in the plugin's terms (peers, registered regions, batches of
 * one-sided reads) and hides which HComm calls do the work, so the plugin can also run against another
 * implementation of {@link org.hcomm.bridge.transport.Transport} in tests.
 *
 * <p>Ownership: a {@link org.hcomm.bridge.transport.Transport} owns its endpoint and, until each is closed, every
 * {@link org.hcomm.bridge.transport.Region}, {@link org.hcomm.bridge.transport.PeerChannels} and
 * {@link org.hcomm.bridge.transport.ReadBatch} it made; closing the transport closes what is still open in one
 * order, written once ({@code TransportBase}): batches, channels, regions, then the endpoint or communicator.
 */
package org.hcomm.bridge.transport;
