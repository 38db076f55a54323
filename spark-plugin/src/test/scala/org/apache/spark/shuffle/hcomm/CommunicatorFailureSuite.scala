package org.apache.spark.shuffle.hcomm

import scala.jdk.CollectionConverters._

import org.apache.spark.{SparkConf, SparkContext, SparkException}

/**
 * What goes wrong on the communicator path (executors on soft HComm's Atlas A2 profile): an executor dies in the
 * reduce stage, the HCCL buffer does not fit the device, a reader stalls mid-slot, a member is slow to take up its
 * communicator, an NPU id or an HCCL_OP_EXPANSION_MODE the path cannot use. Each test makes (and stops) its own
 * context.
 */
class CommunicatorFailureSuite extends LocalClusterSuite {
  override protected def sharedContext: Boolean = false

  private def onA2(conf: SparkConf): SparkConf = conf
    .set("spark.executorEnv.HCOMM_SOFT_SOC", "Ascend910B3")
    .set("spark.shuffle.hcomm.communicator.settle", "300ms")

  private def withContext[T](conf: SparkConf, hcommRegistered: Boolean = true)(body: SparkContext => T): T = {
    sc = startContext(conf, hcommRegistered = hcommRegistered)
    val result = try body(sc)
    finally {
      sc.stop()
      sc = null
    }
    assertNoLocalCluster()
    result
  }

  private def formed(c: SparkContext): Unit = eventually("the executors' communicator formed", 60) {
    Option(driverState.communicatorMembers()).exists(_.size() == liveExecutors(c).size)
  }

  private def sums(n: Int, keys: Int): Map[Int, Long] = (1 to n).groupBy(_ % keys).map { case (k, v) =>
    k -> v.map(_.toLong).sum
  }

  test("an executor killed during the reduce stage: the reads of its outputs fail, Spark recomputes them and the " +
    "answer is right; a new communicator forms with its replacement and the next shuffle is one-sided again") {
    withContext(onA2(baseConf.set("spark.shuffle.hcomm.readTimeout", "10s"))) { c =>
      formed(c)
      val tasks = new TaskRecorder
      c.addSparkListener(tasks)
      val (got, victim, readers) = killOwnerMidReduce(c, 200000)
      assert(got == sums(200000, 1000))
      c.listenerBus.waitUntilEmpty()
      assert(!tasks.failures.isEmpty, "no task failed: the kill did not hit the job")
      // the other executor's reduce task was at the gate when the victim died (a window reader's read-ahead starts
      // when the task makes its reader, before the gate, and may have read the small outputs already:
      // CommunicatorWindowSuite kills an executor mid-slot and checks the failed reads)
      assert(readers.nonEmpty, s"readers of the dead executor's outputs: $readers; failures: ${tasks.failures}")
      awaitReplaced(victim, c)
      // the executors changed: the driver forms a new communicator of the survivors and the replacement (epoch 2),
      // each member switches to it and retires the old one, and the next shuffle is read one-sidedly again
      eventually("a new communicator with the replacement", 90) {
        Option(driverState.communicatorMembers()).exists(m =>
          m.asScala.toSet == liveExecutors(c).toSet && !m.contains(victim))
      }
      val (oneSided, spark) = (metric("bytesReadOneSided"), metric("bytesReadFallback"))
      assert(c.parallelize(1 to 20000, 6).map(i => (i % 7, 1)).reduceByKey(_ + _, 4).collect().toMap ==
        (1 to 20000).groupBy(_ % 7).map { case (k, v) => k -> v.size })
      eventually("one-sided bytes of the later shuffle reported")(metric("bytesReadOneSided") > oneSided)
      // executors report their counters when a reduce stage's channels are destroyed: the later shuffle's are the
      // first sure to be after the new communicator formed
      eventually("every executor in the new communicator", 60)(metric("communicatorsJoined") >= 2 * executors - 1)
      assert(metric("bytesReadFallback") == spark, "the later shuffle went by Spark's fetch")
      eventually("the old communicators retired", 60)(metric("communicatorsLive") == executors)
    }
  }

