#!/usr/bin/env bash
# Instructions per warm hit (callgrind), the figure that does not drift with the machine's speed: raw libmicrohttpd
# with one response made at start-up (baseline-once), the warm unicache resource (warm-once) and the same with
# --auth jwt and a remembered token (warm-jwt), as bench-http.sh serves them. Each server runs under
# `valgrind --tool=callgrind`; after a warm-up the counts are zeroed, wrk sends DURATION of keep-alive requests over
# 4 connections, and the counts are dumped. Prints user-space instructions per request, split into libc's memset
# (libmicrohttpd clears a connection's memory pool, 8 KiB for unicache, 32 KiB by default, for every request;
# callgrind counts `rep stosb` per byte) and the rest, with the rest's ratio to the baseline. The kernel's share
# (about two thirds of a warm hit's CPU) is not counted.
# Needs valgrind (apt-get install -y valgrind). Env: DURATION (15s), PORT (19611).
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT=$PWD
DURATION=${DURATION:-15s}
PORT=${PORT:-19611}

for tool in valgrind callgrind_control callgrind_annotate wrk curl objcopy cc pkg-config python3; do
  command -v "$tool" >/dev/null || { echo "bench-instructions: missing $tool" >&2; exit 1; }
done

echo "== build"
swift build -c release --static-swift-stdlib --scratch-path .build-release --product unicache 2>&1 | tail -1
BASELINE_BIN=$ROOT/Benchmarks/mhd-baseline/mhd-baseline
# shellcheck disable=SC2046 # pkg-config's flags are words
cc -O2 -Wall -Wextra -o "$BASELINE_BIN" Benchmarks/mhd-baseline/mhd-baseline.c $(pkg-config --cflags --libs libmicrohttpd)
WORK=$(mktemp -d /tmp/unicache-bench-instructions-XXXXXX)
trap 'rm -rf "$WORK"' EXIT
# valgrind 3.19 cannot read the static binary's debug information: a copy without it.
objcopy --strip-debug "$ROOT/.build-release/release/unicache" "$WORK/unicache"

python3 "$ROOT/scripts/dev-token.py" keygen "$WORK/keys" >/dev/null
JWT=$(python3 "$ROOT/scripts/dev-token.py" mint "$WORK/keys" --sub alice --ttl 86400)

# measure NAME PATH HEADER COMMAND...: prints NAME, requests, instructions per request (all, memset, the rest).
declare -A REST=()
measure() {
  local name=$1 path=$2 header=$3
  shift 3
  local out=$WORK/$name
  valgrind --tool=callgrind --callgrind-out-file="$out.%p" --dump-instr=no "$@" >"$WORK/$name.log" 2>&1 &
  local pid=$!
  for _ in $(seq 1 300); do
    curl -sS -o /dev/null -H "$header" "http://127.0.0.1:$PORT$path" 2>/dev/null && break
    sleep 0.2
  done
  for _ in $(seq 1 50); do curl -sS -o /dev/null -H "$header" "http://127.0.0.1:$PORT$path"; done
  callgrind_control -z "$pid" >/dev/null 2>&1
  local requests
  requests=$(wrk -t1 -c4 -d"$DURATION" -H "$header" "http://127.0.0.1:$PORT$path" | awk '/requests in/ {print $1}')
  callgrind_control -d "$pid" >/dev/null 2>&1
  kill "$pid"
  wait "$pid" 2>/dev/null || true
  local dump
  dump=$(ls "$out".*.1)
  local total memset
  total=$(callgrind_annotate "$dump" 2>/dev/null | awk '/PROGRAM TOTALS/ {gsub(",", "", $1); print $1}')
  memset=$(callgrind_annotate --threshold=100 "$dump" 2>/dev/null | awk '/__memset_[a-z0-9_]+ \[/ {gsub(",", "", $1); s += $1} END {print s + 0}')
  REST[$name]=$(awk -v t="$total" -v m="$memset" -v n="$requests" 'BEGIN {printf "%.0f", (t - m) / n}')
  printf '%-14s %9d %12.0f %12.0f %12s\n' "$name" "$requests" "$(awk -v t="$total" -v n="$requests" 'BEGIN {print t / n}')" \
    "$(awk -v m="$memset" -v n="$requests" 'BEGIN {print m / n}')" "${REST[$name]}"
}

echo "== callgrind, wrk -t1 -c4 -d$DURATION per target; instructions per request"
printf '%-14s %9s %12s %12s %12s\n' target requests all memset rest
# The create-once baseline (set for valgrind itself: it does not follow `env`'s exec); unicache ignores it.
export MHD_BASELINE_RESPONSE=once
measure baseline-once / "X-Bench: 1" "$BASELINE_BIN" "$PORT"
measure warm-once /v1/users/alice/subscription "X-Bench: 1" \
  "$WORK/unicache" --port "$PORT" --data-dir "$WORK/warm" --log-level warning
measure warm-jwt /v1/users/alice/subscription "Authorization: Bearer $JWT" \
  "$WORK/unicache" --port "$PORT" --data-dir "$WORK/jwt" --log-level warning --auth jwt \
  --jwt-jwks "$WORK/keys/jwks.json" --jwt-audience unicache
echo
for name in warm-once warm-jwt; do
  printf '%s: %s instructions per request besides memset, %.2fx the baseline'"'"'s %s\n' "$name" "${REST[$name]}" \
    "$(awk -v a="${REST[$name]}" -v b="${REST[baseline-once]}" 'BEGIN {print a / b}')" "${REST[baseline-once]}"
done
