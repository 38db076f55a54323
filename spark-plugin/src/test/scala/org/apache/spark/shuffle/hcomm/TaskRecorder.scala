package org.apache.spark.shuffle.hcomm

import java.util.concurrent.{ConcurrentHashMap, ConcurrentLinkedQueue}
import java.util.concurrent.atomic.{AtomicInteger, AtomicLong}

import scala.jdk.CollectionConverters._

import org.apache.spark.{SparkContext, Success, TaskEndReason}
import org.apache.spark.scheduler.{SparkListener, SparkListenerExecutorAdded, SparkListenerTaskEnd, SparkListenerTaskStart}

/** A failed task as the listener bus reported it; `taskId` is its attempt id (`TaskContext.taskAttemptId`). */
final case class TaskFailure(stageId: Int, stageAttemptId: Int, executorId: String, reason: TaskEndReason,
    taskId: Long) {
  override def toString: String = s"stage $stageId.$stageAttemptId on executor $executorId: $reason"
}

/**
 * What the Spark suites need to know of tasks: Spark's remote bytes read, every failed task, per stage and
 * executor the most tasks that ran at once, and the executors Spark announced as added (one added during a job may
 * be gone again by its end). A subclass overriding `onTaskStart` or `onTaskEnd` calls `super`.
 */
class TaskRecorder extends SparkListener {
  val remoteBytes = new AtomicLong()
  val failures = new ConcurrentLinkedQueue[TaskFailure]()
  val executorsAdded = new ConcurrentLinkedQueue[String]()
  private val running = new ConcurrentHashMap[(Int, String), AtomicInteger]()
  private val most = new ConcurrentHashMap[(Int, String), Integer]()
  private val started = new ConcurrentHashMap[Int, AtomicInteger]()

  override def onTaskStart(e: SparkListenerTaskStart): Unit = {
    val key = (e.stageId, e.taskInfo.executorId)
    val now = running.computeIfAbsent(key, _ => new AtomicInteger()).incrementAndGet()
    most.merge(key, now, (a, b) => math.max(a, b))
    started.computeIfAbsent(e.stageId, _ => new AtomicInteger()).incrementAndGet()
  }

  override def onExecutorAdded(e: SparkListenerExecutorAdded): Unit = executorsAdded.add(e.executorId)

  /** Task attempts started in `stage`, all its attempts together. */
  def tasksOf(stage: Int): Int = Option(started.get(stage)).map(_.get).getOrElse(0)

  override def onTaskEnd(e: SparkListenerTaskEnd): Unit = {
    Option(running.get((e.stageId, e.taskInfo.executorId))).foreach(_.decrementAndGet())
    if (e.taskMetrics != null) remoteBytes.addAndGet(e.taskMetrics.shuffleReadMetrics.remoteBytesRead)
    if (e.reason != Success) failures.add(TaskFailure(e.stageId, e.stageAttemptId, e.taskInfo.executorId, e.reason,
      e.taskInfo.taskId))
  }

  private def stagesOf(c: SparkContext, jobs: Seq[Int]): Set[Int] =
    jobs.flatMap(j => c.statusTracker.getJobInfo(j).map(_.stageIds().toSeq).getOrElse(Nil)).toSet

  /** The failures of tasks in the stages of `jobs` (not of zombie tasks that a stage left running). */
  def failuresIn(c: SparkContext, jobs: Seq[Int]): Seq[TaskFailure] = {
    val stages = stagesOf(c, jobs)
    failures.asScala.filter(f => stages(f.stageId)).toSeq
  }

  /** The most tasks that ran at once on each executor in the last stage of `job`, the one that reads its shuffle. */
  def mostAtOnceInResultStage(c: SparkContext, job: Int): Map[String, Int] = mostAtOnce(stagesOf(c, Seq(job)).max)

  /** Tasks started and not yet ended, per stage and executor (zombie tasks of a finished job included). */
  def runningNow: Map[(Int, String), Int] =
    running.asScala.collect { case (key, n) if n.get > 0 => key -> n.get }.toMap

  /** The most tasks of `stage` that ran at once, per executor. */
  def mostAtOnce(stage: Int): Map[String, Int] =
    most.asScala.collect { case ((s, exec), n) if s == stage => exec -> n.intValue }.toMap
}