  test("an HCCL buffer larger than the device, fallback auto: the communicator does not form, the driver says why " +
    "naming the setting, and Spark's fetch gives the right answer") {
    val conf = onA2(baseConf).set("spark.shuffle.hcomm.fallback", "auto")
      .set("spark.executorEnv.HCOMM_SOFT_DEVICE_MEM_MB", "64")
      .set("spark.shuffle.hcomm.communicator.bufferSize", "128m")
      .set("spark.shuffle.hcomm.communicator.formTimeout", "3s")
    withContext(conf) { c =>
      eventually("the forming failed", 60)(driverState.communicatorFailure() != null)
      val why = driverState.communicatorFailure()
      assert(why.contains("spark.shuffle.hcomm.communicator.bufferSize") && why.contains("OOM"), why)
      assert(c.parallelize(1 to 50000, 4).map(i => (i % 100, i.toLong)).reduceByKey(_ + _, 3).collect().toMap ==
        sums(50000, 100))
      eventually("fallback bytes reported")(metric("bytesReadFallback") > 0)
      assert(metric("bytesReadOneSided") == 0 && metric("communicatorsLive") == 0)
    }
  }

  test("an HCCL buffer larger than the device, fallback never: the job fails with the reason and the setting") {
    val conf = onA2(baseConf)
      .set("spark.executorEnv.HCOMM_SOFT_DEVICE_MEM_MB", "64")
      .set("spark.shuffle.hcomm.communicator.bufferSize", "128m")
      .set("spark.shuffle.hcomm.communicator.formTimeout", "3s")
      .set("spark.task.maxFailures", "1")
    withContext(conf) { c =>
      // the driver records the failure once every member answered its join, which a member does after noting
      // the failure its reduce tasks then fail with
      eventually("the forming failed", 60)(driverState.communicatorFailure() != null)
      val e = intercept[SparkException] {
        c.parallelize(1 to 5000, 4).map(i => (i % 10, 1)).reduceByKey(_ + _, 2).collect()
      }
      assert(e.getMessage.contains("spark.shuffle.hcomm.fallback=never") &&
        e.getMessage.contains("could not join communicator"), e.getMessage)
    }
  }

  /**
   * The bundle's NPU discovery script (examples/npu-discovery.sh) behind a wrapper that puts a fake `npu-smi`
   * showing `npus` A2 chips first on PATH: the workers of a local cluster run in the driver's JVM, so the wrapper,
   * not the JVM's environment, makes the fake the one the script finds.
   */
  private def npuDiscoveryScript(npus: Int): String = {
    import java.nio.file.{Files, Paths}
    val dir = Files.createTempDirectory(Paths.get("target").toAbsolutePath, "npu-discovery-")
    val bin = Files.createDirectories(dir.resolve("bin"))
    val rows = (0 until npus).map(i => s"$i 0 $i Ascend910B3\\n$i 1 - Mcu\\n").mkString
    val smi = Files.writeString(bin.resolve("npu-smi"),
      s"#!/bin/sh\nprintf 'NPU ID  Chip ID  Chip Logic ID  Chip Name\\n$rows'\n")
    val in = getClass.getResourceAsStream("/org/apache/spark/shuffle/hcomm/internal/bundle/npu-discovery.sh")
    val script = try Files.write(dir.resolve("npu-discovery.sh"), in.readAllBytes()) finally in.close()
    val wrapper = Files.writeString(dir.resolve("discover.sh"),
      "#!/bin/sh\nPATH='" + bin + "':\"$PATH\" exec bash '" + script + "'\n") // no \" in s"" on Scala 2.12
    Seq(smi, wrapper).foreach(_.toFile.setExecutable(true))
    Seq(dir, bin, smi, script, wrapper).foreach(_.toFile.deleteOnExit()) // deleted in reverse order
    wrapper.toString
  }

  /**
   * Spark's resource scheduling giving both executors of this host NPU 0: each worker of the local cluster runs the
   * discovery script, which finds the host's one NPU, "0" (Spark does not coordinate the workers of one host).
   */
  private def oneNpuPerWorker(conf: SparkConf): SparkConf = {
    onA2(conf).set("spark.worker.resource.npu.amount", "1")
      .set("spark.worker.resource.npu.discoveryScript", npuDiscoveryScript(1))
      .set("spark.executor.resource.npu.amount", "1")
      .set("spark.task.resource.npu.amount", "1")
      .set("spark.shuffle.hcomm.communicator.resource", "npu")
  }

  test("one worker with two NPUs found by the discovery script and two executors, README's settings: Spark gives " +
    "each executor its own address, each uses that NPU, and the communicator forms") {
    // no spark.task.resource.npu.amount: tasks need no NPU share, the shuffle uses the executor's
    val conf = onA2(baseConf).setMaster("local-cluster[1,2,1024]")
      .set("spark.executor.cores", "1")
      .set("spark.executor.memory", "480m")
      .set("spark.worker.resource.npu.amount", "2")
      .set("spark.worker.resource.npu.discoveryScript", npuDiscoveryScript(2))
      .set("spark.executor.resource.npu.amount", "1")
      .set("spark.shuffle.hcomm.communicator.resource", "npu")
    withContext(conf) { c =>
      formed(c)
      // the plugin takes an executor's NPU from the resources Spark gave it (communicator.resource)
      assert(liveExecutors(c).map(driverState.communicatorDevice).sorted == Seq(0, 1))
      assert(c.parallelize(1 to 50000, 4).map(i => (i % 100, i.toLong)).reduceByKey(_ + _, 3).collect().toMap ==
        sums(50000, 100))
      eventually("one-sided bytes reported")(metric("bytesReadOneSided") > 0)
    }
  }

