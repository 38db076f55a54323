#!/bin/bash
# The soft NIC's measurements (docs/ARCHITECTURE.md, "soft HComm"): nic_bench (make bench-nic) between two processes
# on loopback and, as root, between two network namespaces joined by a veth pair (hcxz-a 198.18.122.1, hcxz-b
# 198.18.122.2, removed at the end); answers of 64 KiB, 1 MiB and 4 MiB, 4 in flight, 2 GiB per run.
#
#   nic_bench.sh NIC_BENCH [REPS]
#
# Printed per case, the median of REPS runs (default 3; every run on stderr): the reader's MB/s, the serving
# process's CPU s/GB (getrusage) and the whole host's (/proc/stat: user, system, irq, softirq). Run it on an
# otherwise idle host: the host column then also holds what the kernel did for the transfer in other tasks'
# time or in ksoftirqd (with MSG_ZEROCOPY on loopback or veth, the deferred copy), which getrusage does not see.
set -u
B=${1:?usage: nic_bench.sh NIC_BENCH [REPS]}
REPS=${2:-3}
SIZES="65536 1048576 4194304"
NS_A=hcxz-a NS_B=hcxz-b

netns_up() {
    ip netns add $NS_A && ip netns add $NS_B || return 1
    trap netns_down EXIT
    ip link add hcxz-va type veth peer name hcxz-vb
    ip link set hcxz-va netns $NS_A
    ip link set hcxz-vb netns $NS_B
    ip -n $NS_A addr add 198.18.122.1/24 dev hcxz-va
    ip -n $NS_B addr add 198.18.122.2/24 dev hcxz-vb
    for n in $NS_A $NS_B; do ip -n $n link set lo up; done
    ip -n $NS_A link set hcxz-va up
    ip -n $NS_B link set hcxz-vb up
}

netns_down() { ip netns del $NS_A 2>/dev/null; ip netns del $NS_B 2>/dev/null; }

# the numbers of a line, space separated
nums() { grep -oE '[0-9]+(\.[0-9]+)?' <<< "$1" | tr '\n' ' '; }

# one raw run: prints "MBps server_cpu_per_GB host_cpu_per_GB"
raw_run() { # where mode size
    local out srv
    if [ "$1" = veth ]; then
        local port=$((30000 + RANDOM % 20000))
        ip netns exec $NS_A "$B" serve "$2" 198.18.122.1 $port > /tmp/nic_bench.srv.$$ &
        local sp=$!
        out=$(ip netns exec $NS_B "$B" client 198.18.122.1 $port "$3" 2048 4)
        wait $sp
        srv=$(cat /tmp/nic_bench.srv.$$)
        rm -f /tmp/nic_bench.srv.$$
    else
        local both
        both=$("$B" "$2" "$3" 2048 4)
        out=$(grep '^client' <<< "$both")
        srv=$(grep '^server' <<< "$both")
    fi
    # client: size, MB/s, its cpu s/GB, the host's; server: cpu s, cpu s/GB, MB/s
    awk -v c="$(nums "$out")" -v s="$(nums "$srv")" 'BEGIN { split(c, a, " "); split(s, b, " ")
        printf "%d %.3f %.3f\n", a[2], b[2], a[4] }'
}

lib_run() { # mode size: prints "MBps owner_cpu_per_GB host_cpu_per_GB"
    local both
    both=$("$B" lib "$1" "$2" 2048 4)
    # reader: size, MB/s, its cpu s/GB, the host's; owner: cpu s, cpu s/GB
    awk -v r="$(nums "$(grep '^reader' <<< "$both")")" -v o="$(nums "$(grep '^owner' <<< "$both")")" 'BEGIN {
        split(r, a, " "); split(o, b, " "); printf "%d %.3f %.3f\n", a[2], b[2], a[4] }'
}

median_of() { # command...: REPS runs, the median of each column (every run on stderr)
    local runs=() r
    for _ in $(seq "$REPS"); do
        r=$("$@")
        echo "  run: $* -> $r" >&2
        runs+=("$r")
    done
    local mid=$(((REPS + 1) / 2)) col out=()
    for col in 1 2 3; do
        out+=("$(printf '%s\n' "${runs[@]}" | cut -d' ' -f$col | sort -n | sed -n "${mid}p")")
    done
    printf '%6d MB/s  serving process %s cpu s/GB  host %s cpu s/GB\n' "${out[0]}" "${out[1]}" "${out[2]}"
}

echo "kernel $(uname -r), $(nproc) CPUs; median of $REPS runs, 2 GiB each, 4 answers in flight"
for where in loopback veth; do
    if [ $where = veth ]; then
        [ "$(id -u)" = 0 ] && netns_up || { echo "veth: skipped (needs root and ip netns)"; continue; }
    fi
    for mode in send sendfile zerocopy; do
        for size in $SIZES; do
            printf '%-8s %-8s %7s: %s\n' $where $mode $size "$(median_of raw_run $where $mode $size)"
        done
    done
done
for mode in copy zerocopy; do
    for size in $SIZES; do
        printf '%-8s %-8s %7s: %s\n' library $mode $size "$(median_of lib_run $mode $size)"
    done
done
"$B" aliasing
