#!/usr/bin/env bash
# Shared-tier benchmark (CONTRACT §6) against the release build and a real redis-server on loopback:
#   1. an L1 miss answered from Redis (the memory tier holds 1 entry, the key set is 1,000 keys), against an L1
#      miss answered from the disk tier in the same run: req/s, p50, p99 and server CPU per request (wrk); beside them
#      nginx's proxy_cache hit (`nginx-cache-hit`, Debian's nginx-light, installed when missing): one worker pinned as
#      the server is, access_log off, the cache on the disk tier's filesystem, in front of an origin (a second server
#      block) serving the very bodies the disk-hit instance answers, at the same URLs; every measured request a HIT (the
#      origin's log does not grow); its CPU is its master's and children's (the worker, the cache manager);
#   2. a fleet stampede: 1,000 cold requests over 2 instances sharing a Redis (scripts/bench-stampede.py --fleet 2: a
#      C client, an upstream holding its answer STAMPEDE_HOLD seconds): the upstream's requests, and the last client's
#      delay after the upstream's answer, on a fresh process and on a warmed one; then the same on one instance
#      against raw libmicrohttpd answering 1,000 requests it held as long (bench-stampede.py --raw), in the same rounds;
#   1b. the same L1 misses with a key ring (--encryption-keys, CONTRACT §9), measured next to the ones without:
#      what sealing costs a disk hit and a shared hit;
#   1c. the same L1 misses answered from a second Redis that speaks TLS only (`rediss://`, a CA and a certificate
#      for 127.0.0.1 made here with openssl), measured next to the plain-TCP ones: what TLS costs a shared hit
#      (CONTRACT §10.4: at most 15 us of CPU);
#   1d. the same L1 misses answered from a Redis Cluster of three primaries (`--redis-cluster`, CONTRACT §13), measured
#      next to the single Redis: what the slot map costs a shared hit, and what Redis runs for each (INFO
#      commandstats, summed over the nodes): one GET on both;
#   3. a dead Redis: L1 misses fetched from a 0 ms demo upstream with --redis pointing at a port nothing listens
#      on, against the same without --redis: the latency a dead Redis adds to a request.
# Every redis-server runs on WRK_CPU, beside wrk and off the server's CPU, as `make bench-threads` runs it: in a
# deployment Redis is another machine's work, and a Redis the scheduler is free to place on the server's CPU shares
# that CPU with the server (2026-12-02, five interleaved rounds: a shared hit 1.47x the disk hit with Redis on wrk's
# CPU, 1.59x with Redis free on both).
# Env: RUNS (3), DURATION (5s), CONNECTIONS (16), SERVER_CPU (0), WRK_CPU (1), BASE_PORT (19080), STAMPEDE_HOLD (0.3).
# Beside the one-client runs, raw libmicrohttpd (Benchmarks/mhd-baseline, pinned as the servers are) answering at once
# and through a shared hit's hand-off with none of unicache's code (MHD_BASELINE_HANDOFF=redis: suspended, a `GET` of
# the path sent by a second thread to the same redis-server, resumed on its reply): the floors of a one-client disk hit
# and shared hit on this machine at that moment, which waking an idle CPU dominates.
# Targets: one-client shared hit p50 <= 250 us (also measured with Redis moved onto the server's CPU: its hops then
# cost what a disk hit's do); 16-client shared hit <= 35 us CPU, TLS adding <= 15 us; stampede
# <= upstream + 20 ms with 1 fetch; dead Redis <= 2 ms added; a key ring adds <= 10 us to a disk hit's and a shared
# hit's p50; issue 46: a shared hit's CPU <= 1.4x a disk hit's, a disk hit's <= 1.0x nginx's proxy_cache hit's, a
# single instance's stampede <= 1.7x raw libmicrohttpd's (the medians of the per-round ratios).
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT=$PWD
# shellcheck source=scripts/bench-common.sh
source "$ROOT/scripts/bench-common.sh"

