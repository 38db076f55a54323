#!/usr/bin/env bash
# Runs the example ETL job with spark-submit on a real Spark standalone cluster (one Master, one Worker with two
# executors) started on this host from Maven's Spark jars alone, with the HComm shuffle activated by its two
# settings and its jars passed with --jars. Everything binds to 127.0.0.1 and is stopped at the end.
#
#   examples/standalone-cluster.sh [events]
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
events="${1:-1000000}"
work="$root/examples/target/standalone"
spark_home="$work/spark-home"
export SPARK_HOME="$spark_home" SPARK_LOCAL_IP=127.0.0.1 SPARK_SCALA_VERSION=2.13

echo "== building the plugin and the example jars, and collecting Spark's jars from Maven into $spark_home/jars"
mkdir -p "$spark_home/jars" "$work/logs"
(cd "$root" && mvn -B -q -pl examples -am -DskipTests package dependency:copy-dependencies \
    -DincludeScope=provided -DexcludeGroupIds=org.hcomm.shuffle -DoutputDirectory="$spark_home/jars")
plugin_jars="$root/spark-plugin/target/hcomm-spark-plugin-0.1.0-SNAPSHOT.jar,$root/native-bridge/target/hcomm-native-bridge-0.1.0-SNAPSHOT.jar"
plugin_jars="$plugin_jars,$(ls "$HOME"/.m2/repository/net/java/dev/jna/jna/5.18.1/jna-5.18.1.jar)"
app_jar="$root/examples/target/hcomm-examples-0.1.0-SNAPSHOT.jar"
cp="$spark_home/jars/*"
java_opts=(-Xmx512m -cp "$cp")

pids=()
cleanup() { for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done; wait 2>/dev/null || true; }
trap cleanup EXIT

echo "== starting a standalone Master and Worker on 127.0.0.1"
java "${java_opts[@]}" org.apache.spark.deploy.master.Master --host 127.0.0.1 --port 7177 --webui-port 18180 \
  > "$work/logs/master.log" 2>&1 &
pids+=($!)
java "${java_opts[@]}" org.apache.spark.deploy.worker.Worker --host 127.0.0.1 --webui-port 18181 --cores 2 \
  --memory 3g --work-dir "$work/worker" spark://127.0.0.1:7177 > "$work/logs/worker.log" 2>&1 &
pids+=($!)
for _ in $(seq 1 60); do
  grep -q "Successfully registered with master" "$work/logs/worker.log" 2>/dev/null && break
  sleep 1
done
grep -q "Successfully registered with master" "$work/logs/worker.log" || { echo "worker did not register"; exit 1; }

echo "== spark-submit with the HComm shuffle (two --conf lines, jars with --jars)"
java -Xmx1g -cp "$cp" org.apache.spark.deploy.SparkSubmit \
  --master spark://127.0.0.1:7177 --deploy-mode client \
  --class org.hcomm.shuffle.examples.EtlPipelineJob \
  --executor-memory 1g --executor-cores 1 --total-executor-cores 2 \
  --jars "$plugin_jars" \
  --conf spark.executorEnv.SPARK_SCALA_VERSION=2.13 \
  --conf spark.plugins=org.apache.spark.shuffle.hcomm.HcommShufflePlugin \
  --conf spark.shuffle.manager=org.apache.spark.shuffle.hcomm.HcommShuffleManager \
  "$app_jar" --submitted "$events"
