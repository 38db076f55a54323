package org.hcomm.shuffle.examples;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.fabric8.kubernetes.api.model.Container;
import io.fabric8.kubernetes.api.model.EnvVar;
import io.fabric8.kubernetes.api.model.PodSpec;
import io.fabric8.kubernetes.api.model.Quantity;
import io.fabric8.kubernetes.api.model.Volume;
import io.fabric8.kubernetes.api.model.VolumeMount;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.KubernetesClientBuilder;
import java.io.IOException;
import java.io.Reader;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.stream.Collectors;
import org.apache.spark.SecurityManager;
import org.apache.spark.SecurityManager$;
import org.apache.spark.SparkConf;
import org.apache.spark.deploy.k8s.KubernetesConf$;
import org.apache.spark.deploy.k8s.KubernetesExecutorConf;
import org.apache.spark.deploy.k8s.KubernetesUtils;
import org.apache.spark.deploy.k8s.SparkPod;
import org.apache.spark.resource.ResourceProfile;
import org.apache.spark.resource.ResourceProfile$;
import org.apache.spark.scheduler.cluster.k8s.KubernetesExecutorBuilder;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import scala.Option;

/**
 * The executor pod that Spark's own Kubernetes code ({@code KubernetesExecutorBuilder}, the builder the driver's
 * executor allocator calls) builds from {@code kubernetes/spark-ascend.properties} and
 * {@code kubernetes/executor-pod-template.yaml}. No API server is involved: the builder only needs a client to parse
 * the template. What a cluster does with the pod (the device plugin's allocation, mounts of a real node) is not
 * tested here.
 */
class KubernetesExecutorPodTest {

    private static final Path RECIPE = Path.of("kubernetes");
    private static final String DEVICE = "huawei.com/Ascend910";

    @AfterEach
    void forgetDefaultProfile() {
        ResourceProfile$.MODULE$.clearDefaultProfile();
    }

    @Test
    void executorPodHasTheNpuTheDriverFilesAndThePluginSettings() throws IOException {
        SparkConf conf = recipeConf();
        SparkPod built = buildExecutorPod(conf);
        Container c = built.container();
        PodSpec spec = built.pod().getSpec();

        assertEquals(List.of(), recipeProblems(conf, built));

        // the device plugin's resource, from spark.executor.resource.Ascend910.{vendor,amount}
        assertEquals(new Quantity("1"), c.getResources().getLimits().get(DEVICE));
        assertEquals(conf.get("spark.kubernetes.container.image"), c.getImage());
        assertEquals("spark-executor", c.getName());

        Map<String, String> mounts = c.getVolumeMounts().stream()
                .collect(Collectors.toMap(VolumeMount::getMountPath, VolumeMount::getName));
        for (String path : List.of("/usr/local/Ascend/driver", "/usr/local/dcmi", "/usr/local/bin/npu-smi",
                "/etc/ascend_install.info", "/usr/local/Ascend/cann")) {
            Volume v = volume(spec, mounts.get(path));
            assertEquals(path, v.getHostPath().getPath(), path);
            assertTrue(c.getVolumeMounts().stream()
                    .filter(m -> m.getMountPath().equals(path)).allMatch(VolumeMount::getReadOnly), path);
        }
        Volume shm = volume(spec, mounts.get("/dev/shm"));
        assertEquals("Memory", shm.getEmptyDir().getMedium());

        Map<String, String> env = env(c);
        assertEquals("Ascend910", env.get("HCOMM_NPU_RESOURCE_NAME"));
        assertTrue(env.get("LD_LIBRARY_PATH").contains("/usr/local/Ascend/driver/lib64/driver"));
        assertEquals("/usr/local/Ascend/cann", env.get("ASCEND_HOME_PATH"));
        assertEquals("1", env.get("SPARK_EXECUTOR_ID")); // Spark's own env is there beside the template's

        assertEquals(List.of("IPC_LOCK"), c.getSecurityContext().getCapabilities().getAdd());
        assertEquals(Boolean.TRUE, spec.getHostNetwork());
        assertEquals("ClusterFirstWithHostNet", spec.getDnsPolicy());

        // The plugin's settings reach executors with the driver's conf at registration, not in the pod spec.
        assertEquals("org.apache.spark.shuffle.hcomm.HcommShufflePlugin", conf.get("spark.plugins"));
        assertEquals("org.apache.spark.shuffle.hcomm.HcommShuffleManager", conf.get("spark.shuffle.manager"));
        assertEquals("Ascend910", conf.get("spark.shuffle.hcomm.communicator.resource"));
        assertEquals("cann", conf.get("spark.shuffle.hcomm.provider"));
    }