RUNS=${RUNS:-3}
DURATION=${DURATION:-5s}
CONNECTIONS=${CONNECTIONS:-16}
SERVER_CPU=${SERVER_CPU:-0}
WRK_CPU=${WRK_CPU:-1}
BASE_PORT=${BASE_PORT:-19080}
STAMPEDE_HOLD=${STAMPEDE_HOLD:-0.3}
KEYS=1000

fail() { echo "bench-shared: $*" >&2; exit 1; }
for tool in wrk taskset curl redis-server redis-cli openssl cc pkg-config; do
  command -v "$tool" >/dev/null || fail "missing $tool"
done
# shellcheck source=scripts/ops-tools.sh
source "$ROOT/scripts/ops-tools.sh"
ensure_nginx

echo "== build"
# The Makefile's release build (`make release`), shared with conformance and Docker.
swift build -c release --static-swift-stdlib --scratch-path .build-release --product unicache 2>&1 | tail -1
BIN=$ROOT/.build-release/release/unicache
build_baseline
WORK=$(mktemp -d /tmp/unicache-bench-shared-XXXXXX)
REDIS_PORT=$((BASE_PORT + 99))
PIDS=()
cleanup() {
  for pid in "${PIDS[@]}"; do kill "$pid" 2>/dev/null || true; done
  for pid in "${PIDS[@]}"; do wait "$pid" 2>/dev/null || true; done
  rm -rf "$WORK"
}
trap cleanup EXIT

taskset -c "$WRK_CPU" redis-server --port "$REDIS_PORT" --bind 127.0.0.1 --save '' --appendonly no --daemonize no \
  >"$WORK/redis.log" 2>&1 &
REDIS_PID=$!
PIDS+=("$REDIS_PID")
wait_redis "$REDIS_PORT"

# A second Redis with TLS only, on a certificate for 127.0.0.1 from a CA made here.
TLS_PORT=$((BASE_PORT + 98))
openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -days 1 -subj "/CN=bench CA" \
  -addext "basicConstraints=critical,CA:TRUE" -addext "keyUsage=critical,keyCertSign" \
  -keyout "$WORK/ca.key" -out "$WORK/ca.pem" 2>/dev/null
openssl req -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -subj "/CN=127.0.0.1" \
  -keyout "$WORK/redis.key" -out "$WORK/redis.csr" 2>/dev/null
printf 'subjectAltName=IP:127.0.0.1\nextendedKeyUsage=serverAuth\n' >"$WORK/redis.ext"
openssl x509 -req -in "$WORK/redis.csr" -CA "$WORK/ca.pem" -CAkey "$WORK/ca.key" -CAcreateserial -days 1 \
  -extfile "$WORK/redis.ext" -out "$WORK/redis.pem" 2>/dev/null
taskset -c "$WRK_CPU" redis-server --port 0 --tls-port "$TLS_PORT" --tls-cert-file "$WORK/redis.pem" \
  --tls-key-file "$WORK/redis.key" --tls-ca-cert-file "$WORK/ca.pem" --tls-auth-clients no --bind 127.0.0.1 \
  --save '' --appendonly no --daemonize no >"$WORK/redis-tls.log" 2>&1 &
PIDS+=($!)
for _ in $(seq 1 100); do
  redis-cli --tls --cacert "$WORK/ca.pem" -p "$TLS_PORT" ping >/dev/null 2>&1 && break
  sleep 0.05
done

# A Redis Cluster of three primaries (no replicas: nothing here kills one), made by redis-cli --cluster create.
CLUSTER_PORTS=()
for n in 1 2 3; do
  port=$((BASE_PORT + 90 + n))
  mkdir -p "$WORK/cluster-$n"
  taskset -c "$WRK_CPU" redis-server --port "$port" --bind 127.0.0.1 --save '' --appendonly no \
    --dir "$WORK/cluster-$n" --cluster-enabled yes --cluster-port $((BASE_PORT + 80 + n)) \
    --cluster-require-full-coverage no --daemonize no >"$WORK/cluster-$n.log" 2>&1 &
  PIDS+=($!)
  CLUSTER_PORTS+=("$port")
