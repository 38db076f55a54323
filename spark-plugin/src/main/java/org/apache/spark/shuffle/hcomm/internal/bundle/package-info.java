/**
 * The bundle's own checks: whether this jar fits the Spark it runs in, and the bundle's {@code Main-Class} (the
 * doctor).
 */
package org.apache.spark.shuffle.hcomm.internal.bundle;
