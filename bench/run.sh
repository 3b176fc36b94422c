#!/usr/bin/env bash
# evictd benchmarks (issue 8): JMH (rules planner vs. the plain-Java kubelet reference), start-up, event -> decision
# on a real memcg, and footprint of the running agent. Writes target/bench/summary.json (one flat object of numbers,
# milliseconds or MiB) and prints the rules-vs-reference table.
#
#   bench/run.sh                 # builds (mvn -Pbench package, no tests) and runs everything
#   mvn -B -Pbench verify        # the same: Maven builds, then calls this script at verify
#
# Environment:
#   BENCH_PARTS="jmh jmh-loaded startup cli e2d poll footprint jdk25"  what to run (default: all)
#   BENCH_JDK25=/usr/lib/jvm/temurin-25-jdk-amd64                    the Java 25 the jdk25 part compares with
#                                                                     (skipped, and said, when absent)
#   BENCH_JMH_ARGS="..."                      extra JMH options, e.g. "-wi 2 -i 2" for a quick look, "-p pods=1000"
#   BENCH_JMH_JVM="..."                       JVM options of the JMH forks (default below)
#   BENCH_QUIET_LOAD=1.0 BENCH_QUIET_WAIT=900 wait up to BENCH_QUIET_WAIT seconds for the 1-minute load average to
#                                             drop below BENCH_QUIET_LOAD before measuring (default: do not wait)
# Event -> decision and poll -> decision need root and the cgroup v1 memory controller; it cleans up its cgroups, processes and files.
#
# A run never stops at a miss: missed crossings, a target not met, a part that fails are figures of the run (a failed
# part is named in target/bench/failures.txt and in summary.json as <part>_failed: 1) and every other part still runs;
# the exit status is 1 only when a part failed, never for a slow or missed figure.
set -euo pipefail

here=$(cd "$(dirname "$0")/.." && pwd)
cd "$here"
out=target/bench
all_parts="jmh jmh-loaded startup cli e2d poll footprint jdk25"
parts=${BENCH_PARTS:-$all_parts}
jdk25=${BENCH_JDK25:-/usr/lib/jvm/temurin-25-jdk-amd64}
# The JVM flags of the container image, read from the Dockerfile so the two cannot drift apart; its class-data
# sharing archive is the image's path: here bin/evictd adds target/evictd.jsa, made by bin/evictd-cds below.
image_flags=$(sed -n 's/^ENV JAVA_TOOL_OPTIONS="\(.*\)"$/\1/p' docker/Dockerfile | sed 's/ *-XX:SharedArchiveFile=[^ ]*//')
if [ -z "$image_flags" ]; then
  echo "bench: cannot read JAVA_TOOL_OPTIONS from docker/Dockerfile" >&2
  exit 2
fi
# The image's JDK_JAVA_OPTIONS: the CLI's compiler thresholds (the java launcher puts them after JAVA_TOOL_OPTIONS);
# the DaemonSet's own JDK_JAVA_OPTIONS replace them for the agent.
cli_jvm=$(sed -n 's/^ENV JDK_JAVA_OPTIONS="\(.*\)"$/\1/p' docker/Dockerfile)
# The DaemonSet's memory limit: the image sizes its heap from it (MaxRAMPercentage), so the process benchmarks give
# the JVM the same view of memory a container with that limit gives it.
limit_mib=$(sed -n 's/.*limits: {memory: \([0-9]*\)Mi}.*/\1/p' docker/daemonset.yaml)
if [ -z "$limit_mib" ]; then
  echo "bench: cannot read limits.memory (Mi) from docker/daemonset.yaml" >&2
  exit 2
fi
image_flags="$image_flags -XX:MaxRAM=${limit_mib}m"
# The CLI's flags, as `docker run evictd:dev test ...` gets them: JAVA_TOOL_OPTIONS, then the image's JDK_JAVA_OPTIONS.
docker_flags="$image_flags${cli_jvm:+ $cli_jvm}"
# The running agent's flags: the image's JAVA_TOOL_OPTIONS, then the DaemonSet's JDK_JAVA_OPTIONS (its heap sizing and
# compile thresholds; the variable replaces the image's, and the java launcher puts it on the command line, after
# JAVA_TOOL_OPTIONS, so it wins). The CLI parts run with the CLI's.
agent_jvm=$(sed -n 's/.*{name: JDK_JAVA_OPTIONS, value: "\(.*\)"}.*/\1/p' docker/daemonset.yaml)
agent_flags="$image_flags $agent_jvm"
# The agent's malloc arenas (the DaemonSet's MALLOC_ARENA_MAX): the agent's parts start their JVMs with it.
agent_malloc=$(sed -n 's/.*{name: MALLOC_ARENA_MAX, value: "\([0-9]*\)"}.*/\1/p' docker/daemonset.yaml)
if [ -z "$agent_malloc" ]; then
  echo "bench: cannot read MALLOC_ARENA_MAX from docker/daemonset.yaml" >&2
  exit 2
