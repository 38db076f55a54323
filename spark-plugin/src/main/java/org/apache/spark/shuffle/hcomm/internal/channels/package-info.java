/**
 * An executor's HComm channels, grouped by stage attempt: created when the driver provisions a stage, polled to
 * READY, leased by the stage's reduce tasks, destroyed in one call when the stage attempt ends.
 */
package org.apache.spark.shuffle.hcomm.internal.channels;
