#!/usr/bin/env bash
# Spark resource discovery script for Huawei Ascend NPUs (Atlas A2 / A3 and others).
#
# Prints Spark's ResourceInformation JSON, e.g. {"name": "npu", "addresses": ["0","1","2","3"]}, with the ids
# aclrtSetDevice takes in a process that has this script's environment:
#   spark.worker.resource.npu.discoveryScript=/path/npu-discovery.sh     (standalone: the Worker runs it)
#   spark.executor.resource.npu.discoveryScript=/path/npu-discovery.sh   (YARN, Kubernetes: each executor runs it)
#   spark.executor.resource.npu.amount=1
#
# The resource name is the first argument, else $HCOMM_NPU_RESOURCE_NAME, else "npu".
#
# Which ids, in this order:
#  1. The chips of this host or container, as logical ids:
#     - `npu-smi info -m` (the command named by $HCOMM_NPU_SMI, default npu-smi on PATH): the "Chip Logic ID" column;
#       rows whose logic id is "-" (the Mcu rows) are not compute chips and are skipped;
#     - without npu-smi, or when it fails or prints no table: the device files $HCOMM_NPU_DEV_DIR/davinci<N>
#       (default /dev), N being physical ids; the runtime numbers them 0, 1, ... in ascending order.
#  2. ASCEND_VISIBLE_DEVICES (the Ascend container runtime's list of physical ids, "0,1", "0-3" or "Ascend910-0"):
#     when set, the container has exactly those chips, which its runtime numbers 0 .. k-1 in ascending physical
#     order; the script checks that npu-smi shows at least k chips (or that each davinci<N> file exists).
#  3. ASCEND_RT_VISIBLE_DEVICES (a comma list of logical ids from step 1 or 2): the runtime renumbers the listed
#     chips 0 .. m-1 in the listed order, so the script prints 0 .. m-1. With ASCEND_RT_VISIBLE_DEVICES=2,3 it
#     prints ["0","1"]: aclrtSetDevice(0) in the executor opens chip 2, aclrtSetDevice(1) chip 3. That holds only
#     when the executor has the same ASCEND_RT_VISIBLE_DEVICES as this script: in standalone the executors inherit
#     the Worker's environment, so do not set a different one with spark.executorEnv.ASCEND_RT_VISIBLE_DEVICES.
#
# Exits non-zero, saying on stderr what to check, when it finds no NPU or an id it cannot map.
set -u

name=${1:-${HCOMM_NPU_RESOURCE_NAME:-npu}}
npu_smi=${HCOMM_NPU_SMI:-npu-smi}
dev_dir=${HCOMM_NPU_DEV_DIR:-/dev}

fail() {
    echo "npu-discovery: $*" >&2
    exit 1
}

[[ $name =~ ^[A-Za-z0-9._-]+$ ]] || fail "resource name '$name' is not [A-Za-z0-9._-]+"

# The logical ids in `npu-smi info -m` output (stdin), one per line. The header names the columns: "NPU ID",
# "Chip ID", "Chip Logic ID", newer drivers add "Chip Phy-ID" (and on some products "Slot ID"), "Chip Name"; the
# column is found by name, and a chip name may contain spaces, as it is the last column.
logic_ids_from_table() {
    awk '
        !found && /Chip Logic ID/ {
            h = $0
            gsub(/Chip Logic ID/, "Chip_Logic_ID", h); gsub(/Chip Phy-ID/, "Chip_Phy-ID", h)
            gsub(/Chip Name/, "Chip_Name", h); gsub(/Chip ID/, "Chip_ID", h); gsub(/NPU ID/, "NPU_ID", h)
            gsub(/Slot ID/, "Slot_ID", h)
            n = split(h, cols, /[ \t]+/)
            k = 0
            for (i = 1; i <= n; i++) if (cols[i] != "") { k++; if (cols[i] == "Chip_Logic_ID") col = k }
            found = 1
            next
        }
        found && NF >= col && $col ~ /^[0-9]+$/ { print $col + 0 }
    '
}

ids=""      # the logical ids before ASCEND_RT_VISIBLE_DEVICES, one per line, ascending
source=""   # where they came from, for messages
smi_note="" # why npu-smi was not used

if command -v "$npu_smi" >/dev/null 2>&1; then
    if out=$("$npu_smi" info -m 2>&1); then
        ids=$(printf '%s\n' "$out" | logic_ids_from_table | sort -n -u)
        source="'$npu_smi info -m'"
        if [ -z "$ids" ]; then
            smi_note="'$npu_smi info -m' listed no chip with a logic id: $(printf '%s' "$out" | head -c 300)"
        fi
    else
        rc=$?
        smi_note="'$npu_smi info -m' failed (exit $rc): $(printf '%s' "$out" | head -c 300)"
    fi
