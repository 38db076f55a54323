/**
 * HComm's status codes ({@link org.hcomm.bridge.error.HcommStatus}) and the unchecked exception that carries a
 * failed call's name, code and ids ({@link org.hcomm.bridge.error.HcommException}); the failures of one channel
 * live with their subject ({@code endpoint.ChannelSetupException}, {@code read.ChannelReadException}). Depends on
 * nothing else of the bridge.
 */
package org.hcomm.bridge.error;