  test("two executors of one host on the same NPU, fallback auto: the communicator is refused naming " +
    "spark.shuffle.hcomm.communicator.resource, and Spark's fetch gives the right answer") {
    withContext(oneNpuPerWorker(baseConf.set("spark.shuffle.hcomm.fallback", "auto"))) { c =>
      eventually("the forming failed", 60)(driverState.communicatorFailure() != null)
      val why = driverState.communicatorFailure()
      assert(why.contains("both use NPU 0") && why.contains("spark.shuffle.hcomm.communicator.resource"), why)
      assert(liveExecutors(c).forall(driverState.communicatorDevice(_) == 0))
      assert(c.parallelize(1 to 50000, 4).map(i => (i % 100, i.toLong)).reduceByKey(_ + _, 3).collect().toMap ==
        sums(50000, 100))
      eventually("fallback bytes reported")(metric("bytesReadFallback") > 0)
      assert(metric("bytesReadOneSided") == 0 && metric("communicatorsJoined") == 0)
    }
  }

  test("two executors of one host on the same NPU, fallback never: the reduce fails naming " +
    "spark.shuffle.hcomm.communicator.resource") {
    withContext(oneNpuPerWorker(baseConf.set("spark.task.maxFailures", "1"))) { c =>
      eventually("the forming failed", 60)(driverState.communicatorFailure() != null)
      val e = intercept[SparkException] {
        c.parallelize(1 to 5000, 4).map(i => (i % 10, 1)).reduceByKey(_ + _, 2).collect()
      }
      assert(e.getMessage.contains("spark.shuffle.hcomm.fallback=never") && e.getMessage.contains("both use NPU 0") &&
        e.getMessage.contains("spark.shuffle.hcomm.communicator.resource"), e.getMessage)
    }
  }

  test("more executors on a host than NPUs it shows this process: the device id outside aclrtGetDeviceCount is " +
    "named, and ASCEND_RT_VISIBLE_DEVICES with it") {
    val conf = onA2(baseConf).set("spark.executorEnv.HCOMM_SOFT_DEVICES", "1")
      .set("spark.shuffle.hcomm.communicator.formTimeout", "3s")
    withContext(conf) { c =>
      eventually("the forming failed", 60)(driverState.communicatorFailure() != null)
      val why = driverState.communicatorFailure()
      assert(liveExecutors(c).map(driverState.communicatorDevice).toSet == Set(0, 1))
      assert(why.contains("NPU 1 is not usable here") && why.contains("ASCEND_RT_VISIBLE_DEVICES"), why)
      // refused before aclrtSetDevice, against the devices the executor sees
      assert(why.contains("NPU 1 is outside the 1 device this process sees (aclrtGetDeviceCount") &&
        why.contains("the driver assigned it"), why)
    }
  }

  /** Executors whose environment has an expansion mode the path cannot use (A2: device-side AI CPU expansion). */
  private def aiCpu(conf: SparkConf): SparkConf = onA2(conf).set("spark.executorEnv.HCCL_OP_EXPANSION_MODE", "AI_CPU")

  private val aiCpuRefused = "HCCL_OP_EXPANSION_MODE=AI_CPU expands operators on the device's AI CPU, but the " +
    "communicator path reads from the host on CPU_TS threads: on Atlas A2 (SoC Ascend910B3) set it to HOST or " +
    "HOST_TS, or unset it"

  /**
   * How many lines of each executor's logs contain `text`: the files under its working directory (its Worker's
   * directory for the application: stderr, and the test log4j configuration's log file), found by asking tasks.
   */
  private def executorLogLines(c: SparkContext, text: String): Map[String, Int] = {
    val dirs = c.parallelize(1 to 8 * executors, 8 * executors).map { _ =>
      Thread.sleep(50)
      org.apache.spark.SparkEnv.get.executorId -> new java.io.File(".").getCanonicalPath
    }.collect().toMap
    assert(dirs.size == executors, s"tasks ran on ${dirs.keySet}")
    dirs.map { case (executor, dir) =>
      val files = java.nio.file.Files.walk(java.nio.file.Paths.get(dir))
      val n = try files.iterator().asScala.filter(java.nio.file.Files.isRegularFile(_))
        .filter(p => p.getFileName.toString == "stderr" || p.getFileName.toString.endsWith(".log"))
        .map(p => java.nio.file.Files.readAllLines(p).asScala.count(_.contains(text))).sum
      finally files.close()
      executor -> n
    }
  }

