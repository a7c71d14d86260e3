#!/usr/bin/env bash
# Where a disk hit's and a shared hit's CPU goes, thread by thread, kernel included (what callgrind cannot show): the
# two servers of `make bench-shared` (a memory tier of one entry, 1,000 keys, 16 clients; the server on CPU 0, wrk and
# redis-server on CPU 1), in ROUNDS interleaved rounds. Per round and thread, from /proc: user and system CPU per
# request, voluntary and involuntary context switches and read and write system calls per request; then the median
# of the rounds' totals and the shared hit's ratio to the disk hit (issue 46: ≤ 1.4×).
# In the same rounds, raw libmicrohttpd (Benchmarks/mhd-baseline, the same URLs) answering at once and through the
# hand-off a shared hit takes, with none of unicache's code (MHD_BASELINE_HANDOFF): each request suspended and
# resumed on the polling thread (`self`), resumed by a second thread (`thread`), and resumed by a second thread once a
# `GET` of it has been answered by the same redis-server (`redis`; values of 276 bytes, a demo subscription's entry).
# What `redis` costs over answering at once is the floor of the hand-off in these two libraries and the kernel.
# `loop` is the same `GET` with no second thread (libmicrohttpd and the Redis socket on one epoll loop): what it costs
# over answering at once is the floor of a shared hit whose Redis connection lives on the polling thread.
# With PERF=1 (needs `perf`, Debian's linux-perf), one more round of each unicache server under `perf record -e
# cpu-clock` with DWARF call graphs prints the CPU per request of the frames that tell the two apart (inclusive: a
# frame's callees count), scaled to that round's /proc figures.
# Needs wrk, taskset, redis-server, redis-cli, cc and pkg-config. Env: ROUNDS (5), DURATION (5s, in seconds), PORT
# (19621), PERF.
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT=$PWD
# shellcheck source=scripts/bench-common.sh
source "$ROOT/scripts/bench-common.sh"
ROUNDS=${ROUNDS:-5}
DURATION=${DURATION:-5s}
PORT=${PORT:-19621}
SERVER_CPU=0
WRK_CPU=1
TOOLS=(wrk taskset curl redis-server redis-cli cc pkg-config)
[[ -z ${PERF:-} ]] || TOOLS+=(perf)
for tool in "${TOOLS[@]}"; do
  command -v "$tool" >/dev/null || { echo "bench-threads: missing $tool" >&2; exit 1; }
done

echo "== build"
swift build -c release --static-swift-stdlib --scratch-path .build-release --product unicache 2>&1 | tail -1
BIN=$ROOT/.build-release/release/unicache
build_baseline
WORK=$(mktemp -d /tmp/unicache-bench-threads-XXXXXX)
PIDS=()
cleanup() { for pid in "${PIDS[@]}"; do kill "$pid" 2>/dev/null || true; done; rm -rf "$WORK"; }
trap cleanup EXIT
KEYS=1000
keys_script "$WORK/keys.lua" "$KEYS"

REDIS_PORT=$((PORT + 9))
taskset -c "$WRK_CPU" redis-server --port "$REDIS_PORT" --bind 127.0.0.1 --save '' --appendonly no \
  >"$WORK/redis.log" 2>&1 &
PIDS+=($!)
wait_redis "$REDIS_PORT"

# start NAME PORT FLAGS...: a server on SERVER_CPU (in step with Redis when it has one), warmed with every key twice
# and a first wrk run.
declare -A SERVER_PID=() SERVER_PORT=()
start() {
  local name=$1 port=$2
  shift 2
  taskset -c "$SERVER_CPU" "$BIN" --port "$port" --memory-entries 1 --demo-latency 0ms --log-level warning "$@" \
    >"$WORK/$name.log" 2>&1 &
  SERVER_PID[$name]=$!
  SERVER_PORT[$name]=$port
  PIDS+=($!)
  wait_readyz "$port" "$name" "$WORK/$name.log"
  [[ " $* " != *" --redis "* ]] || wait_connected "$port"
  warm "$port"
  warm "$port"
  taskset -c "$WRK_CPU" wrk -t1 -c16 -d2s -s "$WORK/keys.lua" "http://127.0.0.1:$port" >/dev/null
}
start disk-hit "$PORT" --data-dir "$WORK/disk"
start shared-hit $((PORT + 1)) --disk-limit 0 --redis "redis://127.0.0.1:$REDIS_PORT"

# The raw libmicrohttpd servers' values in the same redis-server, under the paths they are asked for.
seed_raw_values "$REDIS_PORT"

