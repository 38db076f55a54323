package org.apache.spark.shuffle.hcomm

import java.io.File
import java.nio.file.{Files, Path}
import java.util.concurrent.TimeUnit

/**
 * Headless Chromium for the UI tests: the DOM of a page after its scripts ran, or a screenshot. The binary is
 * `$CHROMIUM` when set, else `/usr/bin/chromium`; `binary` is None when it is not executable (the tests then cancel,
 * saying so).
 */
object Chromium {
  private val path = sys.env.getOrElse("CHROMIUM", "/usr/bin/chromium")

  val binary: Option[String] = Some(path).filter(p => new File(p).canExecute)

  val missing: String = s"headless Chromium not found at $path (set CHROMIUM=<path> to use another): the browser " +
    "tests are canceled"

  /** The page's DOM as the browser built it. */
  def dumpDom(url: String): String = run(Seq("--dump-dom", url))

  /** A PNG of the page as a 1400x900 window shows it. */
  def screenshot(url: String, file: Path): Unit = {
    Files.createDirectories(file.toAbsolutePath.getParent)
    run(Seq(s"--screenshot=${file.toAbsolutePath}", "--window-size=1400,900", "--hide-scrollbars", url))
    assert(Files.size(file) > 0, s"no screenshot of $url")
  }

  private def run(args: Seq[String]): String = {
    val bin = binary.getOrElse(throw new IllegalStateException(missing))
    val profile = Files.createTempDirectory("hcomm-chromium")
    val out = Files.createTempFile("hcomm-chromium", ".out")
    val err = Files.createTempFile("hcomm-chromium", ".err")
    try {
      val cmd = Seq(bin, "--headless=new", "--no-sandbox", "--disable-gpu", "--no-first-run",
        "--disable-dev-shm-usage", s"--user-data-dir=$profile", "--virtual-time-budget=3000") ++ args
      val p = new ProcessBuilder(cmd: _*).redirectOutput(out.toFile).redirectError(err.toFile).start()
      if (!p.waitFor(90, TimeUnit.SECONDS)) {
        p.descendants().forEach(d => d.destroyForcibly())
        p.destroyForcibly()
        throw new AssertionError(s"chromium did not finish in 90 s: ${cmd.mkString(" ")}")
      }
      assert(p.exitValue() == 0, s"chromium exited with ${p.exitValue()}: ${Files.readString(err)}")
      Files.readString(out)
    } finally {
      Files.deleteIfExists(out)
      Files.deleteIfExists(err)
      org.apache.spark.util.Utils.deleteRecursively(profile.toFile)
    }
  }
}
