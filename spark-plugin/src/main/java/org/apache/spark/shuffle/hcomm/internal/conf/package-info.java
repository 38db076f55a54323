/**
 * What an operator sets and sees configured: the {@code spark.shuffle.hcomm.*} keys ({@code HcommConf}, one typed
 * {@code ConfigEntry} each), read once per process into {@code HcommSettings}, which the plugin's classes are handed;
 * the channel secret, the one place that decides between falling back to Spark's fetch and failing
 * ({@code Fallback}, one per process), and the log categories ({@code LogCategory}). Depends on no other package of
 * the plugin.
 */
package org.apache.spark.shuffle.hcomm.internal.conf;
