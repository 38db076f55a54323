/**
 * What an operator sets and sees configured: the {@code spark.shuffle.hcomm.*} keys ({@code HcommConf}, one typed
 * {@code ConfigEntry} each), the channel secret, the one place that decides between falling back to Spark's fetch
 * and failing ({@code Fallback}), and the log categories ({@code LogCategory}). Depends on no other package of the
 * plugin.
 */
package org.apache.spark.shuffle.hcomm.internal.conf;