# start_baseline NAME PORT [HANDOFF]: raw libmicrohttpd on SERVER_CPU, answering at once or after HANDOFF, warmed.
start_baseline() {
  local name=$1 port=$2 handoff=${3:-}
  if [[ -n $handoff ]]; then
    MHD_BASELINE_HANDOFF=$handoff MHD_BASELINE_REDIS_PORT=$REDIS_PORT taskset -c "$SERVER_CPU" "$BASELINE_BIN" "$port" \
      >"$WORK/$name.log" 2>&1 &
  else
    taskset -c "$SERVER_CPU" "$BASELINE_BIN" "$port" >"$WORK/$name.log" 2>&1 &
  fi
  SERVER_PID[$name]=$!
  SERVER_PORT[$name]=$port
  PIDS+=($!)
  wait_readyz "$port" "$name" "$WORK/$name.log" # it answers 200 on every path
  taskset -c "$WRK_CPU" wrk -t1 -c16 -d2s -s "$WORK/keys.lua" "http://127.0.0.1:$port" >/dev/null
}
BASELINES=(mhd-now mhd-self mhd-thread mhd-redis mhd-loop)
start_baseline mhd-now $((PORT + 2))
start_baseline mhd-self $((PORT + 3)) self
start_baseline mhd-thread $((PORT + 4)) thread
start_baseline mhd-redis $((PORT + 5)) redis
start_baseline mhd-loop $((PORT + 6)) loop

# snapshot PID: per thread "tid name utime stime voluntary involuntary syscr syscw".
snapshot() {
  local t
  for t in /proc/"$1"/task/*; do
    printf '%s %s %s %s %s\n' "${t##*/}" "$(tr ' ' _ <"$t/comm")" "$(awk '{print $14, $15}' "$t/stat")" \
      "$(awk '/^voluntary_ctxt_switches/ {v = $2} /^nonvoluntary_ctxt_switches/ {n = $2} END {print v, n}' \
        "$t/status")" \
      "$(awk '/^syscr/ {r = $2} /^syscw/ {w = $2} END {print r, w}' "$t/io")"
  done | sort
}

# round NAME [PERF_DATA]: one wrk run against NAME; prints its busy threads and sets TOTAL (CPU µs per request) and
# THREAD (thread name → CPU µs per request). With PERF_DATA, perf records the server meanwhile.
declare -A THREAD=()
round() {
  local name=$1 data=${2:-} pid=${SERVER_PID[$1]} perf_pid="" requests
  snapshot "$pid" >"$WORK/before"
  : >"$WORK/rows"
  if [[ -n $data ]]; then
    # For the middle of the run: a whole second less than it (perf stops with its command; a background job of a
    # script ignores SIGINT).
    taskset -c "$WRK_CPU" perf record -q -e cpu-clock -F 2000 --call-graph dwarf,8192 -p "$pid" -o "$data" \
      -- sleep $((${DURATION%s} - 1)) >/dev/null 2>&1 &
    perf_pid=$!
  fi
  requests=$(taskset -c "$WRK_CPU" wrk -t1 -c16 -d"$DURATION" -s "$WORK/keys.lua" \
    "http://127.0.0.1:${SERVER_PORT[$name]}" | awk '/requests in/ {print $1}')
  [[ -z $perf_pid ]] || wait "$perf_pid" || true
  snapshot "$pid" >"$WORK/after"
  join "$WORK/before" "$WORK/after" | awk -v n="$requests" -v hz="$CLK_TCK" -v who="$name" -v rows="$WORK/rows" '
    { u = ($10 - $3) / hz * 1e6 / n; s = ($11 - $4) / hz * 1e6 / n
      if (u + s < 0.05) next
      printf "  %-10s %-16s user %5.2f sys %5.2f µs  voluntary %4.2f involuntary %4.2f  read %4.2f write %4.2f\n",
        who, $2, u, s, ($12 - $5) / n, ($13 - $6) / n, ($14 - $7) / n, ($15 - $8) / n > rows
      print $2, u + s; t += u + s }
    END { print "total", t }' >"$WORK/threads"
  THREAD=()
  local thread us
  while read -r thread us; do
    if [[ $thread == total ]]; then TOTAL=$us; else THREAD[$thread]=$us; fi
  done <"$WORK/threads"
}

echo "== $ROUNDS interleaved rounds, wrk -t1 -c16 -d$DURATION, $KEYS keys; per request"
declare -a DISK=() SHARED=() RATIO=() OVER=() FLOOR=() LOOP_FLOOR=()
declare -A RAW=() LAST=()
for r in $(seq 1 "$ROUNDS"); do
  round disk-hit
  cat "$WORK/rows"
  DISK+=("$TOTAL")
  round shared-hit
  cat "$WORK/rows"
  SHARED+=("$TOTAL")
  RATIO+=("$(awk -v a="$TOTAL" -v b="${DISK[-1]}" 'BEGIN {printf "%.3f", a / b}')")
  OVER+=("$(awk -v a="$TOTAL" -v b="${DISK[-1]}" 'BEGIN {printf "%.2f", a - b}')")
  for name in "${BASELINES[@]}"; do
    round "$name"
    cat "$WORK/rows"
    RAW[$name]+="$TOTAL "
    LAST[$name]=$TOTAL
  done
  FLOOR+=("$(awk -v a="${LAST[mhd-redis]}" -v b="${LAST[mhd-now]}" 'BEGIN {printf "%.2f", a - b}')")
  LOOP_FLOOR+=("$(awk -v a="${LAST[mhd-loop]}" -v b="${LAST[mhd-now]}" 'BEGIN {printf "%.2f", a - b}')")
  printf 'round %d: disk hit %.2f µs, shared hit %.2f µs: %sx (+%s µs); libmicrohttpd at once %.2f, suspended and' \
    "$r" "${DISK[-1]}" "${SHARED[-1]}" "${RATIO[-1]}" "${OVER[-1]}" "${LAST[mhd-now]}"
  printf ' resumed on its thread %.2f, by a second thread %.2f, after a Redis GET on it %.2f µs (+%s µs), after a' \
    "${LAST[mhd-self]}" "${LAST[mhd-thread]}" "${LAST[mhd-redis]}" "${FLOOR[-1]}"
  printf ' Redis GET on the polling thread %.2f µs (+%s µs)\n' "${LAST[mhd-loop]}" "${LOOP_FLOOR[-1]}"
