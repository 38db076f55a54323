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
#   netns-hosts.sh <set> link I delay D  delays every frame on host I's link by D in each direction (e.g. 50us,
#                                        0.5ms, 2ms; at most 10s); "delay none" removes the delay. One way, per
#                                        link: between two hosts whose links both have D, the round trip grows by 4D
#                                        (root <-> host I by 2D). Composes with "rate" and "link I down|up".
#   netns-hosts.sh <set> remove I        host I dies: every process in it killed at once, its namespace and link removed
#   netns-hosts.sh <set> exec I cmd...   runs cmd in host I's namespace
#   netns-hosts.sh <set> pids I          the processes in host I's namespace
#   netns-hosts.sh check                 exits 0 when this can run here (root, iproute2, namespaces), else says why
#
# <set> is one lower-case letter or digit naming an independent set of hosts (the examples use "s", the tests
# "t", the benchmarks "b"): set c gets subnet 198.18.<n>.0/24 with n the character's code, the root end .1, host
# I .(10+I). This kernel has tbf and htb but no netem: rates are shaped in the kernel, delay is added by a program.
#
# The delay ("link I delay D"): the host's root end hcx<set>h<I> leaves the bridge, a new veth pair joins it
# (hcx<set>h<I>f, the forwarder's end, and hcx<set>h<I>b on the bridge), and hcomm-delay-link
# (native-bridge/src/main/c/tools/delay_link.c) moves every frame between hcx<set>h<I> and hcx<set>h<I>f with
# AF_PACKET sockets, each sent D after the kernel received it (a thread per direction, the socket's queue as the
# FIFO; GSO frames of 64 KB cross whole). The script starts it in the background, records its pid in
# /run/hcx<set>h<I>-delay.pid (its log, with counters of frames, lateness and drops, in /run/hcx<set>h<I>-delay.log);
# "delay none", "remove I" and "down" stop it, remove the pair and put hcx<set>h<I> back on the bridge. The binary is
# the one Maven built, native-bridge/target/tools/hcomm-delay-link, built there with make/gcc when missing or older
# than its source (HCOMM_DELAY_LINK=path names another). tbf ("rate") stays on hcx<set>h<I> (after the delay, toward
# the host) and on the host's eth0. Measured on a 2-core VM, two hosts with D each, 200 pings: RTT p50 0.04 ms
# without delay; 4D = 2 ms gives 2.03-2.07 ms (mdev 0.06-0.5 ms: the VM's scheduling tail); 4D = 0.2 ms gives
# 0.34 ms: a sleeping forwarder takes 50-70 us to wake for a frame, the floor of what it adds per link. One TCP
# stream between the two: 13-17 Gbit/s without forwarders, 5.4-8 with (unshaped or 10gbit, RTT 2 ms: CPU-bound,
# the two forwarders cost 1.0-1.4 CPU s per GB together), 0.94 at 1gbit. Under a CPU-saturating stream the frames
# are late by 0.1-0.4 ms on average; under 1gbit by 20-30 us.
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

