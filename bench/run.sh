#!/usr/bin/env bash
# evictd benchmarks (issue 8): JMH (rules planner vs. the plain-Java kubelet reference), start-up, event -> decision
# on a real memcg, and footprint of the running agent. Writes target/bench/summary.json (one flat object of numbers,
# milliseconds or MiB) and prints the rules-vs-reference table.
#
#   bench/run.sh                 # builds (mvn -Pbench package, no tests) and runs everything
#   mvn -B -Pbench verify        # the same: Maven builds, then calls this script at verify
#
# Environment:
#   BENCH_PARTS="jmh startup e2d poll footprint" what to run (default: all)
#   BENCH_JMH_ARGS="..."                      extra JMH options, e.g. "-wi 2 -i 2" for a quick look, "-p pods=1000"
#   BENCH_JMH_JVM="..."                       JVM options of the JMH forks (default below)
#   BENCH_QUIET_LOAD=1.0 BENCH_QUIET_WAIT=900 wait up to BENCH_QUIET_WAIT seconds for the 1-minute load average to
#                                             drop below BENCH_QUIET_LOAD before measuring (default: do not wait)
# Event -> decision and poll -> decision need root and the cgroup v1 memory controller; it cleans up its cgroups, processes and files.
set -euo pipefail

here=$(cd "$(dirname "$0")/.." && pwd)
cd "$here"
out=target/bench
parts=${BENCH_PARTS:-"jmh startup e2d poll footprint"}
# The JVM flags of the container image, read from the Dockerfile so the two cannot drift apart; its class-data
# sharing archive is the image's path: here bin/evictd adds target/evictd.jsa, made by bin/evictd-cds below.
docker_flags=$(sed -n 's/^ENV JAVA_TOOL_OPTIONS="\(.*\)"$/\1/p' docker/Dockerfile | sed 's/ *-XX:SharedArchiveFile=[^ ]*//')
if [ -z "$docker_flags" ]; then
  echo "bench: cannot read JAVA_TOOL_OPTIONS from docker/Dockerfile" >&2
  exit 2
fi
# The DaemonSet's memory limit: the image sizes its heap from it (MaxRAMPercentage), so the process benchmarks give
# the JVM the same view of memory a container with that limit gives it.
limit_mib=$(sed -n 's/.*limits: {memory: \([0-9]*\)Mi}.*/\1/p' docker/daemonset.yaml)
if [ -z "$limit_mib" ]; then
  echo "bench: cannot read limits.memory (Mi) from docker/daemonset.yaml" >&2
  exit 2
fi
docker_flags="$docker_flags -XX:MaxRAM=${limit_mib}m"
# JMH forks: the server compiler (the forks measure steady-state code, not the image's C1-only start-up trade-off),
# the image's collector, heap room for 5,000 pods.
jmh_jvm=${BENCH_JMH_JVM:-"-XX:+UseSerialGC -Xms256m -Xmx1g -Xss4m"}

if [ -z "${EVICTD_BENCH_FROM_MAVEN:-}" ]; then
  mvn -B -q -Pbench -DskipTests package
fi
mkdir -p "$out"
cp="target/test-classes:target/classes:$(cat "$out/classpath.txt")"

started=()
cleanup() {
  for pid in "${started[@]}"; do
    kill "$pid" 2>/dev/null || true
  done
}
trap cleanup EXIT

load1() { cut -d' ' -f1 /proc/loadavg; }
others() {
  # java and maven processes that are not this run's (other builds on a shared machine)
  ps -eo pid=,args= | grep -E '[j]ava|[m]vn' | grep -v -e "$here" || true
}

if [ -n "${BENCH_QUIET_LOAD:-}" ]; then
  deadline=$(( $(date +%s) + ${BENCH_QUIET_WAIT:-900} ))
  while awk -v l="$(load1)" -v q="$BENCH_QUIET_LOAD" 'BEGIN { exit !(l >= q) }'; do
    if [ "$(date +%s)" -ge "$deadline" ]; then
      echo "bench: load $(load1) still >= $BENCH_QUIET_LOAD; measuring anyway" >&2
      break
    fi
    echo "bench: waiting for a quiet machine (load $(load1), want < $BENCH_QUIET_LOAD)" >&2
    sleep 20
  done
fi

{
  echo "date: $(date -u +%Y-%m-%dT%H:%M:%SZ)"
  echo "cores: $(nproc); memory: $(awk '/MemTotal/ { printf "%.1f GiB", $2 / 1048576 }' /proc/meminfo)"
  echo "cpu: $(sed -n 's/^model name\s*: //p' /proc/cpuinfo | head -1)"
  echo "jdk: $(java -version 2>&1 | sed -n 2p)"
  echo "image JVM flags: $docker_flags"
  echo "JMH fork JVM flags: $jmh_jvm"
  echo "load before: $(cut -d' ' -f1-3 /proc/loadavg)"
  echo "other java/maven processes before:"
  others | sed 's/^/  /' | cut -c1-160
} > "$out/environment.txt"
cat "$out/environment.txt"