done
median_of() { printf '%s\n' "$@" | median; }
DISK_MEDIAN=$(median_of "${DISK[@]}")
printf 'median: disk hit %.2f µs, shared hit %.2f µs; shared / disk %sx (rounds: %s); the shared hit over the disk' \
  "$DISK_MEDIAN" "$(median_of "${SHARED[@]}")" "$(median_of "${RATIO[@]}")" "${RATIO[*]}"
printf ' hit +%s µs, where 1.4x allows +%.2f\n' "$(median_of "${OVER[@]}")" \
  "$(awk -v d="$DISK_MEDIAN" 'BEGIN {print 0.4 * d}')"
# shellcheck disable=SC2086 # the rounds' figures are words
printf 'median: libmicrohttpd at once %.2f µs; suspended and resumed on its thread %.2f, by a second thread %.2f,' \
  "$(median_of ${RAW[mhd-now]})" "$(median_of ${RAW[mhd-self]})" "$(median_of ${RAW[mhd-thread]})"
# shellcheck disable=SC2086
printf ' after a Redis GET on it %.2f µs: the hand-off alone +%s µs over answering at once (rounds: %s)\n' \
  "$(median_of ${RAW[mhd-redis]})" "$(median_of "${FLOOR[@]}")" "${FLOOR[*]}"
# shellcheck disable=SC2086
printf 'median: after a Redis GET on the polling thread itself (one loop, no second thread) %.2f µs: +%s µs over' \
  "$(median_of ${RAW[mhd-loop]})" "$(median_of "${LOOP_FLOOR[@]}")"
printf ' answering at once (rounds: %s)\n' "${LOOP_FLOOR[*]}"

[[ -n ${PERF:-} ]] || exit 0
# The frames, as name=pattern (matched against perf's symbol names: Swift's mangled ones). Inclusive, so they overlap
# (the suspension holds one of the two `epoll_ctl`s; the reply handled holds the resumption's `write`).
FRAMES=(
  "send the answer (sendmsg)=^__libc_sendmsg$"
  "read the request (recv)=^__libc_recv$"
  "wait (epoll_wait)=^epoll_wait$"
  "epoll_ctl (MHD: a suspension leaves the set, a resumption joins it)=^__GI_epoll_ctl$"
  "the disk tier's read=secondTierNow"
  "suspend and hand to the shared tier=MHDCallbacksO7suspend"
  "the Redis batch written (one write per batch of GETs)=NIOPosix5PosixO5write10descriptor"
  "the Redis replies read (one read per batch)=NIOPosix5PosixO4read10descriptor"
  "the GET's reply handled (the next three among it)=CommandHandlerC11channelRead"
  "the entry decoded and verified=EntryCodecV6decode_"
  "the entry promoted into memory=MemoryTierC7promote"
  "the request resumed (MHD_resume_connection: its wake-up write)=^MHD_resume_connection$"
  "the answer queued=MHDCallbacksO6answer"
  "malloc=^__GI___libc_malloc$"
  "swift_retain / swift_release=^swift_re(tain|lease)$"
)
echo "== perf: one more round of each; CPU µs per request in the frames below (inclusive), per thread"
for name in disk-hit shared-hit; do
  round "$name" "$WORK/$name.data"
  perf script -i "$WORK/$name.data" -F comm,ip,sym 2>/dev/null >"$WORK/$name.stacks"
  for thread in "${!THREAD[@]}"; do
    printf "  %-10s %-16s %5.2f µs  all of the thread's CPU\n" "$name" "$thread" "${THREAD[$thread]}"
  done
  for frame in "${FRAMES[@]}"; do
    for thread in "${!THREAD[@]}"; do
      awk -v thread="$thread" -v pattern="${frame#*=}" -v label="${frame%%=*}" -v us="${THREAD[$thread]}" \
        -v who="$name" '
        BEGIN { RS = ""; FS = "\n" }
        { split($1, head, " "); if (head[1] != thread) next; samples++
          for (i = 2; i <= NF; i++) { f = $i; sub(/^[ \t]*[0-9a-f]+ /, "", f); sub(/ \(inlined\)$/, "", f)
            if (f ~ pattern) { hits++; break } } }
        END { us = samples > 0 ? hits / samples * us : 0
          if (us >= 0.01) printf "  %-10s %-16s %5.2f µs  %s\n", who, thread, us, label }' \
        "$WORK/$name.stacks"
    done
  done
done
