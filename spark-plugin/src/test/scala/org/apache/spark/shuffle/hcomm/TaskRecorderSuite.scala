package org.apache.spark.shuffle.hcomm

import org.apache.spark.{ExecutorLostFailure, Success, TaskEndReason}
import org.apache.spark.executor.TaskMetrics
import org.apache.spark.scheduler.{SparkListenerTaskEnd, SparkListenerTaskStart, TaskInfo, TaskLocality}
import org.scalatest.funsuite.AnyFunSuite

/**
 * The listener the Spark suites assert with (concurrency, failures, remote bytes), fed the events Spark's listener
 * bus would deliver: a recorder that over-counted concurrency would let ConcurrentReadersSuite pass without
 * concurrent readers.
 */
class TaskRecorderSuite extends AnyFunSuite {
  private var nextTaskId = 0L

  private def info(executor: String): TaskInfo = {
    nextTaskId += 1
    new TaskInfo(nextTaskId, 0, 0, 0, 0L, executor, "localhost", TaskLocality.ANY, false)
  }

  private def start(r: TaskRecorder, stage: Int, i: TaskInfo): Unit = r.onTaskStart(SparkListenerTaskStart(stage, 0, i))

  private def end(r: TaskRecorder, stage: Int, i: TaskInfo, reason: TaskEndReason = Success,
      remoteBytes: Long = 0): Unit = {
    val metrics = if (reason == Success) TaskMetrics.empty else null
    if (metrics != null) metrics.shuffleReadMetrics.incRemoteBytesRead(remoteBytes)
    r.onTaskEnd(SparkListenerTaskEnd(stage, 0, "ResultTask", reason, i, null, metrics))
  }

  test("most tasks at once counts overlapping tasks per stage and executor, not tasks one after another") {
    val r = new TaskRecorder
    val a1 = info("1"); val a2 = info("1"); val a3 = info("1")
    start(r, 5, a1); start(r, 5, a2); end(r, 5, a1); start(r, 5, a3); end(r, 5, a2); end(r, 5, a3)
    val b1 = info("2"); val b2 = info("2")
    start(r, 5, b1); end(r, 5, b1); start(r, 5, b2); end(r, 5, b2)
    val other = info("2"); val other2 = info("2")
    start(r, 6, other); start(r, 6, other2); end(r, 6, other); end(r, 6, other2)
    assert(r.mostAtOnce(5) == Map("1" -> 2, "2" -> 1))
    assert(r.mostAtOnce(6) == Map("2" -> 2))
    assert(r.mostAtOnce(7).isEmpty)
  }

  test("tasks running now: started and not ended, per stage and executor, a failed end ending them too") {
    val r = new TaskRecorder
    val a1 = info("1"); val a2 = info("1"); val b1 = info("2")
    start(r, 4, a1); start(r, 4, a2); start(r, 7, b1)
    assert(r.runningNow == Map((4, "1") -> 2, (7, "2") -> 1))
    end(r, 4, a1)
    end(r, 7, b1, ExecutorLostFailure("2", exitCausedByApp = true, Some("killed")))
    assert(r.runningNow == Map((4, "1") -> 1))
    end(r, 4, a2)
    assert(r.runningNow.isEmpty)
  }

  test("failed tasks are recorded with stage attempt, executor and reason; remote bytes of successful ones summed") {
    val r = new TaskRecorder
    val ok1 = info("1"); val ok2 = info("2"); val lost = info("2")
    Seq(ok1, ok2, lost).foreach(start(r, 3, _))
    end(r, 3, ok1, remoteBytes = 1000)
    end(r, 3, ok2, remoteBytes = 234)
    val reason = ExecutorLostFailure("2", exitCausedByApp = true, Some("killed"))
    end(r, 3, lost, reason)
    assert(r.remoteBytes.get == 1234)
    val failures = r.failures.toArray.toSeq
    assert(failures == Seq(TaskFailure(3, 0, "2", reason, lost.taskId)))
    assert(failures.head.toString.startsWith("stage 3.0 on executor 2: "))
  }
}
