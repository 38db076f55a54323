# Shared by examples/standalone-cluster.sh and examples/multi-host-cluster.sh (sourced, not run): building one
# Spark line's bundle, example jar and Spark jars, the JVM options Spark's launcher would add, and submitting the
# example job. Expects $root (the checkout) and sets the variables below.

# shellcheck source=../spark-plugin/spark-lines.sh
. "$root/spark-plugin/spark-lines.sh"

# cluster_prepare LINE SCALA: builds the line's bundle and example jar and collects its Spark jars. Sets version,
# id, work, spark_home, bundle, app_jar, cp (the Spark class path), opens (the --add-opens options).
cluster_prepare() {
  local line="$1" scala="$2" line_options profiles
  line_options=$(line_profiles "${line}_${scala}") || return 2
  read -r -a profiles <<< "$line_options"
  version=$(sed -n 's:^  <version>\(.*\)</version>$:\1:p' "$root/pom.xml" | head -n 1)
  id="spark${line}_${scala}"
  work="$root/examples/target/standalone/$id"
  spark_home="$work/spark-home"
  # every line, the default one too, builds in target/lines/<line>, beside (not over) the default build's output
  local build="$root/examples/target/lines/$id"
  bundle="$root/spark-plugin/target/hcomm-${id}-${version}.jar"
  app_jar="$build/hcomm-examples-${version}.jar"
  export SPARK_HOME="$spark_home" SPARK_SCALA_VERSION="$scala"
  # the Maven and local repository of a calling build (spark-plugin/cross-line.sh), else the one on the PATH
  local mvn_cmd=("${MVN:-mvn}")
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
  # the options Spark's launcher adds on Java 17 (bin/spark-submit would; these scripts start the JVMs themselves)
  opens=(-XX:+IgnoreUnrecognizedVMOptions --add-opens=java.base/java.lang=ALL-UNNAMED
    --add-opens=java.base/java.lang.invoke=ALL-UNNAMED --add-opens=java.base/java.lang.reflect=ALL-UNNAMED
    --add-opens=java.base/java.io=ALL-UNNAMED --add-opens=java.base/java.net=ALL-UNNAMED
    --add-opens=java.base/java.nio=ALL-UNNAMED --add-opens=java.base/java.util=ALL-UNNAMED
    --add-opens=java.base/java.util.concurrent=ALL-UNNAMED --add-opens=java.base/java.util.concurrent.atomic=ALL-UNNAMED
    --add-opens=java.base/sun.nio.ch=ALL-UNNAMED --add-opens=java.base/sun.nio.cs=ALL-UNNAMED
    --add-opens=java.base/sun.security.action=ALL-UNNAMED --add-opens=java.base/sun.util.calendar=ALL-UNNAMED
    --add-opens=java.base/jdk.internal.ref=ALL-UNNAMED)
}

# cluster_ports_free HOST PORT...: fails, naming the port, when one is taken
cluster_ports_free() {
  local host="$1" port
  shift
  for port in "$@"; do
    if (exec 3<>"/dev/tcp/$host/$port") 2> /dev/null; then
      echo "port $port on $host is taken (another cluster of these scripts still running?)" >&2
      return 1
    fi
  done
}

# cluster_await_log FILE TEXT SECONDS: waits until FILE contains TEXT
cluster_await_log() {
  local _
  for _ in $(seq 1 "$3"); do
    grep -q "$2" "$1" 2> /dev/null && return 0
    sleep 1
  done
  grep -q "$2" "$1" 2> /dev/null
}

