#!/usr/bin/env bash
# The cross-line pass of `mvn test` (run by spark-plugin's build after the Spark suites, on the default line only).
# For each Spark line it builds the bridge and the plugin with that line's profiles in a Maven of its own, then:
#   - other lines: the plugin's unit tests, the Spark suites' tests tagged CrossLine (real executor JVMs), the line's
#     bundle, and BundleIT on it (what is inside; a shuffle on two executor JVMs from the bundle alone);
#   - the default line (4.2), whose suites the build itself just ran: its bundle and BundleIT only;
#   - every line but 4.0: examples/standalone-cluster.sh, the example job with spark-submit on a real standalone
#     Master and Worker started from that line's Spark jars, the bundle passed as a user passes it (--jars on 4.x,
#     extraClassPath on 3.5), then again with Spark's own shuffle: the same answer, one-sided bytes, no fallback
#     byte, channels created = destroyed, no JVM left; on 3.5 also the bundle with --jars alone, which must fail at
#     once with the advice. Across lines, the answers must be the same too. On 3.5/2.13 and 4.1 the job is submitted
#     in cluster deploy mode (the Worker starts the driver), on 3.5/2.12 and 4.2 in client mode: both activations
#     (extraClassPath on 3.5, --jars on 4.x) in both deploy modes, at no extra cluster start. 4.0 would submit as 4.2
#     does (--jars, client mode; its bundle is checked by BundleIT), so it is left out: 40 s of the test command.
#   - the default line: examples/multi-host-cluster.sh across two hosts (network namespaces; skipped, saying so,
#     without root): identical answers and one-sided bytes across hosts; then spark-plugin/aarch64-jvm.sh, BundleIT
#     on an emulated arm64 JVM (the doctor, a local-cluster shuffle; skipped, saying so, without root, the arm64 JDK
#     or qemu-user-static).
# Each line's plugin builds in spark-plugin/target/lines/<line>/ and leaves its bundle in spark-plugin/target/ (the
# bridge, the same for every line, builds in native-bridge/target/ again: up to date, unchanged); its whole Maven
# output is in spark-plugin/target/cross-line/<line>.log. Every line runs even when one fails; the exit code is
# non-zero when any failed.
#
#   spark-plugin/cross-line.sh [LINE ...]    LINE: one of spark-lines.sh's (default: $HCOMM_LINES, or all of them)
#   environment: MVN (the mvn to run), MVN_REPO_LOCAL (the local repository to share)
# A line's Maven may take 20 minutes at most, a spark-submit 5 (then they are stopped and the line fails).
set -uo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
# shellcheck source=spark-lines.sh
. "$root/spark-plugin/spark-lines.sh"
mvn="${MVN:-mvn}"
lines=("$@")
[ ${#lines[@]} -gt 0 ] || read -r -a lines <<< "${HCOMM_LINES:-${SPARK_LINES[*]}}"
out="$root/spark-plugin/target/cross-line"
mkdir -p "$out"
repo=()
[ -n "${MVN_REPO_LOCAL:-}" ] && repo=(-Dmaven.repo.local="$MVN_REPO_LOCAL")

# The example job on a real standalone cluster of the line; sets verdict, and the answer's checksum in checksums. On
# the default line the job runs again with Spark's own shuffle on the same cluster and the answers must be identical;
# every other line must give that answer too (checked after the last line), so each line's answer is Spark's own
# shuffle's without a second job per line. On 3.5 the bundle passed by --jars alone must first be refused.
events=300000
declare -A checksums=()
verdict=""
standalone() {
  local line="$1" log="$2" spark="${1%_*}" scala="${1#*_}" options=()
  if [ "$line" = "$DEFAULT_LINE" ]; then options+=(--compare); fi
  if [ "$spark" = 3.5 ]; then options+=(--jars-refused); fi
  local mode=client
  case "$line" in 3.5_2.13|4.1_2.13) mode=cluster ;; esac
  options+=(--deploy-mode "$mode")
  if ! bash "$root/examples/standalone-cluster.sh" --spark "$spark" --scala "$scala" "${options[@]}" "$events" \
      > "$log" 2>&1; then
    verdict="examples/standalone-cluster.sh failed (log: $log)"; return 1
  fi
  metric() { sed -n "s/^  $1 *\([0-9][0-9]*\)\$/\1/p" "$log" | tail -n 1; }
  local sum oneSided fallback created destroyed live
  sum=$(sed -n 's/.*checksum \([0-9a-f]*\) ===$/\1/p' "$log" | head -n 1)
  oneSided=$(metric bytesReadOneSided) fallback=$(metric bytesReadFallback) live=$(metric channelsLive)
  created=$(metric channelsCreated) destroyed=$(metric channelsDestroyed)
  checksums[$line]="$sum"
  verdict="$mode deploy mode: checksum $sum"
  if [ "$line" = "$DEFAULT_LINE" ]; then
    verdict="$verdict = Spark's own shuffle's"
  else
    verdict="$verdict (to be the default line's)"
  fi
  verdict="$verdict, one-sided ${oneSided:-?} B, fallback ${fallback:-?} B, channels ${created:-?} created ="
  verdict="$verdict ${destroyed:-?} destroyed"
  [ "$spark" != 3.5 ] || verdict="$verdict; --jars alone refused with the advice"
  if [ -z "$sum" ] || [ "${oneSided:-0}" -le 0 ] || [ "${fallback:-1}" != 0 ] || [ "${live:-1}" != 0 ] \
      || [ "${created:-0}" -le 0 ] || [ "$created" != "${destroyed:-}" ] \
      || { [ "$line" = "$DEFAULT_LINE" ] && ! grep -q "^== answers identical" "$log"; } \
      || ! grep -q "every executor JVM are gone" "$log"; then
    verdict="$verdict (log: $log)"; return 1
  fi
}

failed=()
summary="$out/summary.txt"
: > "$summary"
echo "== cross-line pass: ${lines[*]} (logs in $out)"
for line in "${lines[@]}"; do
  profiles="$(line_profiles "$line")" || exit 2
  log="$out/$line.log"
  if [ "$line" = "$DEFAULT_LINE" ]; then
    # the default line: its suites ran in the calling build; only its bundle, built beside the calling build's output
    tests=(-Dline.build.subdir="/lines/spark$line" -Dtest=none
           -Dsurefire.failIfNoSpecifiedTests=false -Dscalatest.skip=true)
  else
    tests=(-DtagsToInclude=org.apache.spark.shuffle.hcomm.CrossLine)
  fi
  start=$(date +%s)
  # shellcheck disable=SC2086 # profiles are separate words
  timeout --kill-after=30 1200 "$mvn" -B -f "$root/pom.xml" -pl native-bridge,spark-plugin $profiles "${repo[@]}" \
    -Dbridge.tests.skip=true -Dcrossline.skip=true "${tests[@]}" verify > "$log" 2>&1
  rc=$?
  job="not run"
  failed_log="$log"
  if [ $rc -eq 0 ] && [ "$line" = 4.0_2.13 ]; then
    job="not run on 4.0 (--jars in client mode as on 4.2, cluster mode on 4.1)"
  elif [ $rc -eq 0 ]; then
    failed_log="$out/$line.standalone.log"
    standalone "$line" "$failed_log" && job="$verdict" || { rc=1; job="FAILED: $verdict"; }
  fi
  secs=$(( $(date +%s) - start ))
  suites=$(grep -E "^Tests: succeeded" "$log" | tail -n 1 \
    | sed -E 's/Tests: succeeded ([0-9]+), failed ([0-9]+).*/\1 passed, \2 failed/')
  bundle=$(grep -E "Tests run: [0-9]+, .*in org.apache.spark.shuffle.hcomm.BundleIT" "$log" | tail -n 1 \
    | sed -E 's/.*Tests run: ([0-9]+), Failures: ([0-9]+), Errors: ([0-9]+).*/\1 run, \2 failed, \3 errors/')
  status=PASS
  [ $rc -eq 0 ] || { status=FAIL; failed+=("$line"); }
  printf '%-9s %s in %dm%02ds | Spark suites (CrossLine): %s | BundleIT: %s | standalone: %s\n' "$line" "$status" \
    $((secs / 60)) $((secs % 60)) "${suites:-not run}" "${bundle:-not run}" "$job" | tee -a "$summary"
  # each test's line, and under a failed one its message (the last lines of the log rarely hold it)
  awk '/^- / { print; if (/\*\*\* FAILED \*\*\*/) { getline; print } }' "$log" | sed 's/^/    /'
  if [ $rc -ne 0 ]; then
    echo "---- last 80 lines of $failed_log"
    tail -n 80 "$failed_log"
    echo "----"
  fi
done
# the default line's example job across two hosts (network namespaces), as the README gives it; needs root
if [[ " ${lines[*]} " == *" $DEFAULT_LINE "* ]]; then
  mh="$out/multi-host.log"
  if [ "$(id -u)" != 0 ]; then
    echo "multi-host skipped: examples/multi-host-cluster.sh needs root to create the hosts" | tee -a "$summary"
  elif timeout --kill-after=30 600 bash "$root/examples/multi-host-cluster.sh" --hosts 2 300000 > "$mh" 2>&1; then
    echo "multi-host PASS | $(grep -E '^HComm one-sided bytes' "$mh")" | tee -a "$summary"
  else
    echo "multi-host FAIL (log: $mh)" | tee -a "$summary"
    tail -n 40 "$mh"
    failed+=("multi-host")
  fi
  # BundleIT on an arm64 JVM under qemu-user; one line: PASS, FAIL or skipped (the last lines of its log on stderr)
  bash "$root/spark-plugin/aarch64-jvm.sh" | tee -a "$summary"
  [ "${PIPESTATUS[0]}" -eq 0 ] || failed+=("aarch64-jvm")
fi
distinct=$(printf '%s\n' "${checksums[@]}" | sort -u | grep -c .)
if [ "$distinct" -gt 1 ]; then
  echo "== the example job's answers differ between lines:"
  for l in "${!checksums[@]}"; do echo "   $l ${checksums[$l]}"; done
  failed+=("answers")
fi
if [ ${#failed[@]} -gt 0 ]; then
  echo "== cross-line pass FAILED on: ${failed[*]}"
  exit 1
fi
echo "== cross-line pass: every line passed"
