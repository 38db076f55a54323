#!/usr/bin/env bash
# Runs ReadThroughputBenchmark (HcommReadOnThread over shm and tcp between two JVMs, and an in-process memcpy
# baseline) and prints a Markdown table of GB/s. Any arguments are JMH options, e.g.
#   benchmarks/run-read-benchmark.sh -f 1 -wi 2 -i 3 -p size=1048576,67108864
# Set BUILD=1 to (re)build target/benchmarks.jar first (offline Maven, tests skipped).
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
jar="$here/target/benchmarks.jar"
if [[ "${BUILD:-0}" == 1 || ! -f "$jar" ]]; then
  (cd "$here/.." && mvn -q -pl benchmarks -am package -Dmaven.test.skip=true)
fi
has_rff=0
for a in "$@"; do [[ "$a" == -rff ]] && has_rff=1; done
extra=()
if [[ $has_rff == 0 ]]; then extra=(-rff "$here/target/read-throughput.json"); fi
exec java -Dorg.slf4j.simpleLogger.defaultLogLevel=warn -cp "$jar" \
  org.hcomm.shuffle.benchmarks.ReadThroughputReport "${extra[@]}" "$@"
