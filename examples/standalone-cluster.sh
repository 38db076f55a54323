#!/usr/bin/env bash
# Runs the example ETL job with spark-submit on a real Spark standalone cluster (one Master, one Worker with two
# executors) started on this host from one Spark line's jars, fetched from Maven, with that line's HComm bundle:
# one jar and the two settings, the way a user on that line starts it. Everything binds to 127.0.0.1 and is stopped
# at the end.
#
#   examples/standalone-cluster.sh [--spark 3.5|4.0|4.1|4.2] [--scala 2.12|2.13] [--jars-only] [--compare] [events]
#
#   --spark      the Spark line (default 4.2)
#   --scala      the Scala binary version (default 2.13; 2.12 exists only for 3.5)
#   --jars-only  pass the bundle with --jars alone, also on 3.5, to see what a 3.5 user who does that is told
#   --compare    then run the job again on the same cluster with Spark's own shuffle (no jar, no settings) and fail
#                unless both answers are identical
#   events       the job's size (default 1000000)
#
# Each spark-submit may take 5 minutes at most (then it is stopped and the script fails), and the script fails when
# any JVM of the cluster outlives it.
#
# Activation per line (what the script passes to spark-submit):
#   4.0, 4.1, 4.2:  --jars hcomm-spark<line>_2.13-<version>.jar
#   3.5:            --conf spark.driver.extraClassPath=/abs/hcomm-spark3.5_<scala>-<version>.jar
#                   --conf spark.executor.extraClassPath=/abs/hcomm-spark3.5_<scala>-<version>.jar
#   and on every line:
#                   --conf spark.plugins=org.apache.spark.shuffle.hcomm.HcommShufflePlugin
#                   --conf spark.shuffle.manager=org.apache.spark.shuffle.hcomm.HcommShuffleManager
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
# shellcheck source=../spark-plugin/spark-lines.sh
. "$root/spark-plugin/spark-lines.sh"
usage() { sed -n '2,/^set /{/^#/p}' "$0" | sed 's/^# \{0,1\}//'; exit "$1"; }
line=4.2 scala=2.13 jars_only=false compare=false events=1000000
while [ $# -gt 0 ]; do
  case "$1" in
    --spark|--scala) [ $# -ge 2 ] || { echo "$1 needs a value" >&2; usage 2; }
       if [ "$1" = --spark ]; then line="$2"; else scala="$2"; fi; shift 2 ;;
    --jars-only) jars_only=true; shift ;;
    --compare) compare=true; shift ;;
    -h|--help) usage 0 ;;
    [0-9]*) events="$1"; shift ;;
    *) echo "unknown argument: $1" >&2; usage 2 ;;
  esac
done
line_options=$(line_profiles "${line}_${scala}") || usage 2
read -r -a profiles <<< "$line_options"
version=$(sed -n 's:^  <version>\(.*\)</version>$:\1:p' "$root/pom.xml" | head -n 1)
id="spark${line}_${scala}"
work="$root/examples/target/standalone/$id"
spark_home="$work/spark-home"
# every line, the default one too, builds in target/lines/<line>, beside (not over) the default build's output
build="$root/examples/target/lines/$id"
bundle="$root/spark-plugin/target/hcomm-${id}-${version}.jar"
app_jar="$build/hcomm-examples-${version}.jar"
export SPARK_HOME="$spark_home" SPARK_LOCAL_IP=127.0.0.1 SPARK_SCALA_VERSION="$scala"
# the Maven and local repository of a calling build (spark-plugin/cross-line.sh), else the one on the PATH
mvn_cmd=("${MVN:-mvn}")
[ -z "${MVN_REPO_LOCAL:-}" ] || mvn_cmd+=(-Dmaven.repo.local="$MVN_REPO_LOCAL")

echo "== building the Spark $line (Scala $scala) bundle and the example jar, and collecting that line's Spark jars"
rm -rf "$spark_home/jars"
mkdir -p "$spark_home/jars" "$work/logs"
(cd "$root" && "${mvn_cmd[@]}" -B -q "${profiles[@]}" -Dline.build.subdir="/lines/$id" -pl examples -am -DskipTests \
    package dependency:copy-dependencies \
    -DincludeScope=provided -DexcludeGroupIds=org.hcomm.shuffle -DoutputDirectory="$spark_home/jars")
