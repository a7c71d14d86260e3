#!/usr/bin/env bash
# Instructions per warm hit (callgrind), the figure that does not drift with the machine's speed: raw libmicrohttpd
# with one response made at start-up (baseline-once), the warm unicache resource (warm-once) and the same with
# --auth jwt and a remembered token (warm-jwt), as bench-http.sh serves them; then an L1 miss answered from the
# disk tier (disk-hit) and from a redis-server started here (shared-hit), as bench-shared.sh makes them (a memory
# tier of one entry; here 20 keys over 16 connections, so that the answers of the second are remembered as they are
# at full speed). Each server runs under
# `valgrind --tool=callgrind`; after a warm-up the counts are zeroed, wrk sends DURATION of keep-alive requests over
# 4 connections, and the counts are dumped. Prints user-space instructions per request, split into libc's memset
# (libmicrohttpd clears a connection's memory pool, 8 KiB for unicache, 32 KiB by default, for every request;
# callgrind counts `rep stosb` per byte), SHA-256 (the entry format's digests: BoringSSL's blocks where they are
# written, and where they are read all of GnuTLS and nettle, which serve nothing else here; valgrind hides the CPU's
# SHA extensions, so both run code that takes many times the instructions) and the rest, with the rest's ratio to
# the baseline.
# The kernel's share (about two thirds of a warm hit's CPU) is not counted.
# Needs valgrind (apt-get install -y valgrind) and redis-server. Env: DURATION (15s), PORT (19611), ONLY (targets).
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT=$PWD
# shellcheck source=scripts/bench-common.sh
source "$ROOT/scripts/bench-common.sh"
DURATION=${DURATION:-15s}
PORT=${PORT:-19611}

for tool in valgrind callgrind_control callgrind_annotate wrk curl objcopy cc pkg-config python3 redis-server redis-cli; do
  command -v "$tool" >/dev/null || { echo "bench-instructions: missing $tool" >&2; exit 1; }
done

echo "== build"
swift build -c release --static-swift-stdlib --scratch-path .build-release --product unicache 2>&1 | tail -1
build_baseline
WORK=$(mktemp -d /tmp/unicache-bench-instructions-XXXXXX)
REDIS_PID=
trap '[[ -z $REDIS_PID ]] || kill "$REDIS_PID"; rm -rf "$WORK"' EXIT
ONLY=${ONLY:-baseline-once warm-once warm-jwt disk-hit shared-hit}
# valgrind 3.19 cannot read the static binary's debug information: a copy without it.
objcopy --strip-debug "$ROOT/.build-release/release/unicache" "$WORK/unicache"

python3 "$ROOT/scripts/dev-token.py" keygen "$WORK/keys" >/dev/null
JWT=$(python3 "$ROOT/scripts/dev-token.py" mint "$WORK/keys" --sub alice --ttl 86400)

# The L1 misses' requests: 20 keys in turn (the wrk script), each warmed first.
KEYS=20
keys_script "$WORK/keys.lua" "$KEYS"