    @Test
    void templateParsesWithSparksLoaderAlone() {
        try (KubernetesClient client = new KubernetesClientBuilder().build()) {
            SparkPod pod = KubernetesUtils.loadPodFromTemplate(client,
                    RECIPE.resolve("executor-pod-template.yaml").toString(), Option.apply("spark-executor"),
                    new SparkConf(false));
            assertEquals("spark-executor", pod.container().getName());
            assertEquals(6, pod.pod().getSpec().getVolumes().size());
        }
    }

    @Test
    void withoutTheResourceTheCheckNamesTheSettings() throws IOException {
        SparkConf conf = recipeConf();
        conf.remove("spark.executor.resource.Ascend910.amount");
        conf.remove("spark.executor.resource.Ascend910.vendor");
        conf.remove("spark.executor.resource.Ascend910.discoveryScript");
        List<String> problems = recipeProblems(conf, buildExecutorPod(conf));
        assertEquals(1, problems.size(), problems.toString());
        assertTrue(problems.get(0).contains("spark.executor.resource.Ascend910.amount=1"), problems.get(0));
        assertTrue(problems.get(0).contains("spark.executor.resource.Ascend910.vendor=huawei.com"), problems.get(0));
    }

    @Test
    void resourceWithoutVendorIsRefusedBySpark() throws IOException {
        SparkConf conf = recipeConf();
        conf.remove("spark.executor.resource.Ascend910.vendor");
        Exception e = org.junit.jupiter.api.Assertions.assertThrows(Exception.class, () -> buildExecutorPod(conf));
        assertTrue(String.valueOf(e.getMessage()).contains("vendor was not specified"), String.valueOf(e.getMessage()));
    }

    @Test
    void templateWithoutTheDriverMountIsNamed(@org.junit.jupiter.api.io.TempDir Path dir) throws IOException {
        String template = Files.readString(RECIPE.resolve("executor-pod-template.yaml"))
                .replace("mountPath: /usr/local/Ascend/driver", "mountPath: /opt/elsewhere");
        Path bad = dir.resolve("template.yaml");
        Files.writeString(bad, template);
        SparkConf conf = recipeConf().set("spark.kubernetes.executor.podTemplateFile", bad.toString());
        List<String> problems = recipeProblems(conf, buildExecutorPod(conf));
        assertEquals(1, problems.size(), problems.toString());
        assertTrue(problems.get(0).contains("/usr/local/Ascend/driver"), problems.get(0));
        assertTrue(problems.get(0).contains("spark.kubernetes.executor.podTemplateFile"), problems.get(0));
    }

    @Test
    void launcherCheckPassesTheRecipeAndNamesWhatIsMissing(@org.junit.jupiter.api.io.TempDir Path dir)
            throws IOException, InterruptedException {
        assertEquals(0, checkRecipe().exitCode, "the recipe as shipped");
        Path props = dir.resolve("bad.properties");
        Files.write(props, Files.readAllLines(RECIPE.resolve("spark-ascend.properties")).stream()
                .filter(l -> !l.startsWith("spark.executor.resource.Ascend910.vendor")).toList());
        CheckResult bad = checkRecipe(props.toString());
        assertEquals(1, bad.exitCode, bad.stderr);
        assertTrue(bad.stderr.contains("set spark.executor.resource.Ascend910.vendor=huawei.com"), bad.stderr);
    }

    private record CheckResult(int exitCode, String stderr) {
    }