else
    smi_note="no '$npu_smi' on PATH"
fi

physical=""
if [ -z "$ids" ]; then
    [ -n "$smi_note" ] && echo "npu-discovery: $smi_note; looking for $dev_dir/davinci<N>" >&2
    for f in "$dev_dir"/davinci*; do
        n=${f##*/davinci}
        case $n in '' | *[!0-9]*) continue ;; esac # davinci_manager and the like
        [ -e "$f" ] && physical="$physical$((10#$n))"$'\n'
    done
    physical=$(printf '%s' "$physical" | sort -n -u)
    if [ -n "$physical" ]; then
        ids=$(printf '%s\n' "$physical" | awk '{ print NR - 1 }')
        source="$dev_dir/davinci<N>"
    fi
fi

if [ -n "${ASCEND_VISIBLE_DEVICES:-}" ]; then
    listed=""
    IFS=',' read -r -a parts <<<"$ASCEND_VISIBLE_DEVICES"
    for p in "${parts[@]}"; do
        p=${p// /}
        case $p in
            [A-Za-z]*-[0-9]*) p=${p##*-} ;; # Ascend910-3
        esac
        if [[ $p =~ ^([0-9]+)-([0-9]+)$ ]]; then
            for ((i = 10#${BASH_REMATCH[1]}; i <= 10#${BASH_REMATCH[2]}; i++)); do listed="$listed$i"$'\n'; done
        elif [[ $p =~ ^[0-9]+$ ]]; then
            listed="$listed$((10#$p))"$'\n'
        elif [ -n "$p" ]; then
            fail "ASCEND_VISIBLE_DEVICES='$ASCEND_VISIBLE_DEVICES': '$p' is not a device id, a range a-b or a name like Ascend910-3"
        fi
    done
    listed=$(printf '%s' "$listed" | sort -n -u)
    [ -n "$listed" ] || fail "ASCEND_VISIBLE_DEVICES='$ASCEND_VISIBLE_DEVICES' lists no device"
    k=$(printf '%s\n' "$listed" | wc -l)
    if [ -n "$physical" ]; then
        for p in $listed; do
            printf '%s\n' "$physical" | grep -qx "$p" ||
                fail "ASCEND_VISIBLE_DEVICES='$ASCEND_VISIBLE_DEVICES' lists $p but there is no $dev_dir/davinci$p"
        done
    elif [ -n "$ids" ]; then
        have=$(printf '%s\n' "$ids" | wc -l)
        [ "$have" -ge "$k" ] ||
            fail "ASCEND_VISIBLE_DEVICES='$ASCEND_VISIBLE_DEVICES' lists $k devices but $source shows $have"
    fi
    if [ -n "$ids" ]; then
        ids=$(seq 0 $((k - 1)))
        source="ASCEND_VISIBLE_DEVICES"
    fi
fi

if [ -z "$ids" ]; then
    fail "no Ascend NPU found: ${smi_note:-npu-smi showed none}, and no $dev_dir/davinci<N> device file." \
        "Check that the Ascend driver is installed and loaded (npu-smi info), that this user may open the devices" \
        "(the HwHiAiUser group), and in a container that the devices are passed in (ASCEND_VISIBLE_DEVICES, --device)."
fi

if [ -n "${ASCEND_RT_VISIBLE_DEVICES:-}" ]; then
    m=0
    seen=","
    IFS=',' read -r -a parts <<<"$ASCEND_RT_VISIBLE_DEVICES"
    for p in "${parts[@]}"; do
        p=${p// /}
        [[ $p =~ ^[0-9]+$ ]] ||
            fail "ASCEND_RT_VISIBLE_DEVICES='$ASCEND_RT_VISIBLE_DEVICES': '$p' is not a logical device id"
        p=$((10#$p))
        printf '%s\n' "$ids" | grep -qx "$p" ||
            fail "ASCEND_RT_VISIBLE_DEVICES='$ASCEND_RT_VISIBLE_DEVICES' lists $p, but $source shows logical ids" \
                "$(printf '%s' "$ids" | paste -sd, -)"
        case $seen in *",$p,"*)
            fail "ASCEND_RT_VISIBLE_DEVICES='$ASCEND_RT_VISIBLE_DEVICES' lists $p twice" ;;
        esac
        seen="$seen$p,"
        m=$((m + 1))
    done
    [ "$m" -gt 0 ] || fail "ASCEND_RT_VISIBLE_DEVICES='$ASCEND_RT_VISIBLE_DEVICES' lists no device"
    ids=$(seq 0 $((m - 1)))
fi

addresses=$(printf '%s\n' "$ids" | awk 'NF { printf "%s\"%s\"", (n++ ? "," : ""), $1 }')
printf '{"name": "%s", "addresses": [%s]}\n' "$name" "$addresses"