# cluster_submit NAME MASTER EXECUTORS [spark-submit options...]: the example job $job_class (default the ETL job) in
# $deploy_mode (default client) deploy mode with $events events, at most 5 minutes, its output in $work/logs/NAME.log;
# the class path of the driver (client mode) or of spark-submit's client (cluster mode) is $driver_cp. In cluster mode
# the driver runs in a JVM the Worker starts (in $work/worker/driver-*), waited for by spark-submit, and its stdout and
# stderr are appended to the log when it ends.
# It runs in the background and is waited for, so that a script's INT/TERM trap runs at once (bash defers a trap
# until a foreground command ends, and timeout puts the driver in a process group of its own, out of reach of the
# terminal's Ctrl-C); cluster_stop_submit, from the trap's cleanup, stops it.
submit_pid=""
cluster_submit() {
  local name="$1" master="$2" executors="$3"
  shift 3
  local mode_options=()
  if [ "${deploy_mode:-client}" = cluster ]; then
    # the Worker starts the driver JVM: Java 17 needs the options Spark's launcher adds for its own JVMs
    mode_options=(--conf spark.standalone.submit.waitAppCompletion=true --driver-memory 1g
      --conf "spark.driver.extraJavaOptions=${opens[*]}")
  fi
  timeout --kill-after=10 300 java -Xmx1g "${opens[@]}" -cp "$driver_cp" org.apache.spark.deploy.SparkSubmit \
    --master "$master" --deploy-mode "${deploy_mode:-client}" "${mode_options[@]}" \
    --class "${job_class:-org.hcomm.shuffle.examples.EtlPipelineJob}" \
    --executor-memory 1g --executor-cores 1 --total-executor-cores "$executors" \
    --conf spark.executorEnv.SPARK_SCALA_VERSION="$SPARK_SCALA_VERSION" "$@" \
    "$app_jar" --submitted "$events" "$executors" \
    > >(tee "$work/logs/$name.log" | grep -v -E "^[0-9/: ]+ (INFO|WARN) ") 2>&1 &
  submit_pid=$!
  local rc=0
  wait "$submit_pid" || rc=$?
  submit_pid=""
  sleep 0.2 # the last lines through tee
  if [ "${deploy_mode:-client}" = cluster ]; then
    local driver_dir
    driver_dir=$(ls -dt "$work"/worker/driver-* 2> /dev/null | head -n 1)
    if [ -n "$driver_dir" ]; then
      echo "== the driver ran in the Worker's $driver_dir; its output:"
      cat "$driver_dir/stdout" "$driver_dir/stderr" >> "$work/logs/$name.log" 2> /dev/null || true
      grep -v -E "^[0-9/: ]+ (INFO|WARN) " "$driver_dir/stdout" || true
    else
      echo "== no driver directory under $work/worker"
    fi
  fi
  [ "$rc" -ne 124 ] || echo "== spark-submit did not end within 5 minutes and was stopped"
  echo "== spark-submit exited with $rc (driver log: $work/logs/$name.log)"
  return "$rc"
}

# cluster_stop_submit: stops a spark-submit still running (timeout passes the signal on to the driver)
cluster_stop_submit() {
  if [ -n "$submit_pid" ]; then
    kill "$submit_pid" 2> /dev/null || true
    wait "$submit_pid" 2> /dev/null || true
    submit_pid=""
  fi
}

# cluster_answer KIND NAME: the checksum the job printed in logs/NAME.log (KIND: HComm or built-in)
cluster_answer() { sed -n "s/.*($1 shuffle): .*, checksum \([0-9a-f]*\) ===$/\1/p" "$work/logs/$2.log" | tail -n 1; }

# cluster_model_metrics_agree NAME1 NAME2 TOLERANCE: whether the ML job's model metrics in logs/NAME1.log and
# logs/NAME2.log ("model metrics: ALS RMSE x, CTR AUC y") differ by at most TOLERANCE relative; says which
cluster_model_metrics_agree() {
  local a b
  a=$(grep -h "^model metrics: " "$work/logs/$1.log" 2> /dev/null | tail -n 1)
  b=$(grep -h "^model metrics: " "$work/logs/$2.log" 2> /dev/null | tail -n 1)
  if [ -n "$a" ] && [ -n "$b" ] && awk -v a="$a" -v b="$b" -v tol="$3" 'BEGIN {
      n = split(a, x, /[ ,]+/); split(b, y, /[ ,]+/)
      for (i = 1; i <= n; i++) if (x[i] ~ /^[0-9.]+$/) {
        d = x[i] - y[i]; if (d < 0) d = -d; m = (x[i] > y[i] ? x[i] : y[i])
        if (m > 0 && d / m > tol) exit 1
      }
    }'; then
    echo "== model metrics within $3 relative: $1 '$a', $2 '$b'"
  else
    echo "== model metrics differ by more than $3 relative or missing: $1 '$a', $2 '$b'"
    return 1
  fi
}

# cluster_seconds KIND NAME: the job's time in seconds
cluster_seconds() { sed -n "s/.*($1 shuffle): \([0-9.]*\) s, checksum .*/\1/p" "$work/logs/$2.log" | tail -n 1; }

# the settings that activate the HComm shuffle on every line
hcomm_settings=(--conf spark.plugins=org.apache.spark.shuffle.hcomm.HcommShufflePlugin
  --conf spark.shuffle.manager=org.apache.spark.shuffle.hcomm.HcommShuffleManager)
