/**
 * The driver component: the plugin's {@code DriverPlugin}, the registry of executors and published outputs, and the
 * provisioning of every stage attempt that reads a shuffle.
 */
package org.apache.spark.shuffle.hcomm.internal.driver;