fi
# JMH forks: the server compiler (the forks measure steady-state code, not the image's C1-only start-up trade-off),
# the image's collector, heap room for 5,000 pods.
jmh_jvm=${BENCH_JMH_JVM:-"-XX:+UseSerialGC -Xms256m -Xmx1g -Xss4m"}

if [ -z "${EVICTD_BENCH_FROM_MAVEN:-}" ]; then
  mvn -B -o -q -Pbench -DskipTests package # offline: the local repository holds JMH (fetch it once online)
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
rm -f "$out/failures.txt"
# A part that cannot produce its figures: named, counted, and the run goes on with the next part.
failed() {
  echo "bench: $part: $*" >&2
  echo "$part: $*" >> "$out/failures.txt"
}
mib() { awk -v k="$1" 'BEGIN { printf "%.1f", k / 1024 }'; }
# The class-data sharing archive belongs to the jar and to target/lib's jars: the JVM ignores it, without a word,
# when one of them changed after it was dumped (the build rewrites target/lib's jars: dev.evictd.cli.StoredJarEntries).
archive_stale() {
  [ ! -f target/evictd.jsa ] || [ target/evictd.jar -nt target/evictd.jsa ] \
    || [ -n "$(find target/lib -name '*.jar' -newer target/evictd.jsa | head -1)" ]
}
# Runs a command; sets ms (wall time), kb (peak resident set, VmHWM, KiB) and rc (its exit status).
timed() {
  local t0 t1
  t0=$(date +%s%N)
  set +e
  /usr/bin/time -f '%M' -o "$out/time.txt" "$@" > /dev/null 2>> "$out/cmd.log"
  rc=$?
  set -e
  t1=$(date +%s%N)
  ms=$(( (t1 - t0) / 1000000 ))
  kb=$(tail -1 "$out/time.txt")
}

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
  echo "image JVM flags (the CLI's: JAVA_TOOL_OPTIONS and the image's JDK_JAVA_OPTIONS): $docker_flags"
  echo "agent JVM flags (the image's and the DaemonSet's): $agent_flags; MALLOC_ARENA_MAX=$agent_malloc"
  echo "JMH fork JVM flags: $jmh_jvm"
  echo "load before: $(cut -d' ' -f1-3 /proc/loadavg)"
  echo "other java/maven processes before:"
  others | sed 's/^/  /' | cut -c1-160
} > "$out/environment.txt"
cat "$out/environment.txt"

java -cp "$cp" dev.evictd.bench.BenchInputs "$out/input"

median() { sort -n | awk '{ a[NR] = $1 } END { print (NR % 2) ? a[(NR + 1) / 2] : (a[NR / 2] + a[NR / 2 + 1]) / 2 }'; }

# evictd run --standalone on the generated pods: RSS, heap and metaspace used after 5 syncs (adds to $json)
standalone() {
  local javabin=$1 flags=$2 n=$3 suffix=$4 log="$out/footprint-$3$4.log" pid rss_kb heap_kb meta_kb
  # shellcheck disable=SC2086
  MALLOC_ARENA_MAX=$agent_malloc "$javabin" $flags -jar target/evictd.jar run --standalone --pods-file "$out/input/pods-$n.json" \
    --node-name node --interval 1s --metrics-address 127.0.0.1:0 > "$log" 2>&1 &
  pid=$!
  started+=("$pid")
  for _ in $(seq 1 120); do
    [ "$(grep -c ' sync [0-9]* (' "$log" || true)" -ge 5 ] && break
    kill -0 "$pid" 2>/dev/null || break
    sleep 0.5
  done
  if ! kill -0 "$pid" 2>/dev/null || [ "$(grep -c ' sync [0-9]* (' "$log" || true)" -lt 5 ]; then
    failed "evictd run --standalone, $n pods$suffix: fewer than 5 syncs in 60 s (target/bench/${log##*/})"
    kill "$pid" 2>/dev/null || true
    return 0
  fi
  rss_kb=$(awk '/^VmRSS:/ { print $2 }' "/proc/$pid/status")
  # heap used: survivors + eden + old, and metaspace used, from jstat (KiB, fractional)
  read -r heap_kb meta_kb < <(jstat -gc "$pid" | awk 'NR == 2 { print $3 + $4 + $6 + $8, $10 }')
  kill "$pid"
  wait "$pid" 2>/dev/null || true
  echo "  $n pods$suffix: RSS $(mib "$rss_kb") MiB, heap used $(mib "$heap_kb") MiB, metaspace $(mib "$meta_kb") MiB"
  json="$json\"rss_${n}${suffix}_mib\": $(mib "$rss_kb"), \"heap_${n}${suffix}_mib\": $(mib "$heap_kb"), "
  json="$json\"metaspace_${n}${suffix}_mib\": $(mib "$meta_kb"), "
}