done
for port in "${CLUSTER_PORTS[@]}"; do wait_redis "$port"; done
redis-cli --cluster create $(printf '127.0.0.1:%s ' "${CLUSTER_PORTS[@]}") --cluster-replicas 0 --cluster-yes >"$WORK/cluster-create.log" 2>&1 \
  || { echo "bench-shared: redis-cli --cluster create failed" >&2; cat "$WORK/cluster-create.log" >&2; exit 1; }
for port in "${CLUSTER_PORTS[@]}"; do
  for _ in $(seq 1 200); do redis-cli -p "$port" cluster info 2>/dev/null | grep -q '^cluster_state:ok' && break; sleep 0.05; done
done
# calls COMMAND PORT...: how often the Redis nodes at PORT... have run COMMAND (INFO commandstats), summed.
calls() {
  local command=$1 port total=0 n
  shift
  for port in "$@"; do
    n=$(redis-cli -p "$port" info commandstats | tr -d '\r' | sed -n "s/^cmdstat_${command}:calls=\([0-9]*\),.*/\1/p")
    total=$((total + ${n:-0}))
  done
  echo "$total"
}
# commands_per_hit INSTANCE_PORT REDIS_PORT...: the GETs and the scripts (EVALSHA) Redis ran per L1 miss answered
# from Redis, over 200 requests of warm keys: a shared hit is one GET, the fill's look-up script none.
commands_per_hit() {
  local port=$1 gets evals
  shift
  gets=$(calls get "$@") evals=$(calls evalsha "$@")
  for i in $(seq 0 199); do printf 'url = "http://127.0.0.1:%s/v1/users/u%s/subscription"\noutput = "/dev/null"\n' "$port" "$i"; done >"$WORK/count.txt"
  curl -sS --no-progress-meter -K "$WORK/count.txt"
  awk -v g=$(($(calls get "$@") - gets)) -v e=$(($(calls evalsha "$@") - evals)) 'BEGIN { printf "%.2f GET and %.2f EVALSHA", g / 200, e / 200 }'
}

# start NAME PORT ARGS...: one instance, pinned to SERVER_CPU; sets PID.
start() {
  local name=$1 port=$2
  shift 2
  taskset -c "$SERVER_CPU" "$BIN" --port "$port" --log-level error --admin-token bench "$@" >"$WORK/$name.log" 2>&1 &
  PID=$!
  PIDS+=("$PID")
  wait_readyz "$port" "$name" "$WORK/$name.log"
}


# The wrk script: cycles through the key set, one key per request.
keys_script "$WORK/keys.lua" "$KEYS"

# round_median EXPRESSION RUNS_A RUNS_B: the median over the rounds of an awk EXPRESSION of A ($1) and B ($2), the
# runs of one `measure` call, in order; diff_median: of A - B, ratio_median: of A / B.
round_median() { paste -d' ' <(tr ' ' '\n' <<<"$2" | grep .) <(tr ' ' '\n' <<<"$3" | grep .) | awk "{print $1}" | median; }
diff_median() { round_median '$1 - $2' "$@"; }
ratio_median() { round_median '$1 / $2' "$@"; }