    /** kubernetes/check-recipe.sh, the launcher-side check of the same two files. */
    private static CheckResult checkRecipe(String... args) throws IOException, InterruptedException {
        List<String> command = new ArrayList<>(List.of("bash", RECIPE.resolve("check-recipe.sh").toString()));
        command.addAll(List.of(args));
        Process p = new ProcessBuilder(command).redirectOutput(ProcessBuilder.Redirect.DISCARD).start();
        String err = new String(p.getErrorStream().readAllBytes(), java.nio.charset.StandardCharsets.UTF_8);
        return new CheckResult(p.waitFor(), err);
    }

    /** The recipe's settings file as spark-submit --properties-file reads it, with the template from this checkout. */
    static SparkConf recipeConf() throws IOException {
        Properties p = new Properties();
        try (Reader r = Files.newBufferedReader(RECIPE.resolve("spark-ascend.properties"))) {
            p.load(r);
        }
        SparkConf conf = new SparkConf(false);
        p.stringPropertyNames().forEach(k -> conf.set(k, p.getProperty(k).trim()));
        conf.set("spark.kubernetes.executor.podTemplateFile",
                RECIPE.resolve("executor-pod-template.yaml").toAbsolutePath().toString());
        conf.set("spark.app.name", "hcomm-k8s-recipe");
        return conf;
    }

    /** Executor 1's pod, as the driver's allocator has Spark build it (no driver pod: no owner reference). */
    static SparkPod buildExecutorPod(SparkConf conf) {
        KubernetesExecutorConf kconf =
                KubernetesConf$.MODULE$.createExecutorConf(conf, "1", "spark-app-1", Option.empty(), 0);
        ResourceProfile profile = ResourceProfile$.MODULE$.reInitDefaultProfile(conf);
        SecurityManager security = new SecurityManager(conf, SecurityManager$.MODULE$.$lessinit$greater$default$2(),
                SecurityManager$.MODULE$.$lessinit$greater$default$3());
        try (KubernetesClient client = new KubernetesClientBuilder().build()) {
            return new KubernetesExecutorBuilder().buildFromFeatures(kconf, security, client, profile).pod();
        }
    }

    /**
     * What the recipe needs in the built executor pod, each missing piece as a message naming what to set; empty
     * when nothing is missing.
     */
    static List<String> recipeProblems(SparkConf conf, SparkPod pod) {
        List<String> problems = new ArrayList<>();
        Container c = pod.container();
        Map<String, Quantity> limits = c.getResources() == null || c.getResources().getLimits() == null
                ? Map.of() : c.getResources().getLimits();
        if (!limits.containsKey(DEVICE)) {
            problems.add("the executor pod asks for no " + DEVICE + ", so no node's device plugin gives it an NPU:"
                    + " set spark.executor.resource.Ascend910.amount=1 and"
                    + " spark.executor.resource.Ascend910.vendor=huawei.com (with"
                    + " spark.executor.resource.Ascend910.discoveryScript=/opt/hcomm/npu-discovery.sh and"
                    + " spark.shuffle.hcomm.communicator.resource=Ascend910)");
        }
        for (String path : List.of("/usr/local/Ascend/driver", "/usr/local/dcmi", "/usr/local/bin/npu-smi",
                "/etc/ascend_install.info", "/dev/shm")) {
            if (c.getVolumeMounts().stream().noneMatch(m -> m.getMountPath().equals(path))) {
                problems.add("the executor container mounts nothing at " + path + ": add the volume and its mount to"
                        + " the pod template (spark.kubernetes.executor.podTemplateFile)");
            }
        }
        return problems;
    }

    private static Volume volume(PodSpec spec, String name) {
        return spec.getVolumes().stream().filter(v -> v.getName().equals(name)).findFirst()
                .orElseThrow(() -> new AssertionError("no volume " + name));
    }

    private static Map<String, String> env(Container c) {
        return c.getEnv().stream().filter(e -> e.getValue() != null)
                .collect(Collectors.toMap(EnvVar::getName, EnvVar::getValue, (a, b) -> b));
    }
}
