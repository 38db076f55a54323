#!/usr/bin/env bash
# Test hosts on one machine: each "host" is a Linux network namespace with one address, joined to the root
# namespace by a veth pair on a bridge; the root namespace (where the Spark Master and the driver stay) has the
# bridge's address. Addresses come only from the benchmarking range 198.18.0.0/15. Every object is named with the
# prefix "hcx<set>", so a later run removes what a killed one left (`down` first thing in `up`).
#
#   netns-hosts.sh <set> up N            N hosts (1..20); prints "root <addr>" and "host <i> <netns> <addr>" lines
#   netns-hosts.sh <set> down            kills every process in the set's namespaces, removes namespaces and links
#   netns-hosts.sh <set> link I down|up  takes host I's link down or up (both ends of its veth pair)
#   netns-hosts.sh <set> link I rate R   shapes host I's link to rate R in both directions (tc tbf; e.g. 1gbit,
#                                        10gbit, 1mbit); "rate none" removes the shaping
#   netns-hosts.sh <set> remove I        host I dies: every process in it killed at once, its namespace and link removed
#   netns-hosts.sh <set> exec I cmd...   runs cmd in host I's namespace
#   netns-hosts.sh <set> pids I          the processes in host I's namespace
#   netns-hosts.sh check                 exits 0 when this can run here (root, iproute2, namespaces), else says why
#
# <set> is one lower-case letter or digit naming an independent set of hosts (the examples use "s", the tests
# "t", the benchmarks "b"): set c gets subnet 198.18.<n>.0/24 with n the character's code, the root end .1, host
# I .(10+I). This kernel has tbf and htb but no netem: rates can be shaped, delay and loss cannot.
set -euo pipefail

die() { echo "netns-hosts: $*" >&2; exit 2; }

check() {
  [ "$(id -u)" = 0 ] || { echo "netns-hosts: needs root (network namespaces and links are created with ip)" >&2; return 1; }
  command -v ip > /dev/null || { echo "netns-hosts: needs iproute2's ip" >&2; return 1; }
  command -v tc > /dev/null || { echo "netns-hosts: needs iproute2's tc" >&2; return 1; }
  local probe="hcxprobe$$"
  if ! ip netns add "$probe" 2> /dev/null; then
    echo "netns-hosts: cannot create network namespaces here" >&2
    return 1
  fi
  ip netns del "$probe"
}

[ $# -ge 1 ] || die "usage: netns-hosts.sh <set> up N | down | link I down|up|rate R | exec I cmd... | pids I | check"
if [ "$1" = check ]; then check; exit $?; fi
set_id="$1"
shift
[[ "$set_id" =~ ^[a-z0-9]$ ]] || die "a set is one lower-case letter or digit, got '$set_id'"
prefix="hcx$set_id"
subnet_octet=$(printf '%d' "'$set_id")  # 48..57 for digits, 97..122 for letters: inside 198.18.0.0/15
bridge="${prefix}br"
root_addr="198.18.$subnet_octet.1"
ns_name() { echo "${prefix}-h$1"; }
veth_root() { echo "${prefix}h$1"; }     # the bridge's end, in the root namespace
host_addr() { echo "198.18.$subnet_octet.$((10 + $1))"; }

host_index() {
  [[ "${1:-}" =~ ^[0-9]+$ ]] && [ "$1" -ge 1 ] && [ "$1" -le 20 ] || die "host index 1..20, got '${1:-}'"
  ip netns list | grep -q "^$(ns_name "$1")\b" || die "host $1 of set $set_id does not exist"
}

# kill_ns NETNS: kills every process in the namespace (it owns them: Workers, their executors, anything started in
# it), then removes it
kill_ns() {
  local pids
  for _ in 1 2 3 4 5 6 7 8 9 10; do
    pids=$(ip netns pids "$1" 2> /dev/null || true)
    [ -n "$pids" ] || break
    kill -9 $pids 2> /dev/null || true
    sleep 0.2
  done
  ip netns del "$1" 2> /dev/null || true
}

down() {
  local ns
  for ns in $(ip netns list | awk '{print $1}' | grep "^${prefix}-h" || true); do
    kill_ns "$ns"
  done
  local link
  for link in $(ip -o link show | awk -F': ' '{print $2}' | sed 's/@.*//' | grep "^${prefix}" || true); do
    ip link del "$link" 2> /dev/null || true
  done
}

shape() { # shape DEV RATE [NETNS]
  local dev="$1" rate="$2" ns="${3:-}" run=()
  [ -z "$ns" ] || run=(ip netns exec "$ns")
  "${run[@]}" tc qdisc del dev "$dev" root 2> /dev/null || true
  [ "$rate" = none ] && return 0
  local bits
  bits=$(tc_rate_bits "$rate")
  # a token bucket of at least 4 ms at the rate (HZ 250 ticks) and 64 KB, so that the rate is reachable
  local burst=$((bits / 8 / 250))
  [ "$burst" -ge 65536 ] || burst=65536
  "${run[@]}" tc qdisc add dev "$dev" root tbf rate "$rate" burst "$burst" latency 100ms
}

tc_rate_bits() {
  local r="${1,,}" n unit
  [[ "$r" =~ ^([0-9]+)(bit|kbit|mbit|gbit)$ ]] || die "rate like 1mbit, 1gbit or 10gbit, got '$1'"
  n="${BASH_REMATCH[1]}" unit="${BASH_REMATCH[2]}"
  case "$unit" in bit) echo "$n" ;; kbit) echo $((n * 1000)) ;; mbit) echo $((n * 1000000)) ;;
    gbit) echo $((n * 1000000000)) ;; esac
}

case "${1:-}" in
  up)
    n="${2:-}"
    [[ "$n" =~ ^[0-9]+$ ]] && [ "$n" -ge 1 ] && [ "$n" -le 20 ] || die "up needs a host count 1..20, got '$n'"
    check || exit 1
    down
    ip link add "$bridge" type bridge
    ip addr add "$root_addr/24" dev "$bridge"
    ip link set "$bridge" up
    echo "root $root_addr"
    for i in $(seq 1 "$n"); do
      ns=$(ns_name "$i") veth=$(veth_root "$i")
      ip netns add "$ns"
      ip link add "$veth" type veth peer name eth0 netns "$ns"
      ip link set "$veth" master "$bridge" up
      ip -n "$ns" link set lo up
      ip -n "$ns" addr add "$(host_addr "$i")/24" dev eth0
      ip -n "$ns" link set eth0 up
      echo "host $i $ns $(host_addr "$i")"
    done
    ;;
  down) down ;;
  link)
    host_index "${2:-}"
    ns=$(ns_name "$2") veth=$(veth_root "$2")
    case "${3:-}" in
      down) ip link set "$veth" down; ip -n "$ns" link set eth0 down ;;
      up) ip link set "$veth" up; ip -n "$ns" link set eth0 up ;;
      rate) [ -n "${4:-}" ] || die "link I rate needs a rate or none"
            shape "$veth" "$4"; shape eth0 "$4" "$ns" ;;
      *) die "link I down|up|rate R, got '${3:-}'" ;;
    esac
    ;;
  remove) host_index "${2:-}"; kill_ns "$(ns_name "$2")"; ip link del "$(veth_root "$2")" 2> /dev/null || true ;;
  exec) host_index "${2:-}"; ns=$(ns_name "$2"); shift 2; exec ip netns exec "$ns" "$@" ;;
  pids) host_index "${2:-}"; ip netns pids "$(ns_name "$2")" ;;
  *) die "unknown command '${1:-}'" ;;
esac
