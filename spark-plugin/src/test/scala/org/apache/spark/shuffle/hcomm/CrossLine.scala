package org.apache.spark.shuffle.hcomm

import org.scalatest.Tag

/**
 * Tags the Spark-level tests that `mvn test`'s cross-line pass (spark-plugin/cross-line.sh) runs on every Spark line
 * besides the default one: the RDD shuffles with fallback `never` and one-sided bytes equal to Spark's remote bytes,
 * SQL with AQE, Spark's writers into the arena, a fetch failure Spark recomputes, local mode, bad configuration and an
 * unloadable library, and nothing live after each: what goes through the lines' differences (the compat layer, the
 * startup order, the shuffle I/O API). Tests of Spark's own recovery (an executor killed, owners stopped, hosts lost)
 * run on the default line only: the plugin's part in them (a fetch failure) is the same code on every line and is
 * tagged here through the fetch failure test.
 */
object CrossLine extends Tag("org.apache.spark.shuffle.hcomm.CrossLine")
