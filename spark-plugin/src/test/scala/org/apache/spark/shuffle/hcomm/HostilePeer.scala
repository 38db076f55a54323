package org.apache.spark.shuffle.hcomm

import java.io.OutputStream
import java.net.{InetSocketAddress, Socket}

/**
 * A process on another host that attacks executors' soft NIC listeners (run by [[MultiHostSuite]] in a host's
 * network namespace): to each `host:port` argument it sends garbage, an oversized frame, a hello cut short and left
 * open, and holds many idle connections, for `seconds`, then closes everything. It prints one line per attack.
 */
object HostilePeer {
  def main(args: Array[String]): Unit = {
    val seconds = args.head.toInt
    val targets = args.tail.map { a =>
      val Array(h, p) = a.split(':')
      new InetSocketAddress(h, p.toInt)
    }
    val rnd = new scala.util.Random(18)
    val open = scala.collection.mutable.Buffer.empty[Socket]
    def connect(t: InetSocketAddress): Socket = {
      val s = new Socket()
      try {
        s.connect(t, 5000)
        s.setSoTimeout(2000)
        open += s
      } catch {
        case e: java.io.IOException => println(s"connect to $t failed: $e") // the listener's backlog was full
      }
      s
    }
    def send(s: Socket, bytes: Array[Byte]): Unit = try {
      val out: OutputStream = s.getOutputStream
      out.write(bytes)
      out.flush()
    } catch {
      case _: java.io.IOException => () // the listener closed it: what it should do
    }
    val deadline = System.nanoTime() + seconds * 1000000000L
    var rounds = 0
    while (System.nanoTime() < deadline) {
      for (t <- targets) {
        send(connect(t), Array.fill(4096)(rnd.nextInt().toByte)) // garbage
        val huge = new Array[Byte](1 << 20) // a frame far larger than a hello, declared and sent
        java.nio.ByteBuffer.wrap(huge).order(java.nio.ByteOrder.LITTLE_ENDIAN).putInt(0x48435348).putInt(2).putInt(1)
          .putInt(Int.MaxValue)
        send(connect(t), huge)
        val cut = new Array[Byte](100) // a hello's first bytes, then silence with the connection open
        java.nio.ByteBuffer.wrap(cut).order(java.nio.ByteOrder.LITTLE_ENDIAN).putInt(0x48435348).putInt(2).putInt(1)
          .putInt(3)
        send(connect(t), cut)
        (1 to 20).foreach(_ => connect(t)) // idle connections
      }
      rounds += 1
      println(s"hostile round $rounds against ${targets.mkString(", ")}: ${open.size} connections made")
      Thread.sleep(1000)
      if (open.size > 2000) {
        open.foreach(s => try s.close() catch { case _: Exception => () })
        open.clear()
      }
    }
    open.foreach(s => try s.close() catch { case _: Exception => () })
    println(s"hostile peer done after $rounds rounds")
  }
}