# measure CONNECTIONS TARGET...: RUNS interleaved rounds, each one wrk run per target in turn (a target is
# "NAME PID PORT", or "NAME PID PORT near" for a run with Redis moved onto the server's CPU for its duration): the
# machine's speed drifts from minute to minute, so targets compared with each other are measured side by side.
# Prints one line per run and stores each target's medians.
declare -A RPS=() P50=() P99=() CPU=() RUNS_RPS=() RUNS_P50=() RUNS_P99=() RUNS_CPU=()
measure() {
  local connections=$1
  shift
  for run in $(seq 1 "$RUNS"); do
    for target in "$@"; do
      local name pid port near before after output requests rps p50 p99 cpu
      read -r name pid port near <<<"$target"
      [[ -n $near ]] && taskset -a -p -c "$SERVER_CPU" "$REDIS_PID" >/dev/null
      before=$(cpu_ticks "$pid")
      output=$(taskset -c "$WRK_CPU" wrk -t1 -c"$connections" -d"$DURATION" --latency -s "$WORK/keys.lua" "http://127.0.0.1:$port")
      after=$(cpu_ticks "$pid")
      [[ -n $near ]] && taskset -a -p -c "$WRK_CPU" "$REDIS_PID" >/dev/null
      requests=$(awk '/requests in/ {print $1}' <<<"$output")
      rps=$(awk '/Requests\/sec/ {print $2}' <<<"$output")
      p50=$(to_us "$(awk '$1 == "50%" {print $2}' <<<"$output")")
      p99=$(to_us "$(awk '$1 == "99%" {print $2}' <<<"$output")")
      cpu=$(cpu_us_per_request $((after - before)) "$requests")
      printf '   %-20s run %d: %9.0f req/s  p50 %7.0f us  p99 %7.0f us  cpu %7s us/req %s\n' "$name" "$run" "$rps" "$p50" "$p99" \
        "$cpu" "$(awk '/Non-2xx|Socket errors/' <<<"$output")"
      RUNS_RPS[$name]+="$rps " RUNS_P50[$name]+="$p50 " RUNS_P99[$name]+="$p99 " RUNS_CPU[$name]+="$cpu "
    done
  done
  for target in "$@"; do
    local name
    read -r name _ <<<"$target"
    RPS[$name]=$(tr ' ' '\n' <<<"${RUNS_RPS[$name]}" | grep . | median)
    P50[$name]=$(tr ' ' '\n' <<<"${RUNS_P50[$name]}" | grep . | median)
    P99[$name]=$(tr ' ' '\n' <<<"${RUNS_P99[$name]}" | grep . | median)
    CPU[$name]=$(tr ' ' '\n' <<<"${RUNS_CPU[$name]}" | grep . | median)
  done
}

echo "== 1. L1 misses: shared tier vs disk tier ($KEYS keys, memory tier of 1 entry; wrk -t1 -c$CONNECTIONS -d$DURATION x$RUNS)"
start disk-hit $((BASE_PORT + 1)) --data-dir "$WORK/disk" --memory-entries 1 --demo-latency 0ms
DISK_PID=$PID
start shared-hit $((BASE_PORT + 2)) --disk-limit 0 --memory-entries 1 --demo-latency 0ms --redis "redis://127.0.0.1:$REDIS_PORT" --redis-prefix b1:
SHARED_PID=$PID
wait_connected $((BASE_PORT + 2))
warm $((BASE_PORT + 1))
warm $((BASE_PORT + 2))
# nginx's proxy_cache hit, the disk hit's baseline. Its origin (a second server block) serves as static files the
# bodies the disk-hit instance answers, at the same URLs; its cache is on the disk tier's filesystem ($WORK).
NGINX_PORT=$((BASE_PORT + 11)) ORIGIN_PORT=$((BASE_PORT + 12))
mkdir -p "$WORK/nginx" "$WORK/nginx-origin" "$WORK/nginx-cache"
for i in $(seq 0 $((KEYS - 1))); do
  printf 'url = "http://127.0.0.1:%s/v1/users/u%s/subscription"\noutput = "%s/nginx-origin/v1/users/u%s/subscription"\n' \
    $((BASE_PORT + 1)) "$i" "$WORK" "$i"