java -cp "$cp" dev.evictd.bench.BenchInputs "$out/input"

median() { sort -n | awk '{ a[NR] = $1 } END { print (NR % 2) ? a[(NR + 1) / 2] : (a[NR / 2] + a[NR / 2 + 1]) / 2 }'; }

for part in $parts; do
  case $part in
  jmh)
    echo "== JMH: rules planner vs. kubelet reference"
    # shellcheck disable=SC2086
    java -cp "$cp" org.openjdk.jmh.Main -rf json -rff "$out/jmh.json" -jvmArgsAppend "$jmh_jvm" \
      ${BENCH_JMH_ARGS:-} 'dev\.evictd\.bench\.(RulesBench|ReferenceBench)\.' | tee "$out/jmh.log" | grep -E '^(Benchmark|[A-Z][A-Za-z]+Bench\.[a-z]+ )'
    ;;
  startup)
    echo "== start-up: evictd plan, process start -> rules compiled -> first plan (110 pods under memory pressure)"
    bin/evictd-cds
    input=(--config "$out/input/kubelet.yaml" --pods "$out/input/pods-110.json" --summary "$out/input/summary-110.json")
    EVICTD_JAVA_OPTS="$docker_flags" bin/evictd plan "${input[@]}" > "$out/plan.txt" # warms the page cache; checked
    grep -q "evict" "$out/plan.txt" || { echo "bench: evictd plan decided nothing" >&2; exit 1; }
    json="{"
    for variant in image image_no_cds default_flags bare_jvm; do
      times=()
      for _ in 1 2 3 4 5; do
        t0=$(date +%s%N)
        case $variant in
        image) EVICTD_JAVA_OPTS="$docker_flags" bin/evictd plan "${input[@]}" > /dev/null ;;   # as in the image
        image_no_cds) EVICTD_CDS=off EVICTD_JAVA_OPTS="$docker_flags" bin/evictd plan "${input[@]}" > /dev/null ;;
        default_flags) env -u EVICTD_JAVA_OPTS bin/evictd plan "${input[@]}" > /dev/null ;;   # bin/evictd's own
        bare_jvm) java -jar target/evictd.jar plan "${input[@]}" > /dev/null ;;               # no flags, no archive
        esac
        t1=$(date +%s%N)
        times+=($(( (t1 - t0) / 1000000 )))
      done
      m=$(printf '%s\n' "${times[@]}" | median)
      echo "  $variant: median ${m} ms of ${times[*]}"
      key=$([ "$variant" = image ] && echo startup_ms || echo "startup_${variant}_ms")
      json="$json\"$key\": $m, "
    done
    echo "${json%, }}" > "$out/startup.json"
    ;;
  e2d)
    echo "== event -> decision: a real memcg crossing a memory.available threshold, 110 pods (image JVM flags)"
    # warm: 200 crossings (a p99 of fewer than 100 samples is their maximum) after 100 (an agent that has been through pressure before: its JIT has compiled that path);
    # cold: after 5 (a fresh agent); pod-cgroups: warm, every pod with its cgroup (a sync reads 110 pod cgroups)
    # shellcheck disable=SC2086
    java $docker_flags -cp "$cp" dev.evictd.bench.EventToDecision "$out/e2d.json" plain 200 100 2> "$out/e2d.log"
    # shellcheck disable=SC2086
    java $docker_flags -cp "$cp" dev.evictd.bench.EventToDecision "$out/e2d-cold.json" plain 60 5 2> "$out/e2d-cold.log"
    # shellcheck disable=SC2086
    java $docker_flags -cp "$cp" dev.evictd.bench.EventToDecision "$out/e2d-pod-cgroups.json" pod-cgroups 60 100 \
      2> "$out/e2d-pod-cgroups.log"
    for f in e2d e2d-cold e2d-pod-cgroups; do echo "  $f: $(cat "$out/$f.json")"; done
    ;;
  poll)
    echo "== poll -> decision: the adaptive memory poll, memcg notifier off (as on cgroup v2), a real memcg hog, 110 pods"
    # 100 crossings after 20; then the idle CPU far from and near the line, 20 s each
    # shellcheck disable=SC2086
    java $docker_flags -cp "$cp" dev.evictd.bench.PollToDecision "$out/poll.json" 100 20 20000 2> "$out/poll.log"
    echo "  poll: $(cat "$out/poll.json")"
    ;;
  footprint)
    echo "== footprint: evictd run --standalone with a pods file (image JVM flags and archive), after 5 syncs"
    [ -f target/evictd.jsa ] && [ target/evictd.jsa -nt target/evictd.jar ] || bin/evictd-cds
    json="{"
    for n in 110 1000; do
      log="$out/footprint-$n.log"
      EVICTD_JAVA_OPTS="$docker_flags" bin/evictd run --standalone --pods-file "$out/input/pods-$n.json" \
        --interval 1s --metrics-address 127.0.0.1:0 > "$log" 2>&1 &
      pid=$!
      started+=("$pid")
      for _ in $(seq 1 120); do
        [ "$(grep -c ' sync [0-9]* (' "$log" || true)" -ge 5 ] && break
        kill -0 "$pid" 2>/dev/null || { echo "bench: evictd run exited:" >&2; tail -5 "$log" >&2; exit 1; }
        sleep 0.5
      done
      [ "$(grep -c ' sync [0-9]* (' "$log" || true)" -ge 5 ] || { echo "bench: fewer than 5 syncs in 60 s" >&2; exit 1; }
      rss_kb=$(awk '/^VmRSS:/ { print $2 }' "/proc/$pid/status")
      # heap used: survivors + eden + old, and metaspace used, from jstat (KiB, fractional)
      read -r heap_kb meta_kb < <(jstat -gc "$pid" | awk 'NR == 2 { print $3 + $4 + $6 + $8, $10 }')
      kill "$pid"
      wait "$pid" 2>/dev/null || true
      mib() { awk -v k="$1" 'BEGIN { printf "%.1f", k / 1024 }'; }
      echo "  $n pods: RSS $(mib "$rss_kb") MiB, heap used $(mib "$heap_kb") MiB, metaspace $(mib "$meta_kb") MiB"
      json="$json\"rss_${n}_mib\": $(mib "$rss_kb"), \"heap_${n}_mib\": $(mib "$heap_kb"), "
      json="$json\"metaspace_${n}_mib\": $(mib "$meta_kb"), "
    done
    # The loop at scale with churn (dev.evictd.bench.ChurnAgent): the default rules, the real manager, metrics and
    # endpoints, 1 % of the pods replaced each sync, a kubelet summary serialized and parsed each sync, every tenth
    # sync under memory pressure; RSS and its peak (VmHWM) after 90 s, against the DaemonSet's limit.
    for n in 110 1000 5000; do
      log="$out/footprint-churn-$n.log"
      # shellcheck disable=SC2086
      java $docker_flags -cp "$cp" dev.evictd.bench.ChurnAgent "$n" 100 $(( (n + 99) / 100 )) > "$log" 2>&1 &
      pid=$!
      started+=("$pid")
      sleep 90
      kill -0 "$pid" 2>/dev/null || { echo "bench: churn agent exited:" >&2; tail -5 "$log" >&2; exit 1; }
      rss_kb=$(awk '/^VmRSS:/ { print $2 }' "/proc/$pid/status")
      hwm_kb=$(awk '/^VmHWM:/ { print $2 }' "/proc/$pid/status")
      read -r heap_kb fgc < <(jstat -gc "$pid" | awk 'NR == 2 { print $3 + $4 + $6 + $8, $15 }')
      kill "$pid"
      wait "$pid" 2>/dev/null || true
      key=$([ "$n" = 5000 ] && echo "rss_5000" || echo "rss_churn_$n")
      echo "  $n pods with churn: RSS $(mib "$rss_kb") MiB (peak $(mib "$hwm_kb")), heap used $(mib "$heap_kb") MiB," \
        "$fgc full GCs, limit $limit_mib MiB"
      json="$json\"${key}_mib\": $(mib "$rss_kb"), \"${key}_peak_mib\": $(mib "$hwm_kb"), "
      json="$json\"heap_churn_${n}_mib\": $(mib "$heap_kb"), \"full_gcs_churn_${n}\": $fgc, "
    done
    json="$json\"memory_limit_mib\": $limit_mib, "
    echo "${json%, }}" > "$out/footprint.json"
    ;;
  *)
    echo "bench: unknown part $part" >&2
    exit 2
    ;;
  esac
done

{
  echo "load after: $(cut -d' ' -f1-3 /proc/loadavg)"
  echo "other java/maven processes after:"
  others | sed 's/^/  /' | cut -c1-160
} | tee -a "$out/environment.txt"

partial=""
[ "$parts" = "jmh startup e2d poll footprint" ] || partial="--partial"
java -cp "$cp" dev.evictd.bench.Summarize "$out" $partial
cat "$out/summary.json"
