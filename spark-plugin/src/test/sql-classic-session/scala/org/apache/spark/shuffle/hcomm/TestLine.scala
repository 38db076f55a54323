package org.apache.spark.shuffle.hcomm

/**
 * What the Spark suites use that differs between Spark lines, here for Spark 4.0 to 4.2 (the twin for 3.5 has the
 * same members): the SparkSession whose Datasets expose the engine's plans is the classic one.
 */
object TestLine {
  type SparkSession = org.apache.spark.sql.classic.SparkSession
  val SparkSession: org.apache.spark.sql.classic.SparkSession.type = org.apache.spark.sql.classic.SparkSession
}
