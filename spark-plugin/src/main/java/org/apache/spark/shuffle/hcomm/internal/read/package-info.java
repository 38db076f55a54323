/**
 * A reduce task's read: the planner that decides, before the task reads, which blocks are read one-sidedly and
 * which by Spark's fetch, the stage leases and the directory it plans with, and the reader itself, in Spark's
 * shape.
 */
package org.apache.spark.shuffle.hcomm.internal.read;