  test("HCCL_OP_EXPANSION_MODE=AI_CPU on an A2, fallback auto: no executor joins a communicator, the shuffle goes by " +
    "Spark's fetch with the right answer, and each executor says why once, naming the variable and its values") {
    withContext(aiCpu(baseConf).set("spark.shuffle.hcomm.fallback", "auto"), hcommRegistered = false) { c =>
      assert(driverState.registeredExecutors() == 0)
      // two reduce stages of several tasks per executor: the warning is the executor's, not the task's
      for (_ <- 1 to 2) {
        assert(c.parallelize(1 to 50000, 4).map(i => (i % 100, i.toLong)).reduceByKey(_ + _, 6).collect().toMap ==
          sums(50000, 100))
      }
      eventually("fallback bytes reported")(metric("bytesReadFallback") > 0)
      assert(metric("bytesReadOneSided") == 0 && metric("communicatorsJoined") == 0)
      assert(driverState.communicatorFailure() == null, "no communicator was formed, so none failed")
      val warning = aiCpuRefused + ". Every shuffle block is fetched by Spark's transfer"
      val warned = executorLogLines(c, warning)
      assert(warned.size == executors && warned.values.forall(_ == 1), s"the warning, by executor: $warned")
    }
  }

  test("HCCL_OP_EXPANSION_MODE=AI_CPU on an A2, fallback never: the reduce fails naming the variable, the values " +
    "it allows and spark.shuffle.hcomm.fallback") {
    withContext(aiCpu(baseConf).set("spark.task.maxFailures", "1"), hcommRegistered = false) { c =>
      val e = intercept[SparkException] {
        c.parallelize(1 to 5000, 4).map(i => (i % 10, 1)).reduceByKey(_ + _, 2).collect()
      }
      assert(e.getMessage.contains(aiCpuRefused) && e.getMessage.contains("spark.shuffle.hcomm.fallback=never"),
        e.getMessage)
      assert(metric("communicatorsJoined") == 0)
    }
  }

  test("writeTarget=arena with windows: the arena does not apply, each executor says so once, map outputs go to " +
    "Spark's files and every remote byte is streamed from there through windows") {
    val conf = onA2(baseConf).set("spark.shuffle.hcomm.writeTarget", "arena")
      .set("spark.shuffle.readHostLocalDisk", "false")
    withContext(conf) { c =>
      formed(c)
      assert(c.parallelize(1 to 100000, 6).map(i => (i % 500, i.toLong)).reduceByKey(_ + _, 4).collect().toMap ==
        sums(100000, 500))
      eventually("windows reported")(metric("windowsOpened") > 0 && metric("bytesReadOneSided") > 0)
      assert(metric("outputsWrittenToArena") == 0 && metric("outputsCopied") == 0 && metric("bytesReadFallback") == 0)
      val warned = executorLogLines(c, "spark.shuffle.hcomm.writeTarget=arena does not apply to the communicator " +
        "path with windows")
      assert(warned.size == executors && warned.values.forall(_ == 1), s"the warning, by executor: $warned")
    }
  }

  test("a reader stalled mid-slot past the read timeout (SIGSTOP), fallback never: its owner gives the window up, " +
    "the pair's channel is poisoned, the driver re-forms the communicator of the same executors, the answer is " +
    "right") {
    // a 1 MiB read-ahead and slices: a reader at the gate holds a window mid-stream, its owner waiting for an ACK
    val conf = onA2(baseConf).set("spark.shuffle.hcomm.readTimeout", "3s")
      .set("spark.shuffle.hcomm.maxBytesInFlight", "1m")
      .set("spark.shuffle.hcomm.communicator.bufferSize", "8m")
      .set("spark.shuffle.hcomm.communicator.sliceSize", "1m")
      .set("spark.shuffle.hcomm.communicator.slots", "2")
    withContext(conf) { c =>
      formed(c)
      val epoch = driverState.communicatorEpoch()
      val members = driverState.communicatorMembers()
      val pids = executorPids(c)
      // 16 blocks of 0.75 MB per reduce partition, 8 from the other executor: more than the budget holds
      val (got, _) = midReadStrike(c, 48000, keys = 400, maps = 16, reduces = 4) { atGate =>
        val stalled = atGate.head.executorId
        signal(pids(stalled), "STOP")
        try Thread.sleep(8000) // past the owners' read timeout: they give their windows to it up
        finally signal(pids(stalled), "CONT")
      }
      val want = byteSums(48000, 400)
      assert(got == want)
      eventually("a failed exchange reported")(metric("windowsPoisoned") > 0)
      assert(driverState.communicatorEpoch() > epoch, "no communicator was formed again")
      eventually("the same executors in a new communicator", 60)(driverState.communicatorMembers() == members)
      assert(metric("bytesReadFallback") == 0)
      val after = c.parallelize(1 to 30000, 4).map(i => (i % 100, 1L)).reduceByKey(_ + _, 4).collect().toMap
      assert(after.values.sum == 30000)
    }
  }

