#!/usr/bin/env bash
# Runs an example job (the ETL job, or the ML job with --job ml) with spark-submit on a real Spark standalone cluster
# (one Master, one Worker with two executors) started on this host from one Spark line's jars, fetched from Maven,
# with that line's HComm bundle: one jar and the two settings, the way a user on that line starts it. Everything binds
# to 127.0.0.1 and is stopped at the end.
#
#   examples/standalone-cluster.sh [--spark 3.5|4.0|4.1|4.2] [--scala 2.12|2.13] [--job etl|ml] [--jars-only]
#                                  [--jars-refused] [--deploy-mode client|cluster] [--compare] [events]
#
#   --spark      the Spark line (default 4.2)
#   --scala      the Scala binary version (default 2.13; 2.12 exists only for 3.5)
#   --job        the example job: etl (EtlPipelineJob, the default) or ml (MlPipelineJob: DataFrame features, a
#                click model and ALS; its MLlib jars come with the line's Spark jars, at spark.mllib.version of the
#                root pom: the line's release, or on 3.5/2.13, 4.0 and 4.1 the nearest earlier one served)
#   --jars-only  pass the bundle with --jars alone, also on 3.5, to see what a 3.5 user who does that is told
#   --jars-refused  (3.5 only) first submit the job with the bundle by --jars alone on the same cluster and fail
#                unless it is refused with the advice, then run it as a 3.5 user must
#   --deploy-mode  client (the default: the driver is spark-submit's JVM) or cluster (the Worker starts the driver; it
#                then has three cores: one for the driver, two for the executors)
#   --compare    then run the job again on the same cluster with Spark's own shuffle (no jar, no settings) and fail
#                unless both answers are identical (the ML job: identical features, and model metrics within the
#                job's tolerance, a relative 1e-6: MlPipelineJob.METRIC_TOLERANCE)
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
# shellcheck source=cluster-lib.sh
. "$root/examples/cluster-lib.sh"
usage() { sed -n '2,/^set /{/^#/p}' "$0" | sed 's/^# \{0,1\}//'; exit "$1"; }
line=4.2 scala=2.13 job=etl jars_only=false jars_refused=false compare=false events=1000000 deploy_mode=client
while [ $# -gt 0 ]; do
  case "$1" in
    --spark|--scala|--job|--deploy-mode) [ $# -ge 2 ] || { echo "$1 needs a value" >&2; usage 2; }
       case "$1" in --spark) line="$2" ;; --scala) scala="$2" ;; --job) job="$2" ;; *) deploy_mode="$2" ;; esac
       shift 2 ;;
    --jars-only) jars_only=true; shift ;;
    --jars-refused) jars_refused=true; shift ;;
    --compare) compare=true; shift ;;
    -h|--help) usage 0 ;;
    [0-9]*) events="$1"; shift ;;
    *) echo "unknown argument: $1" >&2; usage 2 ;;
  esac
done
line_profiles "${line}_${scala}" > /dev/null || usage 2
case "$deploy_mode" in client|cluster) ;; *) echo "unknown deploy mode '$deploy_mode' (client or cluster)" >&2; usage 2 ;; esac
if [ "$jars_refused" = true ] && { [ "$line" != 3.5 ] || [ "$jars_only" = true ]; }; then
  echo "--jars-refused is for Spark 3.5 without --jars-only (other lines load the bundle from --jars)" >&2; usage 2
fi
case "$job" in
  etl) job_class=org.hcomm.shuffle.examples.EtlPipelineJob ;;
  ml) job_class=org.hcomm.shuffle.examples.MlPipelineJob ;;
  *) echo "unknown job '$job' (etl or ml)" >&2; usage 2 ;;
esac
export SPARK_LOCAL_IP=127.0.0.1
cluster_prepare "$line" "$scala"
java_opts=(-Xmx512m "${opens[@]}" -cp "$cp")
cluster_ports_free 127.0.0.1 7177 18180 18181

pids=()
cleanup() {
  cluster_stop_submit
  for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done; wait 2>/dev/null || true; pids=()
}
trap cleanup EXIT
trap 'exit 130' INT TERM
# every JVM of this cluster (Master, Worker, executors) has this line's jars directory on its command line
leftovers() { pgrep -f -- "$spark_home/jars" || true; }

echo "== starting a standalone Master and Worker on 127.0.0.1"
java "${java_opts[@]}" org.apache.spark.deploy.master.Master --host 127.0.0.1 --port 7177 --webui-port 18180 \
  > "$work/logs/master.log" 2>&1 &
pids+=($!)
worker_cores=2 worker_memory=3g
[ "$deploy_mode" = client ] || worker_cores=3 worker_memory=4g
java "${java_opts[@]}" org.apache.spark.deploy.worker.Worker --host 127.0.0.1 --webui-port 18181 \
  --cores "$worker_cores" --memory "$worker_memory" --work-dir "$work/worker" spark://127.0.0.1:7177 > "$work/logs/worker.log" 2>&1 &
pids+=($!)
cluster_await_log "$work/logs/worker.log" "Successfully registered with master" 60 \
  || { echo "worker did not register"; exit 1; }

driver_cp="$cp"
if [ "$jars_refused" = true ]; then
  echo "== spark-submit with the bundle by --jars alone, which Spark 3.5 cannot load in time: it must be refused"
  rc=0
  deploy_mode=client cluster_submit jars-only spark://127.0.0.1:7177 2 --jars "$bundle" "${hcomm_settings[@]}" || rc=$?
  if [ "$rc" -eq 0 ] || ! grep -q "passed only with --jars cannot be loaded there" "$work/logs/jars-only.log"; then
    echo "== --jars alone was not refused with the advice (exit $rc)"
    exit 1
  fi
  echo "== --jars alone refused with the advice"
fi
if [ "$line" = 3.5 ] && [ "$jars_only" = false ]; then
  # Spark 3.5 creates the shuffle manager before it fetches --jars: the bundle goes on every JVM's class path.
  # bin/spark-submit applies spark.driver.extraClassPath to the driver JVM it starts; started by hand, the driver
  # gets it on its own class path here.
  activation=(--conf spark.driver.extraClassPath="$bundle" --conf spark.executor.extraClassPath="$bundle")
  driver_cp="$bundle:$cp"
  echo "== spark-submit ($deploy_mode deploy mode) with the HComm shuffle (two --conf lines; on Spark 3.5 the bundle on"\
    "extraClassPath)"
else
  activation=(--jars "$bundle")
  echo "== spark-submit ($deploy_mode deploy mode) with the HComm shuffle (two --conf lines, the bundle with --jars)"
fi
set +e
cluster_submit hcomm spark://127.0.0.1:7177 2 "${activation[@]}" "${hcomm_settings[@]}"
rc=$?
if [ "$rc" -eq 0 ] && [ "$compare" = true ]; then
  echo "== the same job with Spark's own shuffle (no jar, no settings), for the answer"
  driver_cp="$cp"
  cluster_submit builtin spark://127.0.0.1:7177 2
  rc=$?
  hcomm_sum=$(cluster_answer HComm hcomm) builtin_sum=$(cluster_answer built-in builtin)
  if [ "$rc" -eq 0 ] && [ -n "$hcomm_sum" ] && [ "$hcomm_sum" = "$builtin_sum" ]; then
    echo "== answers identical: HComm $hcomm_sum, built-in $builtin_sum"
    if [ "$job" = ml ] && ! cluster_model_metrics_agree hcomm builtin 1e-6; then
      rc=1
    fi
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
