/**
 * What the driver and the executors say to each other ({@code Messages}, packed by {@code Wire}), the executor's
 * side of it ({@code DriverClient}), and the stage identity both sides use.
 */
package org.apache.spark.shuffle.hcomm.internal.rpc;