  test("a member slow to take up its communicator, maps before it, fallback never: the other member's reduce does " +
    "not read in it before every member can serve its outputs; later they are read one-sidedly") {
    // Settle holds the forming back while the map stage runs. Then a task on executor 0 holds the monitor its parts
    // change under, so executor 0 cannot take up the communicator once it joined (as a member slow to build its
    // parts), and the reduce runs on executor 1 alone. Before CommunicatorReady, executor 1 read in the new
    // communicator as soon as it had built its own parts, asked executor 0 for outputs it could not yet publish,
    // and the reduce failed: "map outputs not published for one-sided reads by executor 0 ... fallback=never
    // forbids Spark's fetch".
    withContext(onA2(baseConf).set("spark.shuffle.hcomm.communicator.settle", "10s")) { c =>
      TaskGate.using("hold") { case Seq(gate) =>
        val rdd = c.parallelize(1 to 50000, 4).map(i => (i % 100, i.toLong)).reduceByKey(_ + _, 3)
        val dep = rdd.dependencies.head.asInstanceOf[org.apache.spark.ShuffleDependency[Int, Long, Long]]
        c.submitMapStage(dep).get()
        assert(driverState.communicatorMembers() == null, "the communicator formed before the map stage ended")
        val owners = c.env.mapOutputTracker.asInstanceOf[org.apache.spark.MapOutputTrackerMaster]
          .shuffleStatuses(dep.shuffleId).mapStatuses.map(_.location.executorId).toSet
        assert(owners == Set("0", "1"), s"map outputs on $owners")
        import scala.concurrent.ExecutionContext.Implicits.global
        val holder = scala.concurrent.Future {
          c.parallelize(1 to 2, 2).map { _ =>
            if (org.apache.spark.SparkEnv.get.executorId == "0") internal.executor.ExecutorProbe.holdingPartsChanges {
              assert(!internal.executor.ExecutorProbe.readsOneSided(), "executor 0 took up a communicator before " +
                "the hold")
              gate.pass()
            }
          }.count()
        }
        gate.awaitArrivals("the holder on executor 0", 60, holder)(_.exists(_.executorId == "0"))
        // executor 1 joined (every member did: the init is collective); executor 0 cannot take it up
        eventually("executor 1 joined the communicator", 90) {
          c.parallelize(1 to 1, 1).map(_ => org.apache.spark.SparkEnv.get.executorId -> internal.executor
            .ExecutorRuntime.current().metrics().communicatorsJoined.getCount).collect().head == ("1" -> 1L)
        }
        val tasks = new TaskRecorder
        c.addSparkListener(tasks)
        assert(rdd.collect().toMap == sums(50000, 100)) // the reduce, on executor 1 alone
        c.listenerBus.waitUntilEmpty()
        // a fetch failure would not fail the job (Spark runs the map stage again): no task may have failed
        assert(tasks.failures.isEmpty, s"tasks failed: ${tasks.failures}")
        gate.open()
        formed(c)
        scala.concurrent.Await.result(holder, scala.concurrent.duration.Duration(60, "s"))
        eventually("start-up bytes reported")(metric("bytesReadBeforeCommunicator") > 0)
        assert(metric("bytesReadFallback") == 0, "Spark's fetch before the communicator is no fallback")
        // the map outputs were written before any communicator: their owners stream them from their files through
        // windows, as they stream any output
        val before = metric("bytesReadOneSided")
        assert(rdd.collect().toMap == sums(50000, 100))
        eventually("one-sided bytes reported")(metric("bytesReadOneSided") > before)
        assert(metric("bytesReadFallback") == 0 && metric("windowsOpened") > 0)
      }
    }
  }
}
