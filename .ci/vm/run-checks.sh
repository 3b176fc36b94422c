#!/usr/bin/env bash
# evictd's cgroup v2 checks on a real kernel: builds (or takes from its cache) the VM image, boots it under QEMU's
# software emulation with the build output and the Maven repository shared read-only, runs the checks main
# (dev.evictd.linux.V2Checks, test classes) as the guest's only program, and prints exactly one line:
#   cgroup v2 VM: kernel <release>, <N> checks passed
# A failing check fails this script (its lines are printed); where QEMU cannot run it prints why and exits 0.
# Run from a checkout after `mvn verify` (or test-compile). Output and timings: target/vm/. Environment:
#   EVICTD_VM=off        skip
#   EVICTD_VM_CACHE=DIR  image cache (default /var/cache/evictd-vm)
#   EVICTD_VM_TIMEOUT=S  boot + checks time-out in seconds (default 900)
set -euo pipefail
cd "$(dirname "$0")/../.."
skip() {
  echo "cgroup v2 VM: skipped ($*)"
  exit 0
}
[ "${EVICTD_VM:-on}" != off ] || skip "EVICTD_VM=off"
command -v qemu-system-x86_64 > /dev/null \
  || skip "qemu-system-x86_64 is not installed: apt-get install --no-install-recommends qemu-system-x86 debootstrap"
[ "$(id -u)" = 0 ] || skip "building the image needs root (debootstrap, chroot)"
[ "$(uname -m)" = x86_64 ] || skip "not an x86_64 host"
[ -f target/test-classes/dev/evictd/linux/V2Checks.class ] \
  || { echo "cgroup v2 VM: no test classes (run mvn verify or test-compile first)" >&2; exit 2; }
mkdir -p target/vm
io=$(mktemp -d /tmp/evictd-vm-io.XXXXXX)
qemu_pid=
cleanup() {
  if [ -n "$qemu_pid" ] && kill -0 "$qemu_pid" 2> /dev/null; then
    kill -KILL "$qemu_pid" 2> /dev/null || true
    wait "$qemu_pid" 2> /dev/null || true
  fi
  rm -rf "$io"
}
trap cleanup EXIT

t0=$(date +%s)
set +e
image=$(.ci/vm/build-image.sh 2> target/vm/build.log)
rc=$?
image=${image##*$'\n'} # its last line: the path, whatever a tool printed before it
set -e
if [ "$rc" = 3 ]; then
  skip "$(tail -1 target/vm/build.log)"
elif [ "$rc" != 0 ]; then
  echo "cgroup v2 VM: building the image failed:" >&2
  tail -20 target/vm/build.log >&2
  exit 1
fi
t1=$(date +%s)

# the test class path, at the host's own paths (the guest mounts target and the Maven repository there)
mvn -B -q dependency:build-classpath -Dmdep.includeScope=test -Dmdep.outputFile=target/vm/classpath.txt \
  > target/vm/classpath.log 2>&1 || { cat target/vm/classpath.log >&2; exit 1; }
m2=$(mvn -B -q help:evaluate -Dexpression=settings.localRepository -DforceStdout 2> /dev/null || true)
[ -d "$m2" ] || m2=$HOME/.m2/repository
target=$(pwd)/target
tr ':' '\n' < target/vm/classpath.txt | grep -v "^$m2/" | grep . && {
  echo "cgroup v2 VM: class path entries outside $m2" >&2
  exit 1
}
cat > "$io/env" << ENV
EVICTD_TARGET=$target
EVICTD_M2=$m2
ENV
cat > "$io/command" << CMD
exec java -XX:+UseSerialGC -XX:TieredStopAtLevel=1 -Xmx256m \
  -cp $target/classes:$target/test-classes:$(cat target/vm/classpath.txt) dev.evictd.linux.V2Checks
CMD

set +e
timeout --signal=KILL "${EVICTD_VM_TIMEOUT:-900}" qemu-system-x86_64 -accel tcg,thread=multi -cpu max -m 2048 -smp 2 \
  -kernel "$image/vmlinux" -initrd "$image/initrd.img" \
  -append "console=ttyS0 root=/dev/vda rw init=/sbin/evictd-init quiet loglevel=3 psi=1 cgroup_no_v1=all" \
  -drive "file=$image/rootfs.img,if=virtio,format=raw,snapshot=on" \
  -virtfs "local,path=$io,mount_tag=io,security_model=none" \
  -virtfs "local,path=$target,mount_tag=target,security_model=none,readonly=on" \
  -virtfs "local,path=$m2,mount_tag=m2,security_model=none,readonly=on" \
  -nic none -display none -monitor none -serial stdio -no-reboot < /dev/null > target/vm/console.log 2>&1 &
qemu_pid=$!
wait "$qemu_pid"
qrc=$?
qemu_pid=
set -e
t2=$(date +%s)
cp "$io/output.txt" target/vm/output.txt 2> /dev/null || : > target/vm/output.txt
printf 'image build or cache: %s s\nboot + checks: %s s\ntotal: %s s\n' "$((t1 - t0))" "$((t2 - t1))" "$((t2 - t0))" \
  > target/vm/timing.txt
release=$(cat "$io/kernel-release" 2> /dev/null || cat "$image/kernel-release")
status=$(cat "$io/status" 2> /dev/null || echo none)
passed=$(grep -c '^ok ' target/vm/output.txt || true)
failed=$(grep -c '^FAIL ' target/vm/output.txt || true)
if [ "$status" = 0 ] && [ "$failed" = 0 ] && [ "$passed" -gt 0 ]; then
  echo "cgroup v2 VM: kernel $release, $passed checks passed"
  exit 0
fi
echo "cgroup v2 VM: kernel $release, $failed of $((passed + failed)) checks FAILED (exit status $status, qemu $qrc):"
grep -E '^(FAIL|checks:)' target/vm/output.txt || tail -30 target/vm/output.txt target/vm/console.log
exit 1
