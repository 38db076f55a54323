/**
 * The executor component: the plugin's {@code ExecutorPlugin}, the runtime that wires one executor's parts together
 * (transport, buffers, channels, publisher, read planner) and the RPC endpoint the driver tells things to.
 */
package org.apache.spark.shuffle.hcomm.internal.executor;
