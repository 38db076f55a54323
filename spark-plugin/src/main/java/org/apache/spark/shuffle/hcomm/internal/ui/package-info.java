/**
 * The shuffle in Spark's UI: the "HComm" tab of the live UI and of the history server, its model
 * ({@code ShuffleSummary}), the events that carry the model into the event log, and the history server's plugin
 * that rebuilds the tab from them. The page's servlet-facing class differs per Spark line and is in {@code compat}.
 */
package org.apache.spark.shuffle.hcomm.internal.ui;
