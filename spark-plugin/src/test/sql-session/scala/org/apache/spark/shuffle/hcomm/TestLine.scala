package org.apache.spark.shuffle.hcomm

/**
 * What the Spark suites use that differs between Spark lines, here for Spark 3.5 (the twin for 4.x has the same
 * members): SparkSession is still the one class with the engine's plans (4.0 moved it to sql.classic).
 */
object TestLine {
  type SparkSession = org.apache.spark.sql.SparkSession
  val SparkSession: org.apache.spark.sql.SparkSession.type = org.apache.spark.sql.SparkSession
}