# dev.evictd.bench.ChurnAgent for 90 s: RSS and its peak, heap used, full collections, syncs done (adds to $json).
# It runs as the image runs the agent: the packaged jar first on the class path (so the image's class-data sharing
# archive, passed in flags, applies, and the jar's own logging set-up, not the tests' logback-test.xml), then only the
# bench's own classes, copied out of target/test-classes.
churn() {
  local javabin=$1 flags=$2 n=$3 suffix=$4 mode=${5:-} log="$out/footprint-churn-$3$4.log" pid rss_kb hwm_kb heap_kb fgc syncs key
  rm -rf "$out/churn-classes"
  mkdir -p "$out/churn-classes/dev/evictd"
  cp -r target/test-classes/dev/evictd/bench "$out/churn-classes/dev/evictd/"
  # shellcheck disable=SC2086
  MALLOC_ARENA_MAX=$agent_malloc "$javabin" $flags -cp "target/evictd.jar:$out/churn-classes" dev.evictd.bench.ChurnAgent "$n" 100 $(( (n + 99) / 100 )) $mode > "$log" 2>&1 &
  pid=$!
  started+=("$pid")
  sleep 90
  if ! kill -0 "$pid" 2>/dev/null; then
    failed "churn agent, $n pods$suffix, exited (target/bench/${log##*/})"
    return 0
  fi
  rss_kb=$(awk '/^VmRSS:/ { print $2 }' "/proc/$pid/status")
  hwm_kb=$(awk '/^VmHWM:/ { print $2 }' "/proc/$pid/status")
  read -r heap_kb fgc < <(jstat -gc "$pid" | awk 'NR == 2 { print $3 + $4 + $6 + $8, $15 }')
  kill "$pid"
  wait "$pid" 2>/dev/null || true
  syncs=$(sed -n 's/^churn-agent: \([0-9]*\) syncs.*/\1/p' "$log" | tail -1)
  key=$([ "$n" = 5000 ] && echo "rss_5000" || echo "rss_churn_$n")
  echo "  $n pods with churn$suffix: RSS $(mib "$rss_kb") MiB (peak $(mib "$hwm_kb")), heap used $(mib "$heap_kb") MiB," \
    "$fgc full GCs, ${syncs:-0} syncs in 90 s, limit $limit_mib MiB"
  json="$json\"${key}${suffix}_mib\": $(mib "$rss_kb"), \"${key}${suffix}_peak_mib\": $(mib "$hwm_kb"), "
  json="$json\"heap_churn_${n}${suffix}_mib\": $(mib "$heap_kb"), \"full_gcs_churn_${n}${suffix}\": $fgc, "
  json="$json\"syncs_churn_${n}${suffix}\": ${syncs:-0}, "
}

