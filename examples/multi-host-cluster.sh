#!/usr/bin/env bash
# Runs the example ETL job across several hosts on this one machine: each host is a Linux network namespace with
# its own address (examples/netns-hosts.sh, set "s": 198.18.115.0/24), running one Spark standalone Worker bound to
# it, whose executors inherit it. The Master and the driver stay in the root namespace, on the hosts' bridge. The
# job runs twice on that cluster, with Spark's built-in shuffle and with the HComm shuffle (the bundle and its two
# settings, as a user passes them), and the script prints both times, whether the answers are identical, and the
# HComm metrics, among them the bytes read one-sidedly across hosts (soft HComm's soft NIC, over the namespaces'
# links) and within a host (shared memory).
#
#   examples/multi-host-cluster.sh [--hosts N] [--executors-per-host M] [--link-rate RATE] [--link-delay RTT]
#                                  [events]
#
#   --hosts               hosts (namespaces), default 2
#   --executors-per-host  executors of 1 core and 1 GB per host, default 1
#   --link-rate           shape every host's link to RATE in both directions with tc tbf (e.g. 1gbit, 10gbit);
#                         default: not shaped
#   --link-delay          add RTT to the round trip between two hosts (e.g. 0.2ms, 2ms): every host's link delays
#                         each frame by RTT/4 in each direction (netns-hosts.sh "link I delay", a user-space
#                         forwarder per host), so host to host the RTT grows by RTT and root (Master, driver) to
#                         host by RTT/2; default: no delay. Composes with --link-rate
#   events                the job's size (default 1000000)
#
# Needs root and iproute2 (it says so and exits 1 without them). Every namespace, link and process it creates is
# removed at the end, on failure and on Ctrl-C too; what a killed run left is removed at the start. It fails unless
# the answers are identical, HComm read bytes across hosts one-sidedly, nothing fell back to Spark's fetch, and
# every process of the cluster is gone afterwards. Spark 4.2 (the default build's line). It shares its build directory
# with examples/standalone-cluster.sh: run one of them at a time.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
usage() { sed -n '2,/^set /{/^#/p}' "$0" | sed 's/^# \{0,1\}//'; exit "$1"; }
hosts=2 per_host=1 rate="" delay="" events=1000000
positive() { [[ "$2" =~ ^[0-9]+$ ]] && [ "$2" -ge 1 ] || { echo "$1 needs a positive number, got '$2'" >&2; usage 2; }; }
while [ $# -gt 0 ]; do
  case "$1" in
    --hosts|--executors-per-host|--link-rate|--link-delay)
      [ $# -ge 2 ] || { echo "$1 needs a value" >&2; usage 2; }
      case "$1" in
        --hosts) positive "$1" "$2"; hosts="$2" ;;
        --executors-per-host) positive "$1" "$2"; per_host="$2" ;;
        --link-rate) [[ "${2,,}" =~ ^[0-9]+(bit|kbit|mbit|gbit)$ ]] \
                       || { echo "--link-rate like 1gbit or 10gbit, got '$2'" >&2; usage 2; }; rate="$2" ;;
        --link-delay) [[ "$2" =~ ^[0-9]+(\.[0-9]+)?(us|ms)$ ]] \
                        || { echo "--link-delay like 0.2ms, 2ms or 500us, got '$2'" >&2; usage 2; }; delay="$2" ;;
      esac
      shift 2 ;;
    -h|--help) usage 0 ;;
    [0-9]*) events="$1"; shift ;;
    *) echo "unknown argument: $1" >&2; usage 2 ;;
  esac
done
[ "$hosts" -le 20 ] || { echo "--hosts: at most 20" >&2; exit 2; }
netns="$root/examples/netns-hosts.sh"
"$netns" check || { echo "multi-host-cluster: needs root and iproute2 to create the hosts; not run" >&2; exit 1; }

# shellcheck source=cluster-lib.sh
. "$root/examples/cluster-lib.sh"
cluster_prepare 4.2 2.13
work="$work/multi-host"
mkdir -p "$work/logs"
executors=$((hosts * per_host))

master_pid=""
cleanup() {
  trap '' INT TERM # a second Ctrl-C must not cut the cleanup short
  set +e
  cluster_stop_submit
  [ -z "$master_pid" ] || kill "$master_pid" 2> /dev/null || true
  "$netns" s down  # kills every process in the hosts' namespaces (Workers, executors), removes namespaces and links
  wait 2> /dev/null || true
}
trap cleanup EXIT
trap 'exit 130' INT TERM

echo "== creating $hosts hosts (network namespaces) on a bridge"
"$netns" s up "$hosts" | tee "$work/logs/hosts.txt"
root_addr=$(awk '$1 == "root" {print $2}' "$work/logs/hosts.txt")
# what a killed run left in the root namespace: its Master and its driver, bound to this set's root address
pkill -f -- "deploy.master.Master --host $root_addr " 2> /dev/null || true
pkill -f -- "spark.driver.host=$root_addr" 2> /dev/null || true
if [ -n "$rate" ]; then
  for i in $(seq 1 "$hosts"); do "$netns" s link "$i" rate "$rate"; done
  echo "   every host's link shaped to $rate (tc tbf, both directions)"