# measure NAME PATH HEADER COMMAND...: prints NAME, requests, instructions per request (all, memset, SHA-256, the
# rest). With LUA set: wrk runs that script over 16 connections, after each of the KEYS keys is asked twice.
declare -A REST=()
measure() {
  local name=$1 path=$2 header=$3
  shift 3
  [[ " $ONLY " == *" $name "* ]] || return 0
  local out=$WORK/$name
  valgrind --tool=callgrind --callgrind-out-file="$out.%p" --dump-instr=no "$@" >"$WORK/$name.log" 2>&1 &
  local pid=$!
  for _ in $(seq 1 300); do
    curl -sS -o /dev/null -H "$header" "http://127.0.0.1:$PORT$path" 2>/dev/null && break
    sleep 0.2
  done
  local wrk_args=(-t1 -c4)
  if [[ -n ${LUA:-} ]]; then
    wrk_args=(-t1 -c16 -s "$LUA")
    for _ in 1 2; do
      for i in $(seq 0 $((KEYS - 1))); do curl -sS -o /dev/null "http://127.0.0.1:$PORT/v1/users/u$i/subscription"; done
    done
  else
    for _ in $(seq 1 50); do curl -sS -o /dev/null -H "$header" "http://127.0.0.1:$PORT$path"; done
  fi
  callgrind_control -z "$pid" >/dev/null 2>&1
  local requests
  requests=$(wrk "${wrk_args[@]}" -d"$DURATION" -H "$header" "http://127.0.0.1:$PORT$path" | awk '/requests in/ {print $1}')
  callgrind_control -d "$pid" >/dev/null 2>&1
  kill "$pid"
  wait "$pid" 2>/dev/null || true
  local dump
  dump=$(ls "$out".*.1)
  local total memset sha
  total=$(callgrind_annotate "$dump" 2>/dev/null | awk '/PROGRAM TOTALS/ {gsub(",", "", $1); print $1}')
  memset=$(callgrind_annotate --threshold=100 "$dump" 2>/dev/null | awk '/__memset_[a-z0-9_]+ \[/ {gsub(",", "", $1); s += $1} END {print s + 0}')
  sha=$(callgrind_annotate --threshold=100 "$dump" 2>/dev/null | awk '/sha256_block_data_order|\/libnettle\.so|\/libgnutls\.so/ {gsub(",", "", $1); s += $1} END {print s + 0}')
  REST[$name]=$(awk -v t="$total" -v m="$memset" -v h="$sha" -v n="$requests" 'BEGIN {printf "%.0f", (t - m - h) / n}')
  printf '%-14s %9d %12.0f %12.0f %12.0f %12s\n' "$name" "$requests" "$(awk -v t="$total" -v n="$requests" 'BEGIN {print t / n}')" \
    "$(awk -v m="$memset" -v n="$requests" 'BEGIN {print m / n}')" "$(awk -v h="$sha" -v n="$requests" 'BEGIN {print h / n}')" \
    "${REST[$name]}"
}

echo "== callgrind, wrk -t1 -c4 -d$DURATION per target; instructions per request"
printf '%-14s %9s %12s %12s %12s %12s\n' target requests all memset sha256 rest
# The create-once baseline (set for valgrind itself: it does not follow `env`'s exec); unicache ignores it.
export MHD_BASELINE_RESPONSE=once
measure baseline-once / "X-Bench: 1" "$BASELINE_BIN" "$PORT"
measure warm-once /v1/users/alice/subscription "X-Bench: 1" \
  "$WORK/unicache" --port "$PORT" --data-dir "$WORK/warm" --log-level warning
measure warm-jwt /v1/users/alice/subscription "Authorization: Bearer $JWT" \
  "$WORK/unicache" --port "$PORT" --data-dir "$WORK/jwt" --log-level warning --auth jwt \
  --jwt-jwks "$WORK/keys/jwks.json" --jwt-audience unicache
LUA=$WORK/keys.lua measure disk-hit / "X-Bench: 1" \
  "$WORK/unicache" --port "$PORT" --data-dir "$WORK/disk" --memory-entries 1 --demo-latency 0ms --log-level warning
if [[ " $ONLY " == *" shared-hit "* ]]; then
  REDIS_PORT=$((PORT + 1))
  redis-server --port "$REDIS_PORT" --bind 127.0.0.1 --save '' --appendonly no --daemonize no >"$WORK/redis.log" 2>&1 &
  REDIS_PID=$!
  wait_redis "$REDIS_PORT"
  LUA=$WORK/keys.lua measure shared-hit / "X-Bench: 1" "$WORK/unicache" --port "$PORT" --disk-limit 0 \
    --memory-entries 1 --demo-latency 0ms --redis "redis://127.0.0.1:$REDIS_PORT" --log-level warning
fi
echo
for name in warm-once warm-jwt; do
  [[ -n ${REST[$name]:-} && -n ${REST[baseline-once]:-} ]] || continue
  printf '%s: %s instructions per request besides memset, %.2fx the baseline'"'"'s %s\n' "$name" "${REST[$name]}" \
    "$(awk -v a="${REST[$name]}" -v b="${REST[baseline-once]}" 'BEGIN {print a / b}')" "${REST[baseline-once]}"
done
if [[ -n ${REST[disk-hit]:-} && -n ${REST[shared-hit]:-} ]]; then
  printf 'shared-hit: %.2fx the disk hit'"'"'s instructions besides memset and SHA-256\n' \
    "$(awk -v a="${REST[shared-hit]}" -v b="${REST[disk-hit]}" 'BEGIN {print a / b}')"
fi