for part in $parts; do
  case $part in
  jmh)
    echo "== JMH: rules planner vs. kubelet reference (no load of our own; load average $(load1))"
    load1 > "$out/jmh-load.txt"
    # shellcheck disable=SC2086
    java -cp "$cp" org.openjdk.jmh.Main -rf json -rff "$out/jmh.json" -jvmArgsAppend "$jmh_jvm" \
      ${BENCH_JMH_ARGS:-} 'dev\.evictd\.bench\.(RulesBench|ReferenceBench)\.' > "$out/jmh.log" 2>&1 \
      || failed "JMH failed (target/bench/jmh.log)"
    grep -E '^(Benchmark|[A-Z][A-Za-z]+Bench\.[a-z]+ )' "$out/jmh.log" || true
    ;;
  jmh-loaded)
    # The same syncs at 110 pods with the other core kept busy by a spinning process: on a node the agent shares
    # the CPU with the pods, and a hand-over between threads that needs a second idle core shows here.
    echo "== JMH with the other core loaded: steady and pressure syncs at 110 pods"
    ( while :; do :; done ) &
    burner=$!
    started+=("$burner")
    # shellcheck disable=SC2086
    java -cp "$cp" org.openjdk.jmh.Main -rf json -rff "$out/jmh-loaded.json" -jvmArgsAppend "$jmh_jvm" -p pods=110 \
      ${BENCH_JMH_ARGS:-} 'dev\.evictd\.bench\.(RulesBench|ReferenceBench)\.(steady|pressure)' > "$out/jmh-loaded.log" 2>&1 \
      || failed "JMH (loaded) failed (target/bench/jmh-loaded.log)"
    load1 > "$out/jmh-loaded-load.txt"
    kill "$burner" 2>/dev/null || true
    wait "$burner" 2>/dev/null || true
    grep -E '^(Benchmark|[A-Z][A-Za-z]+Bench\.[a-z]+ )' "$out/jmh-loaded.log" || true
    ;;
  cli)
    # What an operator pays in CI: evictd rules check (twice first: a rule-set cache, where there is one, is filled
    # by the first run) and evictd test on the bundled fixtures; median of 3, with the peak resident set.
    echo "== CLI: evictd rules check rules, evictd test fixtures (image JVM flags and archive)"
    if archive_stale; then bin/evictd-cds; fi
    json="{"
    for cmd in rules_check test_fixtures; do
      case $cmd in
      rules_check) args=(rules check rules) ;;
      test_fixtures) args=(test fixtures) ;;
      esac
      EVICTD_JAVA_OPTS="$docker_flags" bin/evictd "${args[@]}" > "$out/$cmd.txt" 2>&1 || true
      times=()
      peak=0
      bad=0
      for _ in 1 2 3; do
        EVICTD_JAVA_OPTS="$docker_flags" timed bin/evictd "${args[@]}"
        [ "$rc" = 0 ] || bad=$rc
        times+=("$ms")
        [ "$kb" -gt "$peak" ] && peak=$kb
      done
      m=$(printf '%s\n' "${times[@]}" | median)
      echo "  evictd ${args[*]}: median ${m} ms of ${times[*]}, peak RSS $(mib "$peak") MiB, exit $bad"
      [ "$bad" = 0 ] || failed "evictd ${args[*]} exited $bad (target/bench/$cmd.txt)"
      json="$json\"${cmd}_ms\": $m, \"${cmd}_peak_rss_mib\": $(mib "$peak"), "
    done
    echo "${json%, }}" > "$out/cli.json"
    ;;
  startup)
    echo "== start-up: evictd plan, process start -> rules compiled -> first plan (110 pods under memory pressure)"
    bin/evictd-cds
    input=(--config "$out/input/kubelet.yaml" --pods "$out/input/pods-110.json" --summary "$out/input/summary-110.json")
    EVICTD_JAVA_OPTS="$docker_flags" bin/evictd plan "${input[@]}" > "$out/plan.txt" || true # warms the page cache
    grep -q "evict" "$out/plan.txt" || { failed "evictd plan decided nothing (target/bench/plan.txt)"; continue; }
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
    echo "== event -> decision: a real memcg crossing a memory.available threshold, 110 pods (the agent's JVM flags)"
    # warm: 200 crossings (a p99 of fewer than 100 samples is their maximum) after 100 (an agent that has been through pressure before: its JIT has compiled that path);
    # cold: after 5 (a fresh agent); pod-cgroups: warm, every pod with its cgroup (a sync reads 110 pod cgroups)
    rm -f "$out"/e2d*.json
    for run in "e2d plain 200 100" "e2d-cold plain 60 5" "e2d-pod-cgroups pod-cgroups 60 100"; do
      read -r f mode n warm <<< "$run"
      # shellcheck disable=SC2086
      MALLOC_ARENA_MAX=$agent_malloc java $agent_flags -cp "$cp" dev.evictd.bench.EventToDecision "$out/$f.json" "$mode" "$n" "$warm" \
        > /dev/null 2> "$out/$f.log" || failed "$f failed (target/bench/$f.log)"
      echo "  $f: $(cat "$out/$f.json" 2>/dev/null || echo "no figures")"
      grep -E '^(crossing|only) ' "$out/$f.log" | sed 's/^/    /' | head -5 || true
    done
    ;;
  poll)
    echo "== poll -> decision: the adaptive memory poll, memcg notifier off (as on cgroup v2), a real memcg hog, 110 pods"
    # 100 crossings after 20; then the idle CPU far from and near the line, 20 s each
    # shellcheck disable=SC2086
    rm -f "$out/poll.json"
    MALLOC_ARENA_MAX=$agent_malloc java $agent_flags -cp "$cp" dev.evictd.bench.PollToDecision "$out/poll.json" 100 20 20000 > /dev/null 2> "$out/poll.log" \
      || failed "poll failed (target/bench/poll.log)"
    echo "  poll: $(cat "$out/poll.json" 2>/dev/null || echo "no figures")"
    ;;
  footprint)
    echo "== footprint: evictd run --standalone with a pods file (the agent's JVM flags, the image's archive), after 5 syncs"
    if archive_stale; then bin/evictd-cds; fi
    json="{"
    for n in 110 1000; do
      standalone java "$agent_flags -XX:SharedArchiveFile=target/evictd.jsa" "$n" ""
    done
    # The loop at scale with churn (dev.evictd.bench.ChurnAgent): the default rules, the real manager, metrics and
    # endpoints, 1 % of the pods replaced each sync, a kubelet summary serialized and parsed each sync, every tenth
    # sync under memory pressure; RSS and its peak (VmHWM) after 90 s, against the DaemonSet's limit.
    for n in 110 1000 5000; do
      churn java "$agent_flags -XX:SharedArchiveFile=target/evictd.jsa" "$n" ""
    done
    # The same with a Deployment's pods as the API server sends them (dev.evictd.bench.RealPods: about 5 KiB of
    # JSON each, parsed as the informer parses them), for the DaemonSet's sizing (rss_5000_real_mib).
    churn java "$agent_flags -XX:SharedArchiveFile=target/evictd.jsa" 5000 "_real" real
    json="$json\"memory_limit_mib\": $limit_mib, "
    echo "${json%, }}" > "$out/footprint.json"
    ;;
  jdk25)
    # Java 25 beside the image's Java 17, same jar and flags: with compact object headers, and with an AOT cache
    # (JEP 483/514: classes loaded and linked, made by a training run: evictd plan and a standalone agent's first
    # syncs) in place of the CDS archive. Start-up of evictd plan and the resident sets of the standalone agent
    # (110 pods) and of the churn loop (5,000 pods).
    echo "== Java 25 ($jdk25) beside Java 17: start-up and footprint"
    j25="$jdk25/bin/java"
    if [ ! -x "$j25" ]; then
      failed "no Java 25 at $jdk25 (BENCH_JDK25)"
      continue
    fi
    flags25="$docker_flags -XX:+UseCompactObjectHeaders"
    input=(--config "$out/input/kubelet.yaml" --pods "$out/input/pods-110.json" --summary "$out/input/summary-110.json")
    rm -f "$out/evictd-25.aot"
    # training: a plan, then a standalone agent's first syncs; the cache is written when the JVM exits
    # shellcheck disable=SC2086
    "$j25" $flags25 -XX:AOTCacheOutput="$out/evictd-25.aot" -jar target/evictd.jar plan "${input[@]}" \
      > /dev/null 2> "$out/aot-train.log" || true
    aot=""
    [ -f "$out/evictd-25.aot" ] && aot="-XX:AOTCache=$out/evictd-25.aot" || failed "no AOT cache (target/bench/aot-train.log)"
    json="{"
    for variant in jdk25 jdk25_aot; do
      f="$flags25"
      [ "$variant" = jdk25_aot ] && f="$flags25 $aot"
      times=()
      for _ in 1 2 3 4 5; do
        # shellcheck disable=SC2086
        timed "$j25" $f -jar target/evictd.jar plan "${input[@]}"
        times+=("$ms")
      done
      m=$(printf '%s\n' "${times[@]}" | median)
      echo "  startup $variant: median ${m} ms of ${times[*]}"
      json="$json\"startup_${variant}_ms\": $m, "
    done
    # the agent's figures with the agent's flags, as for Java 17
    agent25="$agent_flags -XX:+UseCompactObjectHeaders"
    standalone "$j25" "$agent25 $aot" 110 "_jdk25_aot"
    standalone "$j25" "$agent25" 110 "_jdk25"
    churn "$j25" "$agent25" 5000 "_jdk25"
    echo "${json%, }}" > "$out/jdk25.json"
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
[ "$parts" = "$all_parts" ] || partial="--partial"
java -cp "$cp" dev.evictd.bench.Summarize "$out" $partial || true
cat "$out/summary.json"
if [ -s "$out/failures.txt" ]; then
  echo "bench: parts that failed (their figures are missing; the others are in summary.json):" >&2
  sed 's/^/  /' "$out/failures.txt" >&2
  exit 1
fi
