#!/usr/bin/env bash
# HTTP benchmark: raw libmicrohttpd (C) vs MicroHTTPServer's sync and async routes, a warm unicache resource and a cold
# key behind an open circuit (its p99 is the answer time of a refused fetch).
# Builds release, pins each server to CPU 0 and wrk to CPU 1, runs `wrk -t1 -c64 -d10s --latency`
# RUNS times per target (interleaved rounds) and prints the median req/s, p99 latency and server CPU time per request
# (utime+stime from /proc/PID/stat), with ratios to the baseline.
#
# Add a target with one line in TARGETS: "name|server command ({port} is replaced)|path[|base]"; its ratios are to
# `base` (default: baseline). A command with {cert} and {key} serves HTTPS with the run's certificate (ECDSA P-256,
# made by openssl) and is measured over https (wrk keeps its TLS connections alive, as with HTTP). A fifth field is a
# request header wrk sends (`name|command|path|base|header`; default `X-Bench: 1`).
# Targets with the same command share one server process. Every target gets a warm-up request first.
# Env: RUNS (3), DURATION (10s), CONNECTIONS (64), SERVER_CPU (0), WRK_CPU (1), BASE_PORT (18080), SPIN_NS (1000),
# ONLY (names of the targets to run, e.g. ONLY="baseline unicache-warm baseline-tls unicache-tls"; default all).
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT=$PWD
# shellcheck source=scripts/bench-common.sh
source "$ROOT/scripts/bench-common.sh"

RUNS=${RUNS:-3}
DURATION=${DURATION:-10s}
CONNECTIONS=${CONNECTIONS:-64}
SERVER_CPU=${SERVER_CPU:-0}
WRK_CPU=${WRK_CPU:-1}
BASE_PORT=${BASE_PORT:-18080}
SPIN_NS=${SPIN_NS:-1000}

# The Makefile's release build (`make release`: static stdlib, .build-release), shared with conformance and Docker.
RELEASE=(-c release --static-swift-stdlib --scratch-path .build-release)
BIN_DIR=$ROOT/.build-release/release
BENCH_BIN=$BIN_DIR/HTTPBenchServer
DATA_DIR=$(mktemp -d /tmp/unicache-bench-XXXXXX)
REDIS_PORT=$((BASE_PORT + 90))

# --auth jwt (CONTRACT §8): an RS256 key pair and one token, reused by every request (a remembered token).
python3 "$ROOT/scripts/dev-token.py" keygen "$DATA_DIR/keys" >/dev/null
JWT=$(python3 "$ROOT/scripts/dev-token.py" mint "$DATA_DIR/keys" --sub alice --ttl 86400)

