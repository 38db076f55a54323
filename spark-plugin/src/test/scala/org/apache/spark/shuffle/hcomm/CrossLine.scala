package org.apache.spark.shuffle.hcomm

import org.scalatest.Tag

/**
 * Tags the Spark-level tests that `mvn test`'s cross-line pass (spark-plugin/cross-line.sh) runs on every Spark line
 * besides the default one: the RDD shuffles with fallback `never` and one-sided bytes equal to Spark's remote bytes,
 * SQL with AQE, an executor killed mid-reduce, bad configuration, and nothing live after each.
 */
object CrossLine extends Tag("org.apache.spark.shuffle.hcomm.CrossLine")
