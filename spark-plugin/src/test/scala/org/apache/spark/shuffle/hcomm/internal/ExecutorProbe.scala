package org.apache.spark.shuffle.hcomm.internal

/** Looks inside this JVM's executor runtime from a task (tests only). */
object ExecutorProbe {
  /** Receive-buffer chunks borrowed by reduce tasks and not given back; -1 without a runtime or transport. */
  def chunksOnLoan(): Int =
    Option(Runtimes.executor()).flatMap(r => Option(r.receiveBuffer())).map(_.onLoan()).getOrElse(-1)
}