done >"$WORK/bodies.txt"
curl -sS --no-progress-meter --fail --create-dirs -Z --parallel-max 32 -K "$WORK/bodies.txt"
# One worker (as root when we are root: it reads the run's folder, mode 700); nginx's defaults otherwise, but for a
# connection's requests: wrk keeps its connections for the whole run, which nginx closes after 1,000 requests.
cat >"$WORK/nginx/nginx.conf" <<CONF
$([[ $(id -u) == 0 ]] && echo 'user root;')
worker_processes 1;
pid $WORK/nginx/nginx.pid;
error_log $WORK/nginx/error.log error;
events {}
http {
  access_log off;
  default_type application/json;
  client_body_temp_path $WORK/nginx/body;
  proxy_temp_path $WORK/nginx/proxy;
  keepalive_requests 100000000;
  proxy_cache_path $WORK/nginx-cache levels=1:2 keys_zone=bench:10m inactive=1d use_temp_path=off;
  server {
    listen 127.0.0.1:$NGINX_PORT;
    location / {
      proxy_pass http://127.0.0.1:$ORIGIN_PORT;
      proxy_cache bench;
      proxy_cache_valid 200 1h;
      add_header X-Cache-Status \$upstream_cache_status;
    }
  }
  server {
    listen 127.0.0.1:$ORIGIN_PORT;
    access_log $WORK/nginx/origin.log;
    root $WORK/nginx-origin;
  }
}
CONF
taskset -c "$SERVER_CPU" /usr/sbin/nginx -p "$WORK/nginx/" -c "$WORK/nginx/nginx.conf" -e "$WORK/nginx/error.log" \
  -g 'daemon off;' >"$WORK/nginx.log" 2>&1 &
NGINX_MASTER=$!
PIDS+=("$NGINX_MASTER")
for _ in $(seq 1 100); do
  [[ $(curl -sS -o /dev/null -w '%{http_code}' "http://127.0.0.1:$NGINX_PORT/v1/users/u0/subscription" 2>/dev/null) == 200 ]] && break
  sleep 0.05
done
warm "$NGINX_PORT"
# Every key a HIT now: asked once more, each answers X-Cache-Status: HIT (and the measurement checks that the origin
# is not asked again).
sed "s/:$((BASE_PORT + 1))\//:$NGINX_PORT\//; s|^output = .*|output = \"/dev/null\"|" "$WORK/bodies.txt" >"$WORK/hits.txt"
NGINX_HITS=$(curl -sS --no-progress-meter -K "$WORK/hits.txt" -w '%header{x-cache-status}\n' | grep -c '^HIT$' || true)
[[ $NGINX_HITS == "$KEYS" ]] || fail "nginx answered $NGINX_HITS of $KEYS keys from its cache after warming"
# Its CPU: the master's and its children's, the worker and the cache manager (not the cache loader, which indexes
# the cache folder once, a minute after the start, and exits).
NGINX_PIDS=$NGINX_MASTER
for pid in $(cat "/proc/$NGINX_MASTER/task/$NGINX_MASTER/children"); do
  grep -qa 'cache loader' "/proc/$pid/cmdline" || NGINX_PIDS+=",$pid"
done
ORIGIN_LOG_LINES=$(wc -l <"$WORK/nginx/origin.log")
# The shared tier over TLS.
start shared-hit-tls $((BASE_PORT + 9)) --disk-limit 0 --memory-entries 1 --demo-latency 0ms \
  --redis "rediss://127.0.0.1:$TLS_PORT" --redis-tls-ca "$WORK/ca.pem" --redis-prefix b4:
SHARED_TLS_PID=$PID
wait_connected $((BASE_PORT + 9))
warm $((BASE_PORT + 9))
# The shared tier on the Redis Cluster, seeded with its first node.
start shared-hit-cluster $((BASE_PORT + 10)) --disk-limit 0 --memory-entries 1 --demo-latency 0ms --redis-cluster \
  --redis "redis://127.0.0.1:${CLUSTER_PORTS[0]}?addr=127.0.0.1:${CLUSTER_PORTS[1]}&addr=127.0.0.1:${CLUSTER_PORTS[2]}" --redis-prefix b5:
