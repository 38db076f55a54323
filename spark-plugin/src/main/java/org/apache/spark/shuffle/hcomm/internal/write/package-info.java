/**
 * The map side: Spark's writer wrapped so that each committed output is published into registered memory (the send
 * arena, or Spark's files mapped), and outputs that moved to this executor published on the driver's request.
 */
package org.apache.spark.shuffle.hcomm.internal.write;
