/**
 * The {@code HcommShuffle} metrics source: one {@code MetricEntry} per metric (the README's table is generated from
 * them), counted on executors and totalled on the driver.
 */
package org.apache.spark.shuffle.hcomm.internal.metrics;
