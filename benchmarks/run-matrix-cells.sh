#!/usr/bin/env bash
# Runs cells of the full A/B matrix one Maven invocation each, into one resumable output directory, and starts a
# cell only if its estimated duration ends before a deadline (a half-run cell is thrown away and run again by
# the next invocation, because a cell's runs alternate within one invocation).
#
#   CELLS="4g:2:java:tpch 4g:2:java:join" DEADLINE=$(date -d '+150 min' +%s) \
#     OUT=/work/ab-full SRC=/work/bench-wt SAVE=results/full benchmarks/run-matrix-cells.sh
#
# CELLS     size:executors:serializer:workload, run in that order
# DEADLINE  epoch seconds (default: no deadline)
# OUT       the suite's -Dab.out (absolute; keep it outside target/)
# SRC       the checkout Maven runs in (default: this one); pin it with `git worktree add --detach DIR COMMIT`
# SAVE      optional directory the finished cells' run files, settings and summaries are copied to after each cell
#           (the output directory does not outlive a sitting on every machine; a copy in the repository does)
# STOP      a file whose existence stops the loop before the next cell (default: OUT/stop)
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
: "${CELLS:?CELLS=\"size:executors:serializer:workload ...\"}"
: "${OUT:?OUT=absolute output directory}"
SRC="${SRC:-$here/..}"
DEADLINE="${DEADLINE:-0}"
STOP="${STOP:-$OUT/stop}"

# Minutes a 4 GB cell took on the 2-core machine of docs/BENCHMARKS.md, rounded up; 1 GB cells take about a quarter.
# Slow sittings of that machine took 1.5-2.5x these (4 GB / 4x TPC-H: about 180 min), so a DEADLINE check can pass
# for a cell that then outlasts the sitting; the suite keeps its complete repetitions for the next.
estimate_minutes() { # workload executors size
  local m
  case "$1:$2" in
    tpch:2) m=75 ;; tpch:*) m=90 ;;
    join:*) m=36 ;; terasort:*) m=24 ;; aggregation:*) m=22 ;; remote-read:*) m=13 ;;
    *) m=40 ;;
  esac
  [[ "$3" == 4g ]] || m=$(( (m + 3) / 4 ))
  echo "$m"
}

save() {
  [[ -n "${SAVE:-}" ]] || return 0
  # A mirror of the output directory's runs: the suite deletes the files of a cell's incomplete repetition before
  # running it again, and a copy must not keep them.
  rm -rf "$SAVE/runs"
  mkdir -p "$SAVE/runs"
  cp "$OUT/settings.txt" "$SAVE/"
  find "$OUT/runs" -maxdepth 1 -name "*.json" -exec cp -t "$SAVE/runs/" {} +
  cp "$OUT"/summary-*.md "$SAVE/" 2>/dev/null || true
}

for cell in $CELLS; do
  IFS=: read -r size executors serializer workload <<< "$cell"
  if [[ -e "$STOP" ]]; then echo "$(date -Is) stop file $STOP: not starting $cell"; break; fi
  minutes=$(estimate_minutes "$workload" "$executors" "$size")
  if (( DEADLINE > 0 && $(date +%s) + minutes * 60 > DEADLINE )); then
    echo "$(date -Is) $cell (~$minutes min) would end after the deadline: not started"; continue
  fi
  log="$OUT/logs/$size-$executors-$serializer-$workload.log"
  mkdir -p "$OUT/logs"
  echo "$(date -Is) start $cell (~$minutes min), log $log"
  if (cd "$SRC" && mvn -B -Pshuffle-ab -pl benchmarks -am -DskipTests verify -Dab.preset=full \
        -Dab.sizes="$size" -Dab.executors="$executors" -Dab.serializers="$serializer" -Dab.workloads="$workload" \
        -Dab.out="$OUT" -Dab.resume=true) > "$log" 2>&1; then
    echo "$(date -Is) done $cell"
  else
    # a failed run, or an invocation stopped between runs; either way the cell's complete repetitions are kept
    echo "$(date -Is) $cell did not complete: exit $? (see $log); its complete repetitions are kept for a resume"
  fi
  save
done
