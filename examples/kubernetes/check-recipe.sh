#!/usr/bin/env bash
# Checks a properties file and an executor pod template for what executors on Ascend nodes need, before
# spark-submit: exits 1 naming each missing setting or mount.
#   examples/kubernetes/check-recipe.sh [spark-ascend.properties] [executor-pod-template.yaml]
# A line-based check of the two files, not a YAML parser: KubernetesExecutorPodTest checks the pod Spark builds.
set -u
here=$(cd "$(dirname "$0")" && pwd)
props=${1:-$here/spark-ascend.properties}
template=${2:-$here/executor-pod-template.yaml}
problems=0

problem() {
    echo "check-recipe: $*" >&2
    problems=$((problems + 1))
}

# The value of key $1 in the properties file (key, then spaces, '=' or ':'), empty when absent.
value() {
    awk -v k="$1" '
        /^[ \t]*[#!]/ { next }
        { line = $0; sub(/^[ \t]+/, "", line) }
        index(line, k) == 1 {
            rest = substr(line, length(k) + 1)
            if (rest !~ /^[ \t=:]/) next
            sub(/^[ \t]*[=:]?[ \t]*/, "", rest); sub(/[ \t]+$/, "", rest); v = rest
        }
        END { print v }
    ' "$props"
}

[ -r "$props" ] || { echo "check-recipe: cannot read $props" >&2; exit 1; }
[ -r "$template" ] || { echo "check-recipe: cannot read $template" >&2; exit 1; }

name=$(value spark.shuffle.hcomm.communicator.resource)
if [ -z "$name" ]; then
    problem "spark.shuffle.hcomm.communicator.resource is not set: set it to Ascend910, the resource of the" \
        "device plugin's huawei.com/Ascend910"
    name=Ascend910
fi
[ "$(value "spark.executor.resource.$name.amount")" = 1 ] ||
    problem "the executor pod would ask for no huawei.com/$name: set spark.executor.resource.$name.amount=1"
[ "$(value "spark.executor.resource.$name.vendor")" = huawei.com ] ||
    problem "set spark.executor.resource.$name.vendor=huawei.com (Spark asks Kubernetes for <vendor>/<name>)"
[ -n "$(value "spark.executor.resource.$name.discoveryScript")" ] ||
    problem "set spark.executor.resource.$name.discoveryScript=/opt/hcomm/npu-discovery.sh"
[ "$(value spark.executorEnv.HCOMM_NPU_RESOURCE_NAME)" = "$name" ] ||
    problem "set spark.executorEnv.HCOMM_NPU_RESOURCE_NAME=$name (the name the discovery script prints)"
[ "$(value spark.plugins)" = org.apache.spark.shuffle.hcomm.HcommShufflePlugin ] ||
    problem "set spark.plugins=org.apache.spark.shuffle.hcomm.HcommShufflePlugin"
[ "$(value spark.shuffle.manager)" = org.apache.spark.shuffle.hcomm.HcommShuffleManager ] ||
    problem "set spark.shuffle.manager=org.apache.spark.shuffle.hcomm.HcommShuffleManager"

for path in /usr/local/Ascend/driver /usr/local/dcmi /usr/local/bin/npu-smi /etc/ascend_install.info /dev/shm; do
    grep -Eq "^[[:space:]]*(- )?mountPath:[[:space:]]*\"?$path\"?[[:space:]]*$" "$template" ||
        problem "$template mounts nothing at $path: add the volume and its mount to the pod template"
done

if [ "$problems" -gt 0 ]; then
    exit 1
fi
echo "check-recipe: $props and $template have what executors on Ascend nodes need"
