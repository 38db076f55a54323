/**
 * The HComm shuffle for Apache Spark. Two public classes are the whole user-facing API:
 * {@link org.apache.spark.shuffle.hcomm.HcommShufflePlugin} (named in {@code spark.plugins}) and
 * {@link org.apache.spark.shuffle.hcomm.HcommShuffleManager} (named in {@code spark.shuffle.manager}). Everything in
 * {@code internal} may change without notice.
 *
 * <p>The code lives under {@code org.apache.spark} only because the Spark interfaces it implements and the Spark
 * classes it uses ({@code ShuffleManager}, {@code MapOutputTracker}, {@code FetchFailedException}, ...) are
 * {@code private[spark]}; nothing here is part of Spark.
 */
package org.apache.spark.shuffle.hcomm;