SHARED_CLUSTER_PID=$PID
wait_connected $((BASE_PORT + 10))
warm $((BASE_PORT + 10))
# The same two with a key ring: every disk file and Redis value sealed with AES-256-GCM.
(umask 077 && printf 'bench:%s\n' "$(head -c 32 /dev/urandom | base64)" >"$WORK/keys")
start disk-hit-sealed $((BASE_PORT + 7)) --data-dir "$WORK/disk-sealed" --memory-entries 1 --demo-latency 0ms --encryption-keys "$WORK/keys"
DISK_SEALED_PID=$PID
start shared-hit-sealed $((BASE_PORT + 8)) --disk-limit 0 --memory-entries 1 --demo-latency 0ms --redis "redis://127.0.0.1:$REDIS_PORT" --redis-prefix b3: --encryption-keys "$WORK/keys"
SHARED_SEALED_PID=$PID
wait_connected $((BASE_PORT + 8))
warm $((BASE_PORT + 7))
warm $((BASE_PORT + 8))
# Interleaved rounds: each target beside the ones it is compared with. The disk hit sits between nginx's hit and the
# shared hit, the two figures taken as ratios to it, and TLS beside the shared hit it is compared with: the machine's
# speed moves within a round too, so the two runs of a ratio are neighbours.
measure "$CONNECTIONS" "nginx-cache-hit $NGINX_PIDS $NGINX_PORT" "disk-hit $DISK_PID $((BASE_PORT + 1))" \
  "shared-hit $SHARED_PID $((BASE_PORT + 2))" "shared-hit-tls $SHARED_TLS_PID $((BASE_PORT + 9))" \
  "shared-hit-cluster $SHARED_CLUSTER_PID $((BASE_PORT + 10))" \
  "disk-hit-sealed $DISK_SEALED_PID $((BASE_PORT + 7))" "shared-hit-sealed $SHARED_SEALED_PID $((BASE_PORT + 8))"
