#!/usr/bin/env bash
# Soak and pressure checks an operator would run before trusting unicache (not part of `make test`): each section
# starts the release binary on loopback, pushes it, and prints the figures the README reports.
#   scripts/pressure.sh [memory|kill9|fulldisk|floods|trickleflood|circuit|malformed|all]   (default all; root for fulldisk's tmpfs)
#   UNICACHE_BIN=/path/to/unicache skips the build; PUT_CONNECTIONS (16) sets the memory section's writing connections.
#   Needs curl and wrk (apt-get install -y curl wrk).
set -euo pipefail
cd "$(dirname "$0")/.."
STARTUP_TIMEOUT=60
STOP_TIMEOUT=20
TOKEN=pressure
WORK="$(mktemp -d)"
SERVICE_LOG="$WORK/service.log"
fail() { printf 'pressure: FAIL: %s\n' "$*" >&2; exit 1; }
# shellcheck source=scripts/service-lib.sh
source scripts/service-lib.sh
MOUNTED=""
# Helpers a section started (the circuit's upstream, the trickle flood), ended even when the section fails.
HELPERS=()
cleanup() {
  if [[ -n "$SERVICE_PID" ]] && kill -0 "$SERVICE_PID" 2>/dev/null; then kill -KILL "$SERVICE_PID" 2>/dev/null || true; fi
  if ((${#HELPERS[@]})); then kill -KILL "${HELPERS[@]}" 2>/dev/null || true; fi
  if [[ -n "$MOUNTED" ]]; then umount "$MOUNTED" 2>/dev/null || true; fi
  rm -rf "$WORK"
}
trap cleanup EXIT
for tool in curl wrk; do command -v "$tool" >/dev/null || fail "$tool is not installed (apt-get install -y $tool)"; done

if [[ -n "${UNICACHE_BIN:-}" ]]; then BIN="$UNICACHE_BIN"; else
  swift build -c release --static-swift-stdlib --product unicache --scratch-path .build-release >&2
  BIN="$(swift build -c release --static-swift-stdlib --product unicache --scratch-path .build-release --show-bin-path)/unicache"
fi

start() { start_service env UNICACHE_ADMIN_TOKEN="$TOKEN" "$BIN" --port 0 "$@"; BASE="http://127.0.0.1:${SERVICE_PORT}"; }
rss_mib() { awk '/^VmRSS/ {printf "%.1f", $2 / 1024}' "/proc/$SERVICE_PID/status"; }
stat_field() { curl -s "$BASE/stats" | sed -E "s/.*\"$1\":\{[^}]*\"$2\":([0-9]+).*/\1/"; }
put() { curl -s -o /dev/null -w '%{http_code}' -X PUT -H "Authorization: Bearer $TOKEN" --data-binary "@$2" "$BASE/v1/cache/$1"; }
get() { curl -s -o "${2:-/dev/null}" -w '%{http_code}' -H "Authorization: Bearer $TOKEN" "$BASE/v1/cache/$1"; }
section() { printf '\n== %s\n' "$*"; }

# Runs put-unique.lua until COUNT answers (wrk would otherwise wait out its whole -d).
put_many() {
  local count=$1 bytes=$2 done_file="$WORK/wrk.done"
  rm -f "$done_file"
  COUNT=$count BODY_BYTES=$bytes TOKEN="$TOKEN" DONE_FILE="$done_file" \
    wrk -t1 -c"${PUT_CONNECTIONS:-16}" -d900s -s scripts/pressure/put-unique.lua "$BASE" >/dev/null &
  local wrk_pid=$!
  while [[ ! -e "$done_file" ]] && kill -0 "$wrk_pid" 2>/dev/null; do sleep 0.5; done
  kill "$wrk_pid" 2>/dev/null || true
  wait "$wrk_pid" 2>/dev/null || true
}

# (c) 200,000 raw PUTs of 1 KiB under --memory-limit 64MiB: resident memory against the limit; then a restart on
# the disk tier's 200,000 files measures the disk index's bytes per entry.
memory() {
  local limits=(--memory-limit 64MiB --memory-entries 1000000)
  start "${limits[@]}" --disk-limit 0
  section "memory, disk tier off: 200,000 PUTs of 1 KiB, --memory-limit 64MiB"
  local idle; idle="$(rss_mib)"
  put_many 200000 1024
  sleep 2   # the reclaimer trims once a second
  echo "idle RSS ${idle} MiB; after: RSS $(rss_mib) MiB, memory.bytes $(( $(stat_field memory bytes) >> 20 )) MiB, memory.entries $(stat_field memory entries)"
  stop_service

  start "${limits[@]}" --data-dir "$WORK/mem-data" --disk-limit 4GiB
  section "memory, disk tier on: 200,000 PUTs of 1 KiB, --memory-limit 64MiB"
  local empty; empty="$(rss_mib)"
  put_many 200000 1024
  sleep 2
  local entries; entries="$(stat_field disk entries)"
  echo "idle RSS ${empty} MiB; after: RSS $(rss_mib) MiB, memory.bytes $(( $(stat_field memory bytes) >> 20 )) MiB, disk.entries ${entries}"
  stop_service

  start "${limits[@]}" --data-dir "$WORK/mem-data" --disk-limit 4GiB
  local i
  for ((i = 0; i < 600; i++)); do [[ "$(stat_field disk entries)" -ge "$entries" ]] && break; sleep 0.5; done
  sleep 2   # the reclaimer trims once the index is rebuilt
  local rebuilt; rebuilt="$(awk '/^VmRSS/ {print $2}' "/proc/$SERVICE_PID/status")"
  section "disk index: restart on ${entries} entries"
  echo "RSS $(rss_mib) MiB once indexed; $(( (rebuilt * 1024 - ${empty%.*} * 1048576) / entries )) bytes per indexed entry over the empty start"
  stop_service
}

# (a) kill -9 in the middle of raw PUTs from 4 writers on a healthy disk, then (b) the same on a full disk (a 4 MiB
# tmpfs): after the restart every PUT answered 201 must be readable with its body, every 507 absent.
writer() {
  local lane=$1 count=$2 i status
  for ((i = lane; i < count; i += 4)); do
    status="$(put "kill:$i" "$WORK/body")" || true
    case "$status" in
      201 | 200) echo "$i" >>"$WORK/acknowledged.$lane" ;;
      507) echo "$i" >>"$WORK/refused.$lane" ;;
      *) echo "$i" >>"$WORK/unanswered.$lane" ;;
    esac
  done
}

