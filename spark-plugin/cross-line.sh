#!/usr/bin/env bash
# The cross-line pass of `mvn test` (run by spark-plugin's build after the Spark suites, on the default line only).
# For each Spark line it builds the bridge and the plugin with that line's profiles in a Maven of its own, then:
#   - other lines: the plugin's unit tests, the Spark suites' tests tagged CrossLine (real executor JVMs), the line's
#     bundle, and BundleIT on it (what is inside; a shuffle on two executor JVMs from the bundle alone);
#   - the default line (4.2), whose suites the build itself just ran: its bundle and BundleIT only.
# Each line builds in spark-plugin/target/lines/<line>/ and leaves its bundle in spark-plugin/target/; its whole
# Maven output is in spark-plugin/target/cross-line/<line>.log. Every line runs even when one fails; the exit code
# is non-zero when any failed.
#
#   spark-plugin/cross-line.sh [LINE ...]      LINE: 3.5_2.12 3.5_2.13 4.0 4.1 4.2 (default: $HCOMM_LINES, or all)
#   environment: MVN (the mvn to run), MVN_REPO_LOCAL (the local repository to share)
set -uo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
mvn="${MVN:-mvn}"
lines=("$@")
[ ${#lines[@]} -gt 0 ] || read -r -a lines <<< "${HCOMM_LINES:-3.5_2.12 3.5_2.13 4.0 4.1 4.2}"
out="$root/spark-plugin/target/cross-line"
mkdir -p "$out"
repo=()
[ -n "${MVN_REPO_LOCAL:-}" ] && repo=(-Dmaven.repo.local="$MVN_REPO_LOCAL")

profiles_of() {
  case "$1" in
    3.5_2.12) echo "-Pspark-3.5 -Pscala-2.12" ;;
    3.5_2.13) echo "-Pspark-3.5" ;;
    4.0) echo "-Pspark-4.0" ;;
    4.1) echo "-Pspark-4.1" ;;
    4.2) echo "" ;;
    *) return 1 ;;
  esac
}

failed=()
summary="$out/summary.txt"
: > "$summary"
echo "== cross-line pass: ${lines[*]} (logs in $out)"
for line in "${lines[@]}"; do
  if ! profiles="$(profiles_of "$line")"; then
    echo "unknown Spark line '$line' (known: 3.5_2.12 3.5_2.13 4.0 4.1 4.2)" >&2
    exit 2
  fi
  log="$out/$line.log"
  if [ "$line" = 4.2 ]; then
    # the default line: its suites ran in the calling build; only its bundle, built where it cannot disturb it
    tests=(-Dline.build.dir="$root/spark-plugin/target/lines/spark4.2_2.13" -Dtest=none
           -Dsurefire.failIfNoSpecifiedTests=false -Dscalatest.skip=true)
  else
    tests=(-DtagsToInclude=org.apache.spark.shuffle.hcomm.CrossLine)
  fi
  start=$(date +%s)
  # shellcheck disable=SC2086 # profiles are separate words
  "$mvn" -B -f "$root/pom.xml" -pl native-bridge,spark-plugin $profiles "${repo[@]}" -Dbridge.tests.skip=true \
    -Dcrossline.skip=true "${tests[@]}" verify > "$log" 2>&1
  rc=$?
  secs=$(( $(date +%s) - start ))
  suites=$(grep -E "^Tests: succeeded" "$log" | tail -n 1 \
    | sed -E 's/Tests: succeeded ([0-9]+), failed ([0-9]+).*/\1 passed, \2 failed/')
  bundle=$(grep -E "Tests run: [0-9]+, .*in org.apache.spark.shuffle.hcomm.BundleIT" "$log" | tail -n 1 \
    | sed -E 's/.*Tests run: ([0-9]+), Failures: ([0-9]+), Errors: ([0-9]+).*/\1 run, \2 failed, \3 errors/')
  status=PASS
  [ $rc -eq 0 ] || { status=FAIL; failed+=("$line"); }
  printf '%-9s %s in %dm%02ds | Spark suites (CrossLine): %s | BundleIT: %s\n' "$line" "$status" $((secs / 60)) \
    $((secs % 60)) "${suites:-not run}" "${bundle:-not run}" | tee -a "$summary"
  grep -E "^- .*|\*\*\* FAILED \*\*\*" "$log" | sed 's/^/    /'
  if [ $rc -ne 0 ]; then
    echo "---- last 80 lines of $log"
    tail -n 80 "$log"
    echo "----"
  fi
done
if [ ${#failed[@]} -gt 0 ]; then
  echo "== cross-line pass FAILED on: ${failed[*]}"
  exit 1
fi
echo "== cross-line pass: every line passed"
