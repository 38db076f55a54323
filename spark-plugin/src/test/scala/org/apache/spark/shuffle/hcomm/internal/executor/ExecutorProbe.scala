package org.apache.spark.shuffle.hcomm.internal.executor

/** Looks inside this JVM's executor runtime from a task (tests only). */
object ExecutorProbe {
  /**
   * Receive-buffer chunks not free to lend: borrowed by reduce tasks and not given back, or retired after a timeout
   * and not reclaimed; -1 without a runtime or transport.
   */
  def chunksNotFree(): Int =
    Option(ExecutorRuntime.current()).map(_.chunksNotFree()).getOrElse(-1)

  /** The device address published offsets of this executor count from (communicator path); 0 otherwise. */
  def hcclBufferAddress(): Long = Option(ExecutorRuntime.current()).map(_.hcclBufferAddress()).getOrElse(0L)

  /** Whether this JVM's executor component started a runtime (it does not in local mode). */
  def runtimeStarted(): Boolean = ExecutorRuntime.current() != null

  /** This executor's channels created and not destroyed; -1 without a runtime. */
  def channelsLive(): Long = Option(ExecutorRuntime.current()).map(_.metrics().snapshot().channelsLive()).getOrElse(-1L)

  /** This executor's soft NIC: (host, port); port 0 without a transport. */
  def listenAddress(): (String, Int) =
    Option(ExecutorRuntime.current()).map(r => (r.host(), r.listenPort())).getOrElse(("", 0))
}