put_kill_restart() {
  local dir=$1 count=$2 label=$3 lane
  start --data-dir "$dir" --disk-limit 1GiB
  head -c 65536 /dev/urandom >"$WORK/body"
  rm -f "$WORK"/acknowledged.* "$WORK"/refused.* "$WORK"/unanswered.*
  local writers=()
  for lane in 0 1 2 3; do touch "$WORK/acknowledged.$lane" "$WORK/refused.$lane"; writer "$lane" "$count" & writers+=($!); done
  # kill -9 once two thirds have been answered, while the writers go on
  while (( $(cat "$WORK"/acknowledged.* "$WORK"/refused.* | wc -l) < count * 2 / 3 )); do sleep 0.05; done
  kill -KILL "$SERVICE_PID"; wait "$SERVICE_PID" 2>/dev/null || true; SERVICE_PID=""
  wait "${writers[@]}"
  cat "$WORK"/acknowledged.* >"$WORK/acknowledged"; cat "$WORK"/refused.* >"$WORK/refused"
  start --data-dir "$dir" --disk-limit 1GiB
  local lost=0 resurrected=0 i
  while read -r i; do [[ "$(get "kill:$i" "$WORK/got")" == 200 ]] && cmp -s "$WORK/got" "$WORK/body" || lost=$((lost + 1)); done <"$WORK/acknowledged"
  while read -r i; do [[ "$(get "kill:$i")" == 404 ]] || resurrected=$((resurrected + 1)); done <"$WORK/refused"
  section "$label"
  echo "$(wc -l <"$WORK/acknowledged") acknowledged, $(wc -l <"$WORK/refused") refused (507), killed during the rest; after restart: ${lost} acknowledged lost, ${resurrected} refused readable"
  stop_service
}

kill9() { put_kill_restart "$WORK/kill-data" 3000 "kill -9 during 3,000 PUTs of 64 KiB from 4 writers, healthy disk"; }

fulldisk() {
  [[ "$(id -u)" == 0 ]] || { echo "fulldisk: needs root to mount a tmpfs; skipped"; return; }
  mkdir -p "$WORK/full"
  mount -t tmpfs -o size=4m tmpfs "$WORK/full" && MOUNTED="$WORK/full"
  put_kill_restart "$WORK/full" 300 "full disk (4 MiB tmpfs): kill -9 during 300 PUTs of 64 KiB from 4 writers"
  umount "$WORK/full" && MOUNTED=""
}