ORIGIN_FETCHES=$(($(wc -l <"$WORK/nginx/origin.log") - ORIGIN_LOG_LINES))
[[ $ORIGIN_FETCHES == 0 ]] || fail "nginx asked its origin $ORIGIN_FETCHES times while measured: not every request a HIT"
# What each answers for one key, headers + body: the bodies are the same bytes, the headers differ.
ANSWER_BYTES=()
for port in $((BASE_PORT + 1)) "$NGINX_PORT"; do
  ANSWER_BYTES+=("$(curl -sS -o /dev/null -w '%{size_header} + %{size_download}' "http://127.0.0.1:$port/v1/users/u1/subscription")")
done
# Raw libmicrohttpd at one client: answering at once, and through the hand-off (its values, a demo subscription's
# size, in the same redis-server under the paths it asks for; unicache's keys there carry a prefix).
seed_raw_values "$REDIS_PORT"
taskset -c "$SERVER_CPU" "$BASELINE_BIN" $((BASE_PORT + 13)) >"$WORK/raw.log" 2>&1 &
RAW_PID=$!
MHD_BASELINE_HANDOFF=redis MHD_BASELINE_REDIS_PORT=$REDIS_PORT taskset -c "$SERVER_CPU" "$BASELINE_BIN" \
  $((BASE_PORT + 14)) >"$WORK/raw-handoff.log" 2>&1 &
RAW_HANDOFF_PID=$!
PIDS+=("$RAW_PID" "$RAW_HANDOFF_PID")
for raw in "$((BASE_PORT + 13)) raw" "$((BASE_PORT + 14)) raw-handoff"; do
  read -r port name <<<"$raw"
  wait_readyz "$port" "$name" "$WORK/$name.log" # it answers 200 on every path
  taskset -c "$WRK_CPU" wrk -t1 -c16 -d1s -s "$WORK/keys.lua" "http://127.0.0.1:$port" >/dev/null
done
# One client: the latency of one L1 miss, without queueing behind the others. `shared-hit-c1-near` is the same
# instance with Redis moved onto the server's CPU for its runs: every hop of a shared hit (the polling thread to the
# event loop, to Redis, back) is then a hand-off on one CPU, as a disk hit's hops (to the tier's thread and back)
# are. Where Redis runs on the other CPU, two of them wake an idle CPU, which costs this VM tens of µs each.
measure 1 "disk-hit-c1 $DISK_PID $((BASE_PORT + 1))" "disk-hit-sealed-c1 $DISK_SEALED_PID $((BASE_PORT + 7))" \
  "shared-hit-c1 $SHARED_PID $((BASE_PORT + 2))" "shared-hit-c1-near $SHARED_PID $((BASE_PORT + 2)) near" \
  "shared-hit-cluster-c1 $SHARED_CLUSTER_PID $((BASE_PORT + 10))" \
  "shared-hit-tls-c1 $SHARED_TLS_PID $((BASE_PORT + 9))" "shared-hit-sealed-c1 $SHARED_SEALED_PID $((BASE_PORT + 8))" \
  "raw-c1 $RAW_PID $((BASE_PORT + 13))" "raw-handoff-c1 $RAW_HANDOFF_PID $((BASE_PORT + 14))"
sed -n 's/.*"shared":{\([^}]*\)}.*/   shared-hit stats: \1/p' <<<"$(curl -sS "http://127.0.0.1:$((BASE_PORT + 2))/stats")"
PER_HIT_SINGLE=$(commands_per_hit $((BASE_PORT + 2)) "$REDIS_PORT")
PER_HIT_CLUSTER=$(commands_per_hit $((BASE_PORT + 10)) "${CLUSTER_PORTS[@]}")

echo "== 3. a dead Redis: L1 misses fetched from a 0 ms demo upstream, with and without --redis at a closed port (one client)"
start miss-local $((BASE_PORT + 3)) --disk-limit 0 --memory-entries 1 --demo-latency 0ms
LOCAL_PID=$PID
start miss-dead-redis $((BASE_PORT + 4)) --disk-limit 0 --memory-entries 1 --demo-latency 0ms --redis "redis://127.0.0.1:1"
DEAD_PID=$PID
measure 1 "miss-local $LOCAL_PID $((BASE_PORT + 3))" "miss-dead-redis $DEAD_PID $((BASE_PORT + 4))"

echo "== 2. a fleet stampede: 1,000 cold requests over 2 instances sharing a Redis, upstream holding $STAMPEDE_HOLD s (x$RUNS)"
# Measured as the single-instance stampede is (scripts/bench-stampede.py): the clients are Benchmarks/stampede-client
# (C, one thread, epoll), spread over the two instances in turn, and the figure runs from the moment the upstream
# answered (it records it) to each client's whole answer, so that it is the fleet's and not a client's own start-up
# (curl with 1,000 parallel transfers spends tens of milliseconds starting them). The upstream must see 1 request.
# shellcheck source=scripts/python-env.sh
source "$ROOT/scripts/python-env.sh"
STAMPEDE=$(python3 "$ROOT/scripts/bench-stampede.py" --bin "$BIN" --fleet 2 --runs "$RUNS" --hold "$STAMPEDE_HOLD")
sed 's/^/   /' <<<"$STAMPEDE"
STAMPEDE_MS=$(awk '$1 == "warmed:" {print $5}' <<<"$STAMPEDE")
echo "== 2b. one instance's stampede against raw libmicrohttpd holding the same 1,000 requests $STAMPEDE_HOLD s (x$RUNS)"
STAMPEDE_RAW=$(python3 "$ROOT/scripts/bench-stampede.py" --bin "$BIN" --raw --runs "$RUNS" --hold "$STAMPEDE_HOLD")
sed 's/^/   /' <<<"$STAMPEDE_RAW"

echo
printf '%-22s %10s %9s %9s %12s\n' target "req/s" "p50(us)" "p99(us)" "cpu us/req"
for name in disk-hit nginx-cache-hit disk-hit-sealed shared-hit shared-hit-cluster shared-hit-tls shared-hit-sealed disk-hit-c1 disk-hit-sealed-c1 shared-hit-c1 shared-hit-c1-near shared-hit-cluster-c1 shared-hit-tls-c1 shared-hit-sealed-c1 raw-c1 raw-handoff-c1 miss-local miss-dead-redis; do
  printf '%-22s %10.0f %9.0f %9.0f %12.2f\n' "$name" "${RPS[$name]}" "${P50[$name]}" "${P99[$name]}" "${CPU[$name]}"
done
# The differences below are medians of per-round differences (each round measures both side by side).
printf 'a dead Redis adds %.0f us at p50 and %.0f us at p99 per L1 miss (one client)\n' \
  "$(diff_median "${RUNS_P50[miss-dead-redis]}" "${RUNS_P50[miss-local]}")" \
  "$(diff_median "${RUNS_P99[miss-dead-redis]}" "${RUNS_P99[miss-local]}")"
printf 'one client, p50: raw libmicrohttpd %.0f us at once, %.0f us through the hand-off; a disk hit %+.0f us over the first, a shared hit %+.0f us over the second\n' \
  "${P50[raw-c1]}" "${P50[raw-handoff-c1]}" "$(diff_median "${RUNS_P50[disk-hit-c1]}" "${RUNS_P50[raw-c1]}")" \
  "$(diff_median "${RUNS_P50[shared-hit-c1]}" "${RUNS_P50[raw-handoff-c1]}")"
printf 'a key ring adds %.0f us to a disk hit and %.0f us to a shared hit at p50 (one client)\n' \
  "$(diff_median "${RUNS_P50[disk-hit-sealed-c1]}" "${RUNS_P50[disk-hit-c1]}")" \
  "$(diff_median "${RUNS_P50[shared-hit-sealed-c1]}" "${RUNS_P50[shared-hit-c1]}")"
printf 'TLS adds %.1f us of CPU to a shared hit (16 clients) and %.0f us to its p50 (one client)\n' \
  "$(diff_median "${RUNS_CPU[shared-hit-tls]}" "${RUNS_CPU[shared-hit]}")" \
  "$(diff_median "${RUNS_P50[shared-hit-tls-c1]}" "${RUNS_P50[shared-hit-c1]}")"
printf 'a Redis Cluster adds %.1f us of CPU to a shared hit (16 clients) and %.0f us to its p50 (one client); per shared hit %s on one Redis, %s on the cluster\n' \
  "$(diff_median "${RUNS_CPU[shared-hit-cluster]}" "${RUNS_CPU[shared-hit]}")" \
  "$(diff_median "${RUNS_P50[shared-hit-cluster-c1]}" "${RUNS_P50[shared-hit-c1]}")" "$PER_HIT_SINGLE" "$PER_HIT_CLUSTER"
printf 'shared hit / disk hit CPU %.2fx (16 clients; median of the per-round ratios)\n' \
  "$(ratio_median "${RUNS_CPU[shared-hit]}" "${RUNS_CPU[disk-hit]}")"
printf 'disk hit / nginx hit CPU %.2fx (median of the per-round ratios; answers of %s and %s bytes, headers + body)\n' \
  "$(ratio_median "${RUNS_CPU[disk-hit]}" "${RUNS_CPU[nginx-cache-hit]}")" "${ANSWER_BYTES[0]}" "${ANSWER_BYTES[1]}"
printf 'fleet stampede: 1 upstream request each; the last client answered %s ms after the upstream (median, warmed) and %s ms (first after start-up)\n' \
  "$STAMPEDE_MS" "$(awk '$1 == "first" && $2 == ":" {print $6}' <<<"$STAMPEDE")"
# raw_ratio KIND: the median unicache/raw ratio bench-stampede.py --raw printed for the stampedes of KIND.
raw_ratio() { awk -v kind="$1" '$1 == kind && $2 == "raw:" { for (i = 3; i < NF; i++) if ($i == "unicache/raw") print $(i + 1) }' <<<"$STAMPEDE_RAW"; }
printf "one instance's stampede / raw libmicrohttpd's (the last client after the upstream's answer / after the release): %s warmed, %s first after start-up (medians of the per-round ratios)\n" \
  "$(raw_ratio warmed)" "$(raw_ratio first)"
echo "targets: shared-hit <= 35 us CPU and <= 1.4x the disk hit, TLS adding <= 15 us; shared-hit-c1 p50 <= 250 us (shared-hit-c1-near: Redis on the server's CPU); stampede last after the upstream answer <= 20 ms with 1 fetch; a key ring adds <= 10 us at p50; dead Redis <= 2 ms added; disk hit / nginx hit CPU <= 1.0x; one instance's stampede (warmed) / raw libmicrohttpd's <= 1.7x"
