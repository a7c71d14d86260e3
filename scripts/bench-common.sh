# Helpers the wrk benchmarks share (sourced by bench-http.sh, bench-shared.sh, bench-instructions.sh and
# bench-threads.sh).

CLK_TCK=$(getconf CLK_TCK)

# The raw libmicrohttpd baseline every bench runs (Benchmarks/mhd-baseline), built by build_baseline (the caller's ROOT).
BASELINE_BIN=$ROOT/Benchmarks/mhd-baseline/mhd-baseline
build_baseline() {
  # shellcheck disable=SC2046 # pkg-config's flags are words
  cc -O2 -Wall -Wextra -o "$BASELINE_BIN" "$ROOT/Benchmarks/mhd-baseline/mhd-baseline.c" \
    $(pkg-config --cflags --libs libmicrohttpd)
}

# seed_raw_values PORT: the values the baseline's Redis hand-off (MHD_BASELINE_HANDOFF=redis) reads, in the
# redis-server on PORT: 276 bytes (a demo subscription's size) under each of the KEYS users' subscription paths
# (keys_script's key set; the caller's KEYS).
seed_raw_values() {
  local value i
  value=$(printf 'a%.0s' $(seq 1 276))
  for i in $(seq 0 $((KEYS - 1))); do echo "SET /v1/users/u$i/subscription $value"; done | redis-cli -p "$1" >/dev/null
}

# The CPU time so far of a process, or of several (PIDs separated by commas: a server's master and workers), in clock
# ticks (utime + stime from /proc/PID/stat); a process that has ended counts nothing.
cpu_ticks() {
  local pid total=0
  for pid in ${1//,/ }; do
    [[ -r /proc/$pid/stat ]] && total=$((total + $(awk '{print $14 + $15}' "/proc/$pid/stat")))
  done
  echo "$total"
}

# wrk latency like 612.00us / 1.23ms / 1.01s -> microseconds
to_us() {
  awk -v v="$1" 'BEGIN {
    n = v + 0
    if (v ~ /us$/) print n; else if (v ~ /ms$/) print n * 1000; else if (v ~ /s$/) print n * 1000000; else print n }'
}

# The median of numbers on standard input, one per line.
median() { sort -g | awk '{a[NR] = $1} END {print a[int((NR + 1) / 2)]}'; }

# CPU microseconds per request from a tick difference and a request count.
cpu_us_per_request() { awk -v t="$1" -v hz="$CLK_TCK" -v n="$2" 'BEGIN {printf "%.2f", t / hz / n * 1e6}'; }

# keys_script FILE KEYS: writes a wrk script that asks for the KEYS users' subscriptions in turn, one per request (the
# L1-miss benchmarks' key set: /v1/users/u0 to u<KEYS-1>).
keys_script() {
  cat >"$1" <<EOF
local n = 0
request = function()
  n = n + 1
  return wrk.format("GET", "/v1/users/u" .. (n % $2) .. "/subscription")
end
EOF
}

# wait_redis PORT: until the redis-server on PORT (plain TCP, 127.0.0.1) answers PING, at most 5 s.
wait_redis() {
  for _ in $(seq 1 100); do redis-cli -p "$1" ping >/dev/null 2>&1 && return 0; sleep 0.05; done
  echo "$(basename "$0"): redis-server on $1 did not answer" >&2
  exit 1
}

# wait_readyz PORT NAME LOG: until the unicache on PORT answers /readyz with 200, at most 5 s; else prints its LOG and
# exits.
wait_readyz() {
  for _ in $(seq 1 100); do
    [[ $(curl -sS -o /dev/null -w '%{http_code}' "http://127.0.0.1:$1/readyz" 2>/dev/null) == 200 ]] && return 0
    sleep 0.05
  done
  echo "$(basename "$0"): $2 did not start; its log:" >&2
  cat "$3" >&2
  exit 1
}

# wait_connected PORT: until the unicache on PORT reports its shared tier connected (subscribed and in step: its
# start-up reset done), at most 5 s.
wait_connected() {
  for _ in $(seq 1 100); do
    curl -sS "http://127.0.0.1:$1/readyz" | grep -q '"sharedTier":"connected"' && return 0
    sleep 0.05
  done
  echo "$(basename "$0"): the instance on $1 did not connect to Redis" >&2
  exit 1
}

# warm PORT: asks the unicache on PORT for each of the KEYS users' subscriptions once (keys_script's key set; the
# caller's KEYS), 32 at a time; the list of URLs goes to the caller's WORK.
warm() {
  for i in $(seq 0 $((KEYS - 1))); do
    printf 'url = "http://127.0.0.1:%s/v1/users/u%s/subscription"\noutput = "/dev/null"\n' "$1" "$i"
  done >"$WORK/warm.txt"
  curl -sS --no-progress-meter -Z --parallel-max 32 -K "$WORK/warm.txt"
}