fi
if [ -n "$delay" ]; then
  # one way, per link: a quarter of the round trip between two hosts (each crosses two links, each way)
  one_way=$(awk -v d="$delay" 'BEGIN { v = d + 0; if (d ~ /ms$/) v *= 1000; printf "%gus", v / 4 }')
  for i in $(seq 1 "$hosts"); do "$netns" s link "$i" delay "$one_way"; done
  echo "   every host's link delayed by $one_way each way: host to host RTT +$delay, root to host +$(awk \
    -v d="$delay" 'BEGIN { v = d + 0; printf "%g%s", v / 2, (d ~ /ms$/ ? "ms" : "us") }')"
fi
cluster_ports_free "$root_addr" 7177 18180

export SPARK_LOCAL_IP="$root_addr"
java_opts=(-Xmx512m "${opens[@]}" -cp "$cp")
echo "== starting the Master on $root_addr (root namespace) and one Worker per host"
java "${java_opts[@]}" org.apache.spark.deploy.master.Master --host "$root_addr" --port 7177 --webui-port 18180 \
  > "$work/logs/master.log" 2>&1 &
master_pid=$!
cluster_await_log "$work/logs/master.log" "I have been elected leader" 60 || { echo "the Master did not start"; exit 1; }
while read -r kind i ns addr; do
  [ "$kind" = host ] || continue
  # the Worker and the executors it launches are this host: they bind to its address, in its namespace
  "$netns" s exec "$i" env SPARK_LOCAL_IP="$addr" java "${java_opts[@]}" org.apache.spark.deploy.worker.Worker \
    --host "$addr" --webui-port 18181 --cores "$per_host" --memory "$((per_host * 1280))m" \
    --work-dir "$work/worker-$i" "spark://$root_addr:7177" > "$work/logs/worker-$i.log" 2>&1 &
  disown  # its namespace owns it: cleanup kills it there (and bash does not report the kill)
  echo "   host $i: $ns $addr"
done < "$work/logs/hosts.txt"
for i in $(seq 1 "$hosts"); do
  cluster_await_log "$work/logs/worker-$i.log" "Successfully registered with master" 60 \
    || { echo "the Worker of host $i did not register"; exit 1; }
done

driver_cp="$cp"
master="spark://$root_addr:7177"
driver_conf=(--conf spark.driver.host="$root_addr" --conf spark.driver.bindAddress="$root_addr")
set +e
echo "== the job with Spark's built-in shuffle ($hosts hosts x $per_host executors)"
cluster_submit builtin "$master" "$executors" "${driver_conf[@]}"
rc=$?
if [ "$rc" -eq 0 ]; then
  echo "== the job with the HComm shuffle (the bundle with --jars and the two settings)"
  cluster_submit hcomm "$master" "$executors" "${driver_conf[@]}" --jars "$bundle" "${hcomm_settings[@]}" \
    --conf spark.shuffle.hcomm.fallback=never
  rc=$?
fi
set -e
metric() { sed -n "s/^  $1 *\([0-9]*\)$/\1/p" "$work/logs/hcomm.log" | tail -n 1; }
if [ "$rc" -eq 0 ]; then
  hcomm_sum=$(cluster_answer HComm hcomm) builtin_sum=$(cluster_answer built-in builtin)
  echo
  echo "=== $hosts hosts x $per_host executors, links ${rate:-not shaped}${delay:+, RTT +$delay}, $events events ==="
  echo "built-in shuffle: $(cluster_seconds built-in builtin) s, checksum $builtin_sum"
  echo "HComm shuffle:    $(cluster_seconds HComm hcomm) s, checksum $hcomm_sum"
  echo "HComm one-sided bytes: across hosts $(metric bytesReadCrossHost), within a host $(metric bytesReadWithinHost)," \
    "fallback $(metric bytesReadFallback)"
  if [ -z "$hcomm_sum" ] || [ "$hcomm_sum" != "$builtin_sum" ]; then
    echo "answers differ or missing"; rc=1
  elif [ "${hosts}" -gt 1 ] && [ "$(metric bytesReadCrossHost)" -le 0 ] 2> /dev/null; then
    echo "HComm read nothing across hosts"; rc=1
  elif [ "${hosts}" -gt 1 ] && [ -z "$(metric bytesReadCrossHost)" ]; then
    echo "the job printed no bytesReadCrossHost metric"; rc=1
  else
    echo "answers identical: OK"
  fi
fi
cleanup
master_pid=""
trap - EXIT
# JVMs killed by the cleanup may take a moment to be gone
for _ in $(seq 1 40); do [ -z "$(pgrep -f -- "$spark_home/jars" || true)" ] && break; sleep 0.5; done
left=$(pgrep -f -- "$spark_home/jars" || true)
left="$left$(pgrep -f -- ' hcxsh[0-9]+ hcxsh[0-9]+f$' || true)"  # the links' forwarders (--link-delay)
if [ -n "$left" ] || ip netns list | grep -q '^hcxs-'; then
  echo "== left behind: processes '${left}', namespaces '$(ip netns list | grep '^hcxs-' | tr '\n' ' ')'"
  exit 1
fi
echo "== the Master, every Worker and executor, the namespaces, links and forwarders are gone"
exit "$rc"
