package org.apache.spark.shuffle.hcomm.internal.executor

/** Looks inside this JVM's executor runtime from a task (tests only). */
object ExecutorProbe {
  /**
   * Receive-buffer chunks not free to lend: borrowed by reduce tasks and not given back, or retired after a timeout
   * and not reclaimed; -1 without a runtime or transport.
   */
  def chunksNotFree(): Int =
    Option(ExecutorRuntime.current()).map(_.chunksNotFree()).getOrElse(-1)

  /** Whether this JVM's executor component started a runtime (it does not in local mode). */
  def runtimeStarted(): Boolean = ExecutorRuntime.current() != null

  /** This executor's channels created and not destroyed; -1 without a runtime. */
  def channelsLive(): Long = Option(ExecutorRuntime.current()).map(_.metrics().snapshot().channelsLive()).getOrElse(-1L)

  /** This executor's soft NIC: (host, port); port 0 without a transport. */
  def listenAddress(): (String, Int) =
    Option(ExecutorRuntime.current()).map(r => (r.host(), r.listenPort())).getOrElse(("", 0))

  /**
   * Runs `body` holding the monitor every change of this executor's one-sided parts takes: meanwhile the executor
   * cannot take up (or even keep as built) the parts of a communicator it joined, as a member slow to build them.
   */
  def holdingPartsChanges[T](body: => T): T = ExecutorRuntime.current().generations().synchronized(body)

  /** Whether this executor reads with one-sided parts (its communicator, on that path, is ready). */
  def readsOneSided(): Boolean = Option(ExecutorRuntime.current()).exists(_.generations().current() != null)
}
