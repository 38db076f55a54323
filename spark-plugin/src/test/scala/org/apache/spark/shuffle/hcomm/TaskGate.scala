package org.apache.spark.shuffle.hcomm

import java.nio.file.{Files, Path, Paths}
import java.util.concurrent.TimeUnit

import scala.concurrent.Future

import org.apache.spark.{SparkEnv, TaskContext}

/** A task at a [[TaskGate]]: its attempt id, executor and the executor's host. */
final case class GateArrival(attempt: Long, executorId: String, host: String)

/**
 * A point in a stage's tasks where they wait until the test opens it, so that a fault test strikes at a known point
 * (e.g. every reduce task's reader open and nothing read yet) instead of after a sleep, and can tell afterwards which
 * tasks passed when. Tasks call [[pass]] (the closure carries only the directory's name); the test waits for
 * arrivals, injects its fault, opens the gate and checks [[passed]].
 *
 * Files in a directory every executor sees (they are other processes, some in other network namespaces): an
 * arriving task creates `arrived_<attempt>_<executor>_<host>`, waits for `open`, then creates `passed_<attempt>`.
 * Each name is created whole, so a reader never sees half of one. A gate once open stays open: tasks of later
 * attempts pass at once.
 */
final class TaskGate private (dir: String) extends Serializable {
  private def path(name: String): Path = Paths.get(dir, name)

  /**
   * In a task: says it arrived, waits until the gate is open, says it passed. Fails the task when the gate stays
   * shut for `seconds` (a test that failed before opening it leaves no task waiting forever).
   */
  def pass(seconds: Int = 300): Unit = {
    val ctx = TaskContext.get()
    val env = SparkEnv.get
    val attempt = ctx.taskAttemptId()
    Files.createFile(path(s"arrived_${attempt}_${env.executorId}_${env.blockManager.blockManagerId.host}"))
    val deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(seconds)
    while (!isOpen) {
      if (System.nanoTime() > deadline) throw new IllegalStateException(s"gate $dir shut for $seconds s")
      Thread.sleep(5)
    }
    Files.createFile(path(s"passed_$attempt"))
  }

  def isOpen: Boolean = Files.exists(path("open"))

  def open(): Unit = if (!isOpen) Files.createFile(path("open"))

  private def names(prefix: String): Seq[String] =
    Option(Paths.get(dir).toFile.list()).map(_.toSeq).getOrElse(Nil).filter(_.startsWith(prefix))

  /** The tasks that arrived so far, passed or not. */
  def arrived: Seq[GateArrival] = names("arrived_").map { n =>
    val Array(_, attempt, executor, host) = n.split("_", 4)
    GateArrival(attempt.toLong, executor, host)
  }

  /** Attempt ids of the tasks that passed so far. */
  def passed: Set[Long] = names("passed_").map(_.stripPrefix("passed_").toLong).toSet

  /**
   * Waits (at most `seconds`) until `cond` holds of the arrivals; returns them. Fails at once, with the job's
   * outcome, when `job` (the job whose tasks should arrive, if given) ended first.
   */
  def awaitArrivals(what: String, seconds: Int = 120, job: Future[_] = null)(
      cond: Seq[GateArrival] => Boolean): Seq[GateArrival] = {
    val deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(seconds)
    var now = arrived
    while (!cond(now)) {
      Option(job).flatMap(_.value).foreach(r => throw new AssertionError(s"the job ended ($r) before $what", r.failed
        .getOrElse(null)))
      assert(System.nanoTime() < deadline, s"timed out waiting for $what at the gate; arrived: $now")
      Thread.sleep(20)
      now = arrived
    }
    now
  }

  /** Waits until tasks of `job` are at the gate on `executors` distinct executors; returns the arrivals. */
  def awaitOnExecutors(executors: Int, job: Future[_], seconds: Int = 120): Seq[GateArrival] =
    awaitArrivals(s"a task on each of $executors executors", seconds, job)(
      _.map(_.executorId).distinct.size >= executors)

  /** Removes the gate's files (the test's last step). */
  def delete(): Unit = {
    Option(Paths.get(dir).toFile.listFiles()).foreach(_.foreach(_.delete()))
    Files.deleteIfExists(Paths.get(dir))
  }
}

object TaskGate {
  /** A new, shut gate under the module's target directory (an absolute path: executors run elsewhere). */
  def apply(name: String): TaskGate =
    new TaskGate(Files.createTempDirectory(Paths.get("target").toAbsolutePath, s"gate-$name-").toString)

  /** `body` with new gates, one per name, whose files are removed afterwards. */
  def using[T](names: String*)(body: Seq[TaskGate] => T): T = {
    val gates = names.map(TaskGate(_))
    try body(gates) finally gates.foreach(_.delete())
  }
}