[ $# -ge 1 ] || die "usage: netns-hosts.sh <set> up N | down | link I down|up|rate R|delay D | remove I |" \
  "exec I cmd... | pids I | check"
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
fwd_end() { echo "${prefix}h$1f"; }      # a delayed link: the forwarder's end of the second veth pair (root namespace)
brg_end() { echo "${prefix}h$1b"; }      # ... and its peer, on the bridge
delay_pidfile() { echo "/run/${prefix}h$1-delay.pid"; }
delay_log() { echo "/run/${prefix}h$1-delay.log"; }
checkout="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"

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

# delay_binary: the forwarder's path; builds it (make tools, gcc) when it is missing or older than its source
delay_binary() {
  if [ -n "${HCOMM_DELAY_LINK:-}" ]; then
    [ -x "$HCOMM_DELAY_LINK" ] || die "HCOMM_DELAY_LINK=$HCOMM_DELAY_LINK is not an executable"
    echo "$HCOMM_DELAY_LINK"
    return
  fi
  local src="$checkout/native-bridge/src/main/c" out="$checkout/native-bridge/target/tools"
  local bin="$out/hcomm-delay-link"
  if [ ! -x "$bin" ] || [ "$src/tools/delay_link.c" -nt "$bin" ]; then
    command -v make > /dev/null && command -v gcc > /dev/null \
      || die "$bin is not built and make/gcc are missing to build it (mvn -pl native-bridge compile builds it)"
    mkdir -p "$out"
    flock "$out/.build.lock" make -s -C "$src" tools OUT="$out" CC=gcc >&2 || die "building $bin failed"
  fi
  echo "$bin"
}

# is_forwarder PID I: PID is a running forwarder of host I's link (its command line ends with its two interfaces)
is_forwarder() {
  local cmd
  cmd=$({ tr '\0' ' ' < "/proc/$1/cmdline"; } 2> /dev/null) || return 1
  [[ "$cmd" == *" $(veth_root "$2") $(fwd_end "$2") " ]]
}

# quiet DEV: the root namespace's own stack stays off a device the forwarder owns: no ARP answers, no IPv6
quiet() {
  echo 8 > "/proc/sys/net/ipv4/conf/$1/arp_ignore"
  [ ! -e "/proc/sys/net/ipv6/conf/$1/disable_ipv6" ] || echo 1 > "/proc/sys/net/ipv6/conf/$1/disable_ipv6"
}

# delay_stop I [restore]: stops host I's forwarder (if any) and removes its veth pair; with "restore", host I's root
# end goes back on the bridge as "up" made it
delay_stop() {
  local i="$1" restore="${2:-}" pidfile veth pid _
  pidfile=$(delay_pidfile "$i") veth=$(veth_root "$i")
  if [ -f "$pidfile" ]; then
    pid=$(cat "$pidfile" 2> /dev/null || true)
    if [[ "$pid" =~ ^[0-9]+$ ]] && is_forwarder "$pid" "$i"; then
      kill -TERM "$pid" 2> /dev/null || true
      for _ in $(seq 1 40); do is_forwarder "$pid" "$i" || break; sleep 0.05; done
      if is_forwarder "$pid" "$i"; then
        kill -KILL "$pid" 2> /dev/null || true
        for _ in $(seq 1 40); do is_forwarder "$pid" "$i" || break; sleep 0.05; done
      fi
    fi
    rm -f "$pidfile"
  fi
  ip link del "$(fwd_end "$i")" 2> /dev/null || true
  if [ -n "$restore" ] && [ -e "/sys/class/net/$veth" ] && [ ! -e "/sys/class/net/$veth/master" ]; then
    cat /proc/sys/net/ipv4/conf/default/arp_ignore > "/proc/sys/net/ipv4/conf/$veth/arp_ignore"
    [ ! -e "/proc/sys/net/ipv6/conf/$veth/disable_ipv6" ] \
      || cat /proc/sys/net/ipv6/conf/default/disable_ipv6 > "/proc/sys/net/ipv6/conf/$veth/disable_ipv6"
    ip link set "$veth" master "$bridge"
  fi
}

# delay_start I D: host I's link delayed by D each way (replacing a delay it had)
delay_start() {
  local i="$1" d="$2" bin veth fwd brg pidfile log mtu pid _
  [[ "$d" =~ ^[0-9]+(\.[0-9]+)?(us|ms|s)$ ]] || die "delay like 50us, 0.5ms or 2ms, or none, got '$d'"
  bin=$(delay_binary)
  veth=$(veth_root "$i") fwd=$(fwd_end "$i") brg=$(brg_end "$i") pidfile=$(delay_pidfile "$i") log=$(delay_log "$i")
  delay_stop "$i"
  # the bridge keeps its address while its ports change (else it takes its lowest port's, and the hosts' ARP
  # entries of the root address go stale)
  ip link set "$bridge" address "$(cat "/sys/class/net/$bridge/address")"
  # and host I's root end, off the bridge, a new address: it may be the one the bridge took, and a frame addressed
  # to the bridge must not be taken in by the root namespace's stack there, before the delay
  ip link set "$veth" address "$(printf '02:%02x:%02x:%02x:%02x:%02x' $((RANDOM % 256)) $((RANDOM % 256)) \
    $((RANDOM % 256)) $((RANDOM % 256)) $((RANDOM % 256)))"
  mtu=$(cat "/sys/class/net/$veth/mtu")
  ip link add "$fwd" mtu "$mtu" type veth peer name "$brg" mtu "$mtu"
  quiet "$fwd"
  quiet "$veth"
  ip link set "$brg" master "$bridge" up
  ip link set "$veth" nomaster
  ip link set "$fwd" up
  # no pipe of the caller's held open (a caller reading our output to its end would wait for it); it puts itself
  # in a session of its own, out of reach of a terminal's signals
  "$bin" "$d" "$veth" "$fwd" < /dev/null > "$log" 2>&1 &
  pid=$!
  echo "$pid" > "$pidfile"
  for _ in $(seq 1 100); do
    grep -q ': ready:' "$log" 2> /dev/null && return 0
    kill -0 "$pid" 2> /dev/null || break
    sleep 0.05
  done
  cat "$log" >&2 || true
  delay_stop "$i" restore
  die "the forwarder of host $i did not start (log above)"
}

down() {
  local ns pidfile i
  for pidfile in /run/"${prefix}"h*-delay.pid; do
    [ -e "$pidfile" ] || continue
    i=${pidfile#/run/"${prefix}"h}
    i=${i%-delay.pid}
    [[ "$i" =~ ^[0-9]+$ ]] && delay_stop "$i"
    rm -f "$pidfile"
  done
  rm -f /run/"${prefix}"h*-delay.log
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
      delay) [ -n "${4:-}" ] || die "link I delay needs a delay or none"
             if [ "$4" = none ]; then delay_stop "$2" restore; else delay_start "$2" "$4"; fi ;;
      *) die "link I down|up|rate R|delay D, got '${3:-}'" ;;
    esac
    ;;
  remove) host_index "${2:-}"; delay_stop "$2"; kill_ns "$(ns_name "$2")"
          ip link del "$(veth_root "$2")" 2> /dev/null || true ;;
  exec) host_index "${2:-}"; ns=$(ns_name "$2"); shift 2; exec ip netns exec "$ns" "$@" ;;
  pids) host_index "${2:-}"; ip netns pids "$(ns_name "$2")" ;;
  *) die "unknown command '${1:-}'" ;;
esac
