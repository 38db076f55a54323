#!/usr/bin/env bash
# The default line's BundleIT on an emulated aarch64 (Kunpeng) JVM: the test JVM is Debian's arm64 JDK under
# qemu-user, and so are the JVMs it starts, the doctor's (`java -jar <bundle> doctor`, its end-to-end read between
# two JVMs) and the two executor JVMs of a local-cluster shuffle, whose answer BundleIT checks; the bundle's
# linux-aarch64/libhcomm_soft.so is what they load. Run by the cross-line pass after the default line.
#
# The kernel execs those arm64 JVMs only through qemu's binfmt_misc handler, which needs root to register: the script
# mounts binfmt_misc if it is not mounted, registers the aarch64 handler if none is registered (the line of
# /usr/lib/binfmt.d/qemu-aarch64.conf, or the same built for qemu-aarch64-static), and when it ends, also on failure
# or a signal, removes the handler and unmounts binfmt_misc only if it added them itself.
#
# Without root, the arm64 JDK, qemu-aarch64-static or a binfmt_misc the host lets it use, it prints one line
# "aarch64 JVM skipped: ..." naming what it needs, and exits 0. Otherwise one line "aarch64 JVM PASS ..." (exit 0) or
# "aarch64 JVM FAIL ..." (exit 1, the log's last lines on stderr).
#
#   spark-plugin/aarch64-jvm.sh
#   environment: MVN (the mvn to run), MVN_REPO_LOCAL (the local repository to share), AARCH64_JAVA (the arm64
#   java; default /usr/lib/jvm/java-17-openjdk-arm64/bin/java)
# Maven output: spark-plugin/target/cross-line/aarch64-jvm.log. Its Maven may take 15 minutes at most.
set -uo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
# shellcheck source=spark-lines.sh
. "$root/spark-plugin/spark-lines.sh"
mvn="${MVN:-mvn}"
java="${AARCH64_JAVA:-/usr/lib/jvm/java-17-openjdk-arm64/bin/java}"
qemu=/usr/bin/qemu-aarch64-static
binfmt=/proc/sys/fs/binfmt_misc
conf=/usr/lib/binfmt.d/qemu-aarch64.conf
# an ELF64 little-endian executable or shared object for EM_AARCH64 (183), as qemu's own binfmt.d line has it
magic='\x7f\x45\x4c\x46\x02\x01\x01\x00\x00\x00\x00\x00\x00\x00\x00\x00\x02\x00\xb7\x00'
mask='\xff\xff\xff\xff\xff\xff\xff\x00\xff\xff\xff\xff\xff\xff\xff\xff\xfe\xff\xff\xff'
out="$root/spark-plugin/target/cross-line"
log="$out/aarch64-jvm.log"
mkdir -p "$out"

skip() {
  echo "aarch64 JVM skipped (BundleIT on an arm64 JVM under qemu-user): $1"
  exit 0
}