# (d) floods: idle connections beyond --max-connections, and connections trickling their headers. The clients are
# subshells that wait with bash's own `read -t` (no child process holds the socket after a kill); when the service
# closes a connection, its client connects again, as a flood does.
idle_client() {
  while exec 3<>"/dev/tcp/127.0.0.1/${SERVICE_PORT}"; do
    printf 'GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n' >&3
    read -t 120 -r -d '' _ <&3 || true
    exec 3<&-
  done
}

trickle_client() {
  local c
  while exec 3<>"/dev/tcp/127.0.0.1/${SERVICE_PORT}"; do
    for c in G E T " " / h e a l t h z; do
      printf '%s' "$c" >&3 || break
      read -t 5 -r -d '' _ <&3; (($? > 128)) || break   # a timeout goes on; EOF (closed by the service) reconnects
    done
    exec 3<&-
  done
}

# How many client sockets are connected to the service (accepted or waiting in its backlog), where ss exists.
client_connections() {
  command -v ss >/dev/null || return 0
  echo "$(ss -Htn state established "( dport = :${SERVICE_PORT} )" | wc -l) client connections open"
}

end_clients() { kill -KILL "$@" 2>/dev/null || true; wait "$@" 2>/dev/null || true; }

floods() {
  start --max-connections 256 --disk-limit 0 --header-timeout 10s
  local pids=() i
  for ((i = 0; i < 1000; i++)); do idle_client 2>/dev/null & pids+=($!); done
  sleep 2
  section "floods: 1,000 idle keep-alive connections against --max-connections 256"
  client_connections
  echo "a new client's /healthz: $(curl -s -o /dev/null -m 30 -w '%{http_code} in %{time_total} s' "$BASE/healthz")"
  end_clients "${pids[@]}"
  pids=()
  for ((i = 0; i < 500; i++)); do trickle_client 2>/dev/null & pids+=($!); done
  sleep 2
  local open; open="$(client_connections)"
  local answered=0 slowest=0 took
  for ((i = 0; i < 8; i++)); do
    took="$(curl -s -o /dev/null -m 60 -w '%{http_code} %{time_total}' "$BASE/healthz" || true)"
    if [[ "$took" == 200\ * ]]; then
      answered=$((answered + 1))
      slowest="$(awk -v a="$slowest" -v b="${took#200 }" 'BEGIN { print (b > a ? b : a) }')"
    fi
    sleep 2
  done
  section "floods: 500 connections trickling a byte every 5 s (--header-timeout 10s), a probe every 2 s"
  [[ -z "$open" ]] || echo "$open"
  echo "${answered} of 8 probes answered, the slowest in ${slowest} s"
  end_clients "${pids[@]}"
  stop_service
  trickle_flood
}

# 5,000 connections from 5 addresses (1,000 each, within --max-connections-per-ip) trickling a byte every 5 s and
# reconnecting when closed, against the default --max-connections 4096: 100 probes from another address, one every
# 0.2 s once the flood has filled every slot.
trickle_flood() {
  command -v python3 >/dev/null || { echo "trickle flood: needs python3; skipped"; return; }
  start --disk-limit 0
  python3 scripts/pressure/trickle.py "$SERVICE_PORT" 5 1000 127.0.0.2 127.0.0.3 127.0.0.4 127.0.0.5 127.0.0.6 \
    2>"$WORK/trickle.log" &
  local flood=$! i took times=()
  HELPERS+=("$flood")
  sleep 15
  local open; open="$(client_connections)"
  for ((i = 0; i < 100; i++)); do
    took="$(curl -s -o /dev/null -m 30 -w '%{http_code} %{time_total}' "$BASE/healthz" || true)"
    [[ "$took" == 200\ * ]] && times+=("${took#200 }") || times+=(timeout)
    sleep 0.2
  done
  end_clients "$flood"
  section "floods: 5,000 connections from 5 addresses trickling a byte every 5 s, default --max-connections 4096, 100 probes from another address"
  [[ -z "$open" ]] || echo "$open"
  local missed; missed="$(printf '%s\n' "${times[@]}" | grep -c timeout || true)"
  printf '%s\n' "${times[@]}" | grep -v timeout | sort -n | awk -v missed="$missed" '
    { t[NR] = $1; if ($1 <= 1) fast++ }
    END {
      p50 = int(NR * 0.5 + 0.999); p99 = int(NR * 0.99 + 0.999)
      printf "%d of 100 answered within 1 s (%d not within 30 s); p50 %.3f s, p99 %.3f s, slowest %.3f s\n",
        fast, missed, t[p50], t[p99], t[NR]
    }'
  stop_service
}

# (f) the open circuit: 50 users' subscriptions warmed from an upstream that then stops (its port refuses
# connections); once their TTL (1 s) is past, wrk asks for them over 50 connections: every answer is a stale copy
# served without contacting the upstream (CONTRACT §7.3: "at once"), but for the probe after each back-off.
circuit() {
  command -v python3 >/dev/null || { echo "circuit: needs python3; skipped"; return; }
  python3 scripts/pressure/upstream.py "$WORK/upstream.port" & local upstream=$! i
  HELPERS+=("$upstream")
  for ((i = 0; i < 50; i++)); do [[ -s "$WORK/upstream.port" ]] && break; sleep 0.1; done
  start --disk-limit 0 --upstream "subscription=http://127.0.0.1:$(cat "$WORK/upstream.port")" \
    --ttl subscription=1s
  for ((i = 0; i < 50; i++)); do curl -s -o /dev/null "$BASE/v1/users/u$i/subscription"; done
  end_clients "$upstream"
  sleep 2
  for ((i = 0; i < 10; i++)); do curl -s -o /dev/null "$BASE/v1/users/u$i/subscription"; done   # opens the circuit
  section "open circuit: 50 warm users' stale copies over 50 connections for 20 s, the upstream refusing connections"
  echo "subscription circuit: $(curl -s "$BASE/stats" \
    | python3 -c 'import json, sys; print(json.load(sys.stdin)["upstream"]["domains"]["subscription"]["circuit"])'); load average: $(cut -d' ' -f1-3 /proc/loadavg)"
  USERS=50 wrk -t1 -c50 -d20s --latency -s scripts/pressure/users.lua "$BASE" \
    | awk '/Requests\/sec/ { print "  " $0 } /^ +(50|90|99)%/ { print "  p" substr($1, 1, length($1) - 1) " " $2 } /Non-2xx/ { print "  " $0 }'
  echo "stale answers: $(stat_field cache stale)"
  stop_service
}

# (e) 5,000 malformed requests: answers that are not problem+json, and 5xx.
malformed() {
  start --disk-limit 0
  local kinds=(
    $'GET /v1/users/%2e%2e/profile HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n'
    $'GET /v1/users/alice/wellness?days=abc HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n'
    $'POST /v1/cache/k HTTP/1.1\r\nHost: x\r\nConnection: close\r\nContent-Length: 5\r\nContent-Length: 6\r\n\r\nhello'
    $'GET / HTTP/1.1\r\nHost: x\r\nConnection: close\r\nTransfer-Encoding: gzip\r\n\r\n'
    $'GARBAGE\r\n\r\n'
    $'GET /healthz HTTP/3.0\r\nHost: x\r\nConnection: close\r\n\r\n'
    $'GET /v1/users/alice/health/averages/9 HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n'
    $'PUT /v1/cache/k HTTP/1.1\r\nHost: x\r\nConnection: close\r\nContent-Length: 99999999\r\n\r\n'
  )
  local total=0 plain=0 server_errors=0 i answer
  for ((i = 0; i < 5000; i++)); do
    answer="$( { exec 3<>"/dev/tcp/127.0.0.1/${SERVICE_PORT}" && printf '%s' "${kinds[i % ${#kinds[@]}]}" >&3 && timeout 2 cat <&3; } 2>/dev/null | head -c 4096 || true)"
    total=$((total + 1))
    [[ "$answer" == *"application/problem+json"* ]] || plain=$((plain + 1))
    [[ "$answer" =~ ^HTTP/1\.[01]\ 5[0-9][0-9] && "$answer" != *"HTTP/1.1 501"* && "$answer" != *"HTTP/1.1 505"* ]] && server_errors=$((server_errors + 1))
  done
  section "malformed: ${total} requests of ${#kinds[@]} kinds"
  echo "${plain} answers not problem+json (libmicrohttpd's own pages: see README), ${server_errors} 5xx other than 501/505"
  stop_service
}

case "${1:-all}" in
  memory | kill9 | fulldisk | floods | malformed) "$1" ;;
  trickleflood) trickle_flood ;;
  circuit) circuit ;;
  all) kill9; fulldisk; floods; circuit; malformed; memory ;;
  *) fail "unknown section $1 (memory, kill9, fulldisk, floods, trickleflood, circuit, malformed, all)" ;;
esac