ls "$spark_home/jars"/spark-core_"$scala"-*.jar > /dev/null
echo "   bundle: $bundle"
echo "   Spark:  $(basename "$(ls "$spark_home/jars"/spark-core_"$scala"-*.jar)")"
cp="$spark_home/jars/*"
# the options Spark's launcher adds on Java 17 (bin/spark-submit would; this script starts the JVMs itself)
opens=(-XX:+IgnoreUnrecognizedVMOptions --add-opens=java.base/java.lang=ALL-UNNAMED --add-opens=java.base/java.lang.invoke=ALL-UNNAMED
  --add-opens=java.base/java.lang.reflect=ALL-UNNAMED --add-opens=java.base/java.io=ALL-UNNAMED
  --add-opens=java.base/java.net=ALL-UNNAMED --add-opens=java.base/java.nio=ALL-UNNAMED
  --add-opens=java.base/java.util=ALL-UNNAMED --add-opens=java.base/java.util.concurrent=ALL-UNNAMED
  --add-opens=java.base/java.util.concurrent.atomic=ALL-UNNAMED --add-opens=java.base/sun.nio.ch=ALL-UNNAMED
  --add-opens=java.base/sun.nio.cs=ALL-UNNAMED --add-opens=java.base/sun.security.action=ALL-UNNAMED
  --add-opens=java.base/sun.util.calendar=ALL-UNNAMED --add-opens=java.base/jdk.internal.ref=ALL-UNNAMED)
java_opts=(-Xmx512m "${opens[@]}" -cp "$cp")
for port in 7177 18180 18181; do
  if (exec 3<>"/dev/tcp/127.0.0.1/$port") 2>/dev/null; then
    echo "port $port on 127.0.0.1 is taken (another cluster of this script still running?)" >&2; exit 1
  fi
done

pids=()
cleanup() { for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done; wait 2>/dev/null || true; pids=(); }
trap cleanup EXIT
# every JVM of this cluster (Master, Worker, executors) has this line's jars directory on its command line
leftovers() { pgrep -f -- "$spark_home/jars" || true; }

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

# submit NAME [spark-submit options...]: the example job, at most 5 minutes, its output in logs/NAME.log
submit() {
  local name="$1"
  shift
  timeout --kill-after=10 300 java -Xmx1g "${opens[@]}" -cp "$driver_cp" org.apache.spark.deploy.SparkSubmit \
    --master spark://127.0.0.1:7177 --deploy-mode client \
    --class org.hcomm.shuffle.examples.EtlPipelineJob \
    --executor-memory 1g --executor-cores 1 --total-executor-cores 2 \
    --conf spark.executorEnv.SPARK_SCALA_VERSION="$scala" "$@" \
    "$app_jar" --submitted "$events" 2>&1 | tee "$work/logs/$name.log" | grep -v -E "^[0-9/: ]+ (INFO|WARN) "
  local rc=${PIPESTATUS[0]}
  [ "$rc" -ne 124 ] || echo "== spark-submit did not end within 5 minutes and was stopped"
  echo "== spark-submit exited with $rc (driver log: $work/logs/$name.log)"
  return "$rc"
}

driver_cp="$cp"
if [ "$line" = 3.5 ] && [ "$jars_only" = false ]; then
  # Spark 3.5 creates the shuffle manager before it fetches --jars: the bundle goes on every JVM's class path.
  # bin/spark-submit applies spark.driver.extraClassPath to the driver JVM it starts; started by hand, the driver
  # gets it on its own class path here.
  activation=(--conf spark.driver.extraClassPath="$bundle" --conf spark.executor.extraClassPath="$bundle")
  driver_cp="$bundle:$cp"
  echo "== spark-submit with the HComm shuffle (two --conf lines; on Spark 3.5 the bundle on extraClassPath)"
else
  activation=(--jars "$bundle")
  echo "== spark-submit with the HComm shuffle (two --conf lines, the bundle with --jars)"
fi
set +e
submit hcomm "${activation[@]}" \
  --conf spark.plugins=org.apache.spark.shuffle.hcomm.HcommShufflePlugin \
  --conf spark.shuffle.manager=org.apache.spark.shuffle.hcomm.HcommShuffleManager
rc=$?
if [ "$rc" -eq 0 ] && [ "$compare" = true ]; then
  echo "== the same job with Spark's own shuffle (no jar, no settings), for the answer"
  driver_cp="$cp"
  submit builtin
  rc=$?
  answer() { sed -n "s/.*($1 shuffle): .*, checksum \([0-9a-f]*\) ===$/\1/p" "$work/logs/$2.log" | tail -n 1; }
  hcomm_sum=$(answer HComm hcomm) builtin_sum=$(answer built-in builtin)
  if [ "$rc" -eq 0 ] && [ -n "$hcomm_sum" ] && [ "$hcomm_sum" = "$builtin_sum" ]; then
    echo "== answers identical: HComm $hcomm_sum, built-in $builtin_sum"
  else
    echo "== answers differ or missing: HComm '$hcomm_sum', built-in '$builtin_sum'"
    rc=1
  fi
fi
set -e
cleanup
for _ in $(seq 1 40); do [ -z "$(leftovers)" ] && break; sleep 0.5; done
left=$(leftovers)
if [ -n "$left" ]; then
  echo "== processes of the cluster still running 20 s after it was stopped (killed now):"
  ps -o pid,args -p "$(echo "$left" | paste -sd,)" | cut -c1-200
  kill -9 $left 2>/dev/null || true
  exit 1
fi
echo "== the Master, the Worker and every executor JVM are gone"
exit "$rc"
