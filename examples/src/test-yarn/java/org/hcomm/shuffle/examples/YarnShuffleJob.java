package org.hcomm.shuffle.examples;

import java.io.IOException;
import java.io.Writer;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.util.Map;
import java.util.Properties;
import java.util.concurrent.ConcurrentHashMap;

import org.apache.spark.SparkConf;
import org.apache.spark.api.java.JavaSparkContext;
import org.apache.spark.resource.ResourceInformation;
import org.apache.spark.scheduler.SparkListener;
import org.apache.spark.scheduler.SparkListenerExecutorAdded;
import scala.Tuple2;

/**
 * The example ETL pipeline ({@link EtlPipelineJob#pipeline}) as an application submitted to YARN: it runs once with
 * the configuration spark-submit gave and writes what the test checks into a properties file (the test and the
 * driver share this host; in cluster mode the driver runs in the ApplicationMaster's container, whose console the
 * test does not see).
 *
 * <p>Arguments: {@code <result file> <events> <executors>}: waits for that many executors before the job (0: none,
 * for dynamic allocation, which adds them for the job's tasks).
 */
public final class YarnShuffleJob {
    private YarnShuffleJob() {
    }

    public static void main(String[] args) throws Exception {
        Path out = Path.of(args[0]);
        int events = Integer.parseInt(args[1]);
        int executors = Integer.parseInt(args[2]);
        SparkConf conf = new SparkConf().setAppName("hcomm-yarn-etl")
                .set("spark.extraListeners", ExecutorResources.class.getName());
        Properties result = new Properties();
        try (JavaSparkContext sc = new JavaSparkContext(conf)) {
            ClusterSupport.awaitExecutorCount(sc.sc(), executors);
            ClusterSupport.awaitHcommReady(executors);
            Tuple2<Long, String> answer = EtlPipelineJob.pipeline(sc, events);
            result.setProperty("checksum", Long.toHexString(answer._1()));
            result.setProperty("summary", answer._2());
            result.setProperty("deployMode", sc.sc().deployMode());
            result.setProperty("appId", sc.sc().applicationId());
            if (ClusterSupport.selectsHcomm(conf)) {
                ClusterSupport.hcommMetrics(sc.sc()).forEach((k, v) -> result.setProperty("metric." + k, v.toString()));
            }
            sc.sc().listenerBus().waitUntilEmpty();
            ExecutorResources.ADDED.forEach((id, npus) -> result.setProperty("executor." + id, npus));
        }
        Path tmp = Files.createTempFile(out.getParent(), "result", ".tmp");
        try (Writer w = Files.newBufferedWriter(tmp)) {
            result.store(w, "YarnShuffleJob");
        }
        Files.move(tmp, out, StandardCopyOption.ATOMIC_MOVE);
    }

    /**
     * Records each executor Spark added and the addresses of its {@value MiniYarn#NPU_TYPE} resource (what the
     * discovery script found in its container), "" without one. Named in spark.extraListeners, so it sees every
     * executor, the first ones included.
     */
    public static final class ExecutorResources extends SparkListener {
        static final Map<String, String> ADDED = new ConcurrentHashMap<>();

        @Override
        public void onExecutorAdded(SparkListenerExecutorAdded added) {
            scala.Option<ResourceInformation> npu = added.executorInfo().resourcesInfo().get("npu");
            ADDED.put(added.executorId(), npu.isDefined() ? String.join(",", npu.get().addresses()) : "");
        }
    }

    static Properties read(Path file) throws IOException {
        Properties p = new Properties();
        try (java.io.Reader r = Files.newBufferedReader(file)) {
            p.load(r);
        }
        return p;
    }
}
