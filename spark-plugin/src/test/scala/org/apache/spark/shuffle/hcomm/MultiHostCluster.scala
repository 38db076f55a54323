package org.apache.spark.shuffle.hcomm

import java.io.File
import java.nio.file.{Files, Path, Paths}
import java.util.concurrent.TimeUnit

import scala.jdk.CollectionConverters._
import scala.sys.process.{Process => Command, ProcessLogger}

/**
 * A Spark standalone cluster whose Workers are on separate hosts: one network namespace per host
 * (`examples/netns-hosts.sh`; the suites use set "t", 198.18.116.0/24, the benchmarks set "b", 198.18.98.0/24), one
 * Worker process per host bound to its address (its
 * executors inherit it), and the Master, a process too, in the root namespace on the hosts' bridge, where the
 * driver (the test JVM) joins it. The namespaces own every process started in them; `close` kills them, removes
 * the namespaces and links, and stops the Master. Needs root: see [[MultiHostCluster.unavailable]].
 */
final class MultiHostCluster(set: String, val hosts: Int, val executorsPerHost: Int, logDir: Path)
    extends AutoCloseable {
  import MultiHostCluster._

  private var master: java.lang.Process = _
  private var workers = Map.empty[Int, java.lang.Process]
  @volatile private var closed = false
  private val lines = netns(set, "up", hosts.toString).linesIterator.toSeq
  /** The root namespace's address on the bridge (the Master's and the driver's). */
  val rootAddress: String = lines.collectFirst { case l if l.startsWith("root ") => l.split(" ")(1) }.get
  /** Host i's address (1-based). */
  val hostAddress: Map[Int, String] = lines.filter(_.startsWith("host ")).map { l =>
    val f = l.split(" ")
    f(1).toInt -> f(3)
  }.toMap
  val masterUrl: String = try start() catch {
    case e: Throwable =>
      close()
      throw e
  }

  private def start(): String = {
    Files.createDirectories(logDir)
    val masterLog = logDir.resolve("master.log").toFile
    master = jvm(Seq("org.apache.spark.deploy.master.Master", "--host", rootAddress, "--port", "0",
      "--webui-port", "0"), Map("SPARK_LOCAL_IP" -> rootAddress), masterLog)
    val url = awaitLog(masterLog, "Starting Spark master at (spark://\\S+)".r, 60)
    workers = hostAddress.map { case (i, addr) =>
      i -> jvm(Seq(netnsScript.toString, set, "exec", i.toString, "env", s"SPARK_LOCAL_IP=$addr"),
        Seq("org.apache.spark.deploy.worker.Worker", "--host", addr, "--webui-port", "0",
          "--cores", executorsPerHost.toString, "--memory", s"${executorsPerHost * 1280}m",
          "--work-dir", logDir.resolve(s"worker-$i").toString, url),
        logDir.resolve(s"worker-$i.log").toFile)
    }
    hostAddress.keys.foreach { i =>
      awaitLog(logDir.resolve(s"worker-$i.log").toFile, "(Successfully registered with master)".r, 60)
    }
    url
  }

  /** Takes host i's link down or up (both ends of its veth pair). */
  def link(i: Int, up: Boolean): Unit = netns(set, "link", i.toString, if (up) "up" else "down")

  /** Shapes host i's link to `rate` (tc tbf, both directions), or removes the shaping with "none". */
  def rate(i: Int, rate: String): Unit = netns(set, "link", i.toString, "rate", rate)

  /**
   * Delays every frame on host i's link by `delay` (e.g. "500us", "0.5ms") in each direction, or removes the delay
   * with "none": a user-space forwarder, which `close` stops. One way, per link: between two hosts whose links both
   * have it, the round trip grows by 4 x delay (root to host i by 2 x delay). Composes with rate and link.
   */
  def delay(i: Int, delay: String): Unit = netns(set, "link", i.toString, "delay", delay)

  /** Host i dies: every process in it is killed at once, its namespace and its link removed. */
  def killHost(i: Int): Unit = netns(set, "remove", i.toString)

  /** Starts a JVM with the test class path in host i's namespace; the namespace owns it (close kills it). */
  def startJvm(i: Int, main: Seq[String], log: File): java.lang.Process =
    jvm(Seq(netnsScript.toString, set, "exec", i.toString), main, log)

  /** Starts `command` in host i's namespace, its output in `log`; the namespace owns it (close kills it). */
  def start(i: Int, command: Seq[String], log: File): java.lang.Process =
    new java.lang.ProcessBuilder((Seq(netnsScript.toString, set, "exec", i.toString) ++ command).asJava)
      .redirectErrorStream(true).redirectOutput(log).start()

  /** `tc -s qdisc show` of host i's end of its link (what the shaping did). */
  def qdiscStats(i: Int): String = netns(set, "exec", i.toString, "tc", "-s", "qdisc", "show", "dev", "eth0")

  /** Processes running in host i's namespace. */
  def netnsPids(i: Int): Seq[Long] = netns(set, "pids", i.toString).linesIterator.map(_.trim).filter(_.nonEmpty)
    .map(_.toLong).toSeq

  /** Processes of the cluster (in its namespaces, and the Master) still alive after close; empty when all went. */
  @volatile var survivors: Seq[String] = Seq.empty

  override def close(): Unit = synchronized {
    if (!closed) {
      closed = true
      val inHosts = hostAddress.keys.toSeq.flatMap(i => try netnsPids(i) catch { case _: Exception => Nil })
      try netns(set, "down") finally {
        workers.values.foreach { w =>
          w.destroyForcibly()
          w.waitFor(10, TimeUnit.SECONDS)
        }
        if (master != null) {
          master.destroy()
          if (!master.waitFor(20, TimeUnit.SECONDS)) master.destroyForcibly()
        }
        val all = inHosts ++ Option(master).map(_.pid()).toSeq ++ workers.values.map(_.pid())
        def alive = all.filter(pid => ProcessHandle.of(pid).map[Boolean](_.isAlive).orElse(false))
        val deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10) // a killed process takes a moment to go
        while (alive.nonEmpty && System.nanoTime() < deadline) Thread.sleep(100)
        survivors = alive.map(pid => s"$pid " + ProcessHandle.of(pid).flatMap(_.info().commandLine()).orElse("?"))
      }
    }
  }
}