TARGETS=(
  "baseline|$BASELINE_BIN {port}|/"
  # Raw libmicrohttpd with one response made at start-up and queued for every request: the stack's limit, and the
  # base the warm hit's goals are judged against (warm-once, warm-jwt).
  "baseline-once|env MHD_BASELINE_RESPONSE=once $BASELINE_BIN {port}|/|baseline-once"
  # The same spending SPIN_NS nanoseconds of user time before each answer (a loop on the clock: no memory, allocation
  # or atomic): the ratios any server whose own code costs that much gets on this machine, beside warm-once's.
  "baseline-spin|env MHD_BASELINE_RESPONSE=once MHD_BASELINE_SPIN_NS=$SPIN_NS $BASELINE_BIN {port}|/|baseline-once"
  "swift-sync|$BENCH_BIN --port {port}|/sync"
  # The sync route with request ids (X-Request-ID on every answer): their cost on the warm path.
  "sync-ids|$BENCH_BIN --port {port} --request-ids|/sync"
  "swift-async|$BENCH_BIN --port {port}|/async"
  # The full stack: a warm read-through resource (fresh memory hit, answered on the MHD thread).
  "unicache-warm|$BIN_DIR/unicache --port {port} --data-dir $DATA_DIR/warm --log-level warning|/v1/users/alice/subscription"
  # The same server and request, its ratios to the create-once baseline.
  "warm-once|$BIN_DIR/unicache --port {port} --data-dir $DATA_DIR/warm --log-level warning|/v1/users/alice/subscription|baseline-once"
  # Raw libmicrohttpd sent warm-jwt's request (its ~500-byte Authorization header): what the bigger request costs
  # any server, apart from the gate.
  "baseline-jwt|env MHD_BASELINE_RESPONSE=once $BASELINE_BIN {port}|/|baseline-once|Authorization: Bearer $JWT"
  # The warm hit sent the same header without --auth: what the header costs unicache, apart from the decision.
  "warm-header|$BIN_DIR/unicache --port {port} --data-dir $DATA_DIR/warm --log-level warning|/v1/users/alice/subscription|baseline-once|Authorization: Bearer $JWT"
  # The same with --auth jwt and one reused token: the gate's remembered-token look-up on every request.
  "warm-jwt|$BIN_DIR/unicache --port {port} --data-dir $DATA_DIR/jwt --log-level warning --auth jwt --jwt-jwks $DATA_DIR/keys/jwks.json --jwt-audience unicache|/v1/users/alice/subscription|baseline-once|Authorization: Bearer $JWT"
  # The same with the shared Redis tier configured (CONTRACT §6): a fresh memory hit never asks Redis.
  "warm-redis|$BIN_DIR/unicache --port {port} --data-dir $DATA_DIR/redis --log-level warning --redis redis://127.0.0.1:$REDIS_PORT|/v1/users/alice/subscription"
  # A cold key while its domain's circuit is open (CONTRACT §7): the upstream refuses connections (nothing listens on
  # port 1), the first five failures open the circuit and every answer after is its 502, decided at the gate.
  "circuit-open|$BIN_DIR/unicache --port {port} --data-dir $DATA_DIR/open --log-level error --upstream subscription=http://127.0.0.1:1|/v1/users/alice/subscription"
  # Over TLS (CONTRACT §8.7): raw libmicrohttpd with the same TLS settings, and the warm hit, as its ratio.
  "baseline-tls|$BASELINE_BIN {port} {cert} {key}|/|baseline-tls"
  "unicache-tls|$BIN_DIR/unicache --port {port} --data-dir $DATA_DIR/tls --log-level warning --tls-cert {cert} --tls-key {key}|/v1/users/alice/subscription|baseline-tls"
)

if [[ -n ${ONLY:-} ]]; then
  selected=()
  for target in "${TARGETS[@]}"; do
    [[ " $ONLY " == *" ${target%%|*} "* ]] && selected+=("$target")
  done
  TARGETS=("${selected[@]}")
fi

for tool in wrk taskset curl cc pkg-config redis-server openssl; do
  command -v "$tool" >/dev/null || { echo "bench-http: missing $tool" >&2; exit 1; }
done

echo "== build"
build_baseline
swift build "${RELEASE[@]}" --product HTTPBenchServer 2>&1 | tail -1
swift build "${RELEASE[@]}" --product unicache 2>&1 | tail -1
swift build "${RELEASE[@]}" --product access-bench 2>&1 | tail -1

# The TLS targets' certificate: self-signed, for localhost and 127.0.0.1.
TLS_CERT=$DATA_DIR/tls-cert.pem TLS_KEY=$DATA_DIR/tls-key.pem
openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -days 2 -subj /CN=localhost \
  -addext subjectAltName=DNS:localhost,IP:127.0.0.1 -keyout "$TLS_KEY" -out "$TLS_CERT" 2>/dev/null

declare -A SERVER_PID=() SERVER_PORT=()
cleanup() {
  for pid in "${SERVER_PID[@]}"; do kill "$pid" 2>/dev/null || true; done
  for pid in "${SERVER_PID[@]}"; do wait "$pid" 2>/dev/null || true; done
  rm -rf "$DATA_DIR"
}
trap cleanup EXIT
redis-server --port "$REDIS_PORT" --bind 127.0.0.1 --save '' --appendonly no --daemonize no >/dev/null 2>&1 &
SERVER_PID[redis]=$!

