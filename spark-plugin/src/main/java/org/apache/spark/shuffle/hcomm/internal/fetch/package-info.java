/**
 * The one-sided reads of a reduce task: the fetcher (issue, land, iterate), the pure plan of its waves, the streams
 * that deserialise straight from the receive buffer, the receive buffer and its lending, and how a failed read is
 * blamed.
 */
package org.apache.spark.shuffle.hcomm.internal.fetch;
