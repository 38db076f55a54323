/**
 * One-sided reads: {@link org.hcomm.bridge.read.ReadStrategy} issues and completes reads on an endpoint's channels
 * ({@code HcommReadOnThread} + drain or stream sync, or {@code HcommReadNbi} + fence), and
 * {@link org.hcomm.bridge.read.BatchMode} owns HComm's batch mode for the OS thread that opened it, for these reads
 * and for a communicator's stream reads ({@code communicator.CommStream}).
 */
package org.hcomm.bridge.read;
