/**
 * Benchmarks: JMH benchmarks of the HComm transport (read strategies, batch sizes, shared-memory and TCP paths)
 * and the Spark shuffle A/B suite that runs the built-in shuffle and the HComm shuffle on the same workloads.
 */
package org.hcomm.shuffle.benchmarks;
