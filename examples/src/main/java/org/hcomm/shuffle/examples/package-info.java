/**
 * Example Spark jobs (an RDD feature ETL pipeline; a DataFrame and MLlib recommender and click-model pipeline) that
 * run unchanged with the HComm shuffle enabled through {@code spark.plugins} and {@code spark.shuffle.manager}.
 */
package org.hcomm.shuffle.examples;