object MultiHostCluster {
  /** examples/netns-hosts.sh, from a module's directory (where Maven runs the suites and the benchmarks). */
  val netnsScript: Path = Paths.get("..", "examples", "netns-hosts.sh").toAbsolutePath.normalize

  /** Why multi-host tests cannot run here (no root, no iproute2, no namespaces), or None when they can. */
  lazy val unavailable: Option[String] = {
    val out = new StringBuilder
    val rc = Command(Seq(netnsScript.toString, "check")).!(ProcessLogger(_ => (), l => out.append(l).append(' ')))
    if (rc == 0) None else Some(out.toString.trim)
  }

  /** Namespaces and links of a set left by anyone (empty when everything was removed). */
  def leftovers(set: String): Seq[String] = {
    val ns = Command("ip netns list").!!.linesIterator.filter(_.startsWith(s"hcx$set-")).toSeq
    val links = Command("ip -o link show").!!.linesIterator.map(_.split(": ")(1)).filter(_.startsWith(s"hcx$set"))
      .toSeq
    ns ++ links
  }

  private def netns(args: String*): String = {
    val err = new StringBuilder
    val out = new StringBuilder
    val rc = Command(netnsScript.toString +: args).!(ProcessLogger(l => out.append(l).append('\n'),
      l => err.append(l).append('\n')))
    if (rc != 0) throw new IllegalStateException(s"netns-hosts.sh ${args.mkString(" ")} failed ($rc): $err")
    out.toString
  }

  private def javaBin: String = Paths.get(System.getProperty("java.home"), "bin", "java").toString

  /** A JVM with the test class path and the JVM options Spark's launcher adds, in a process of its own. */
  private def jvm(main: Seq[String], env: Map[String, String], log: File): java.lang.Process =
    jvm(Seq.empty, main, log, env)

  private def jvm(prefix: Seq[String], main: Seq[String], log: File,
      env: Map[String, String] = Map.empty): java.lang.Process = {
    val opens = java.lang.management.ManagementFactory.getRuntimeMXBean.getInputArguments.asScala
      .filter(a => a.startsWith("--add-opens") || a.startsWith("--add-exports") || a == "-XX:+IgnoreUnrecognizedVMOptions")
    val testHome = Option(System.getProperty("spark.test.home")).getOrElse("target/spark-test-home")
    // Spark's own console logging (the test class path's log4j2.properties writes into the suites' log file)
    val cmd = prefix ++ Seq(javaBin, "-Xmx384m", "-XX:+UseSerialGC", "-Dspark.testing=1", s"-Dspark.test.home=$testHome",
      "-Dlog4j2.configurationFile=org/apache/spark/log4j2-defaults.properties",
      "-cp", System.getProperty("java.class.path")) ++ opens ++ main
    val pb = new java.lang.ProcessBuilder(cmd.asJava).redirectErrorStream(true).redirectOutput(log)
    pb.environment().put("SPARK_SCALA_VERSION", scala.util.Properties.versionNumberString.split('.').take(2)
      .mkString("."))
    env.foreach { case (k, v) => pb.environment().put(k, v) }
    pb.start()
  }

  private def awaitLog(log: File, pattern: scala.util.matching.Regex, seconds: Int): String = {
    val deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(seconds)
    while (System.nanoTime() < deadline) {
      if (log.exists()) {
        pattern.findFirstMatchIn(new String(Files.readAllBytes(log.toPath))).foreach(m => return m.group(1))
      }
      Thread.sleep(200)
    }
    throw new IllegalStateException(s"'$pattern' not in $log within $seconds s")
  }
}