needs=()
[ "$(id -u)" = 0 ] || needs+=("root (to register qemu's binfmt_misc handler for aarch64)")
jdk="openjdk-17-jdk-headless:arm64 (dpkg --add-architecture arm64; apt-get update; apt-get install ...)"
[ -x "$java" ] || needs+=("the arm64 JDK at $java: $jdk")
[ -x "$qemu" ] || needs+=("$qemu: qemu-user-static")
if [ ${#needs[@]} -gt 0 ]; then
  reasons=$(printf '%s; ' "${needs[@]}")
  skip "needs ${reasons%; }"
fi

# what this run added, to undo at its end (and nothing else)
mounted="" registered="" enabled=""
cleanup() {
  [ -z "$registered" ] || echo -1 > "$binfmt/$registered" 2>/dev/null \
    || echo "aarch64-jvm.sh: could not remove the binfmt_misc handler $registered" >&2
  [ -z "$enabled" ] || echo 0 > "$binfmt/$enabled" 2>/dev/null || true
  [ -z "$mounted" ] || umount "$binfmt" 2>/dev/null || true
}
# on a signal, stop the Maven run first (in the background, so that the signal is not held until it ends)
maven=""
stop() {
  [ -z "$maven" ] || kill -TERM "$maven" 2>/dev/null
  [ -z "$maven" ] || wait "$maven" 2>/dev/null
  exit "$1"
}
trap cleanup EXIT
trap 'stop 143' TERM
trap 'stop 130' INT
trap 'stop 129' HUP

if [ ! -e "$binfmt/register" ]; then
  mount -t binfmt_misc binfmt_misc "$binfmt" 2>/dev/null \
    || skip "binfmt_misc is not mounted at $binfmt and mounting it failed (a host or container that allows it)"
  mounted=yes
fi
[ "$(cat "$binfmt/status" 2>/dev/null)" = enabled ] || skip "binfmt_misc is disabled ($binfmt/status)"
# a handler for aarch64 ELF files, qemu's or another's under any name: use it as it is
handler=""
for entry in "$binfmt"/*; do
  case "${entry##*/}" in register|status) continue ;; esac
  if grep -q '^magic 7f454c460201010000000000000000000200b700' "$entry" 2>/dev/null; then
    handler="${entry##*/}"
    if ! grep -q '^enabled' "$entry"; then
      echo 1 > "$entry" 2>/dev/null || skip "the binfmt_misc handler $handler is disabled and could not be enabled"
      enabled="$handler"
    fi
    break
  fi
done
if [ -z "$handler" ]; then
  if [ -f "$conf" ] && [ -x "$(cut -d: -f7 "$conf")" ]; then
    line=$(cat "$conf")
  else
    line=":qemu-aarch64:M::$magic:$mask:$qemu:F"
  fi
  handler=$(cut -d: -f2 <<< "$line")
  # printf %s: the kernel itself decodes the \x escapes
  printf '%s\n' "$line" > "$binfmt/register" 2>/dev/null \
    || skip "registering qemu's binfmt_misc handler for aarch64 failed (a host or container that allows it)"
  registered="$handler"
fi

start=$(date +%s)
repo=()
[ -n "${MVN_REPO_LOCAL:-}" ] && repo=(-Dmaven.repo.local="$MVN_REPO_LOCAL")
# the default line's build, as the cross-line pass runs it, with BundleIT's JVM the arm64 one; JAVA_HOME left out of
# its environment so that Spark starts the executors from that JVM's own home
timeout --kill-after=30 900 "$mvn" -B -f "$root/pom.xml" -pl native-bridge,spark-plugin "${repo[@]}" \
  -Dbridge.tests.skip=true -Dcrossline.skip=true -Dline.build.subdir="/lines/spark$DEFAULT_LINE" -Dtest=none \
  -Dsurefire.failIfNoSpecifiedTests=false -Dscalatest.skip=true -Dit.test=BundleIT -Djvm="$java" \
  -Dfailsafe.excludedEnvironmentVariables=JAVA_HOME verify > "$log" 2>&1 &
maven=$!
wait "$maven"
rc=$?
maven=""
secs=$(( $(date +%s) - start ))
bundle=$(grep -E "Tests run: [0-9]+, .*in org.apache.spark.shuffle.hcomm.BundleIT" "$log" | tail -n 1 \
  | sed -E 's/.*Tests run: ([0-9]+), Failures: ([0-9]+), Errors: ([0-9]+), Skipped: ([0-9]+).*/\1 run, \2 failed, '\
'\3 errors, \4 skipped/')
jvms=$(sed -n "s/^BundleIT: \(the test JVM and its executor JVMs on .*\)/\1/p" "$log" | tail -n 1)
how="there already"
[ -z "$registered" ] || how="registered for this run, removed after it"
result="in $((secs / 60))m$(printf %02d $((secs % 60)))s | BundleIT: ${bundle:-not run}"
result="$result | ${jvms:-"no JVM architecture reported"}"
result="$result | binfmt_misc handler $handler: $how"
if [ $rc -eq 0 ] && [[ "$jvms" == *" on aarch64, "* ]] && [[ "$bundle" == *" 0 failed, 0 errors, 0 skipped" ]]; then
  echo "aarch64 JVM PASS $result"
else
  echo "aarch64 JVM FAIL $result (log: $log)"
  { echo "---- last 80 lines of $log"; tail -n 80 "$log"; echo "----"; } >&2
  exit 1
fi
