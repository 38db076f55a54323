/**
 * Example Spark jobs (ETL pipeline, TeraSort-like sort, SQL) that run unchanged with the HComm shuffle enabled
 * through {@code spark.plugins} and {@code spark.shuffle.manager}.
 */
package org.hcomm.shuffle.examples;