# Starts (once per command) the server of a target; sets PID and PORT.
start_server() {
  local command=$1
  if [[ -n ${SERVER_PID[$command]:-} ]]; then
    PID=${SERVER_PID[$command]}; PORT=${SERVER_PORT[$command]}; return
  fi
  PORT=$((BASE_PORT + ${#SERVER_PID[@]}))
  local line=${command//\{port\}/$PORT}
  line=${line//\{cert\}/$TLS_CERT}
  line=${line//\{key\}/$TLS_KEY}
  # shellcheck disable=SC2086
  taskset -c "$SERVER_CPU" $line >/dev/null 2>&1 &
  PID=$!
  SERVER_PID[$command]=$PID
  SERVER_PORT[$command]=$PORT
}

wait_ready() {
  local url=$1 header=${2:-X-Bench: 1}
  for _ in $(seq 1 100); do
    # Any answer will do (the circuit-open target answers 502).
    [[ $(curl -sSk -o /dev/null -w '%{http_code}' -H "$header" "$url" 2>/dev/null) != 000 ]] && return 0
    sleep 0.1
  done
  echo "bench-http: $url did not answer" >&2
  exit 1
}


echo "== load before: $(cut -d' ' -f1-3 /proc/loadavg) ($(nproc) CPUs); wrk -t1 -c$CONNECTIONS -d$DURATION x$RUNS"
declare -A RPS=() P99=() CPU=() RPS_RUNS=() P99_RUNS=() CPU_RUNS=()
# Runs are interleaved (every target once per round), so drift in the machine's speed touches all targets alike.
for run in $(seq 1 "$RUNS"); do
  for target in "${TARGETS[@]}"; do
    IFS='|' read -r name command path _ header <<<"$target"
    header=${header:-X-Bench: 1}
    start_server "$command"
    scheme=http
    [[ $command == *"{cert}"* ]] && scheme=https
    url="$scheme://127.0.0.1:$PORT$path"
    [[ $run == 1 ]] && wait_ready "$url" "$header"
    before=$(cpu_ticks "$PID")
    output=$(taskset -c "$WRK_CPU" wrk -t1 -c"$CONNECTIONS" -d"$DURATION" --latency -H "$header" "$url")
    after=$(cpu_ticks "$PID")
    requests=$(awk '/requests in/ {print $1}' <<<"$output")
    rps=$(awk '/Requests\/sec/ {print $2}' <<<"$output")
    p99=$(to_us "$(awk '$1 == "99%" {print $2}' <<<"$output")")
    errors=$(awk '/Non-2xx|Socket errors/' <<<"$output")
    cpu=$(cpu_us_per_request $((after - before)) "$requests")
    printf '   %-14s run %d: %10.0f req/s  p99 %8.0f us  cpu %6s us/req %s\n' "$name" "$run" "$rps" "$p99" "$cpu" "$errors"
    RPS_RUNS[$name]+="$rps " P99_RUNS[$name]+="$p99 " CPU_RUNS[$name]+="$cpu "
  done
done
for target in "${TARGETS[@]}"; do
  IFS='|' read -r name _ _ <<<"$target"
  RPS[$name]=$(tr ' ' '\n' <<<"${RPS_RUNS[$name]}" | grep . | median)
  P99[$name]=$(tr ' ' '\n' <<<"${P99_RUNS[$name]}" | grep . | median)
  CPU[$name]=$(tr ' ' '\n' <<<"${CPU_RUNS[$name]}" | grep . | median)
done
echo "== load after: $(cut -d' ' -f1-3 /proc/loadavg)"

echo
printf '%-14s %12s %10s %12s %10s %10s\n' target "req/s(med)" "p99(us)" "cpu us/req" "rps/base" "cpu/base"
for target in "${TARGETS[@]}"; do
  IFS="|" read -r name _ _ base _ <<<"$target"
  base=${base:-baseline}
  printf '%-14s %12.0f %10.0f %12.2f %10.2f %10.2f  %s\n' "$name" "${RPS[$name]}" "${P99[$name]}" "${CPU[$name]}" \
    "$(awk -v a="${RPS[$name]}" -v b="${RPS[$base]}" 'BEGIN {print a / b}')" \
    "$(awk -v a="${CPU[$name]}" -v b="${CPU[$base]}" 'BEGIN {print a / b}')" "(to $base)"
done
echo "targets (to the create-once baseline): warm-jwt >= 0.80 rps/base; warm-once >= 0.85 rps/base and <= 1.25 cpu/base; sync, unicache-warm and warm-redis >= 0.85 rps/base and <= 1.25 cpu/base; async <= 2.5 cpu/base; circuit-open: its p99 is the answer time of a refused fetch; unicache-tls >= 0.85 rps/base (to baseline-tls)"

echo
echo "== access decision (server CPU $SERVER_CPU)"
taskset -c "$SERVER_CPU" "$BIN_DIR/access-bench"
