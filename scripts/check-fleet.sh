#!/usr/bin/env bash
# Smoke test of the fleet (`make check`, CONTRACT §6): the topology of compose.fleet.yaml started by fleet-lib.sh as
# `make fleet` starts it (Redis, two instances of the release build, HAProxy in front, free loopback ports; with
# FLEET_TLS=1 Redis speaks TLS only and /stats must say `shared.tls`), then:
#   1. a value fetched through one instance is a shared hit on the other (each instance asked directly, both ways);
#   2. through the balancer: requests are spread, and the second instance's first answer is a shared hit;
#   3. an event sent through the balancer invalidates the value on both instances within 100 ms of its answer
#      (each instance polled directly with `Cache-Control: only-if-cached` until it answers 504: fleet-invalidation.py);
#   4. with one instance killed (SIGKILL) the balancer keeps answering 200, before and after its health check
#      takes the instance out;
#   5. with Redis killed (SIGKILL) reads keep answering 200 (cached and newly fetched), /readyz stays 200 naming the
#      shared tier unreachable, and an event answers 503 with Retry-After (§6.5).
# Usage: UNICACHE_BIN=/path/to/unicache scripts/check-fleet.sh   (`make fleet-check` builds the release binary)
# Bounded: every request has a 5 s deadline, every wait its own; a run takes 2-5 s here (2 cores, load average 11).
set -euo pipefail
cd "$(dirname "$0")/.."

STARTUP_TIMEOUT=30            # seconds for each process to come up
STOP_TIMEOUT=15               # seconds for each to stop after SIGTERM
INVALIDATION_BOUND_MS=100     # CONTRACT §6.4
HEALTH_CHECK_DEADLINE=15      # seconds for HAProxy to mark a killed instance DOWN (inter 1s, fall 2)
REDIS_LOSS_DEADLINE=15        # seconds for an instance to report Redis unreachable

step() { printf '\n== check-fleet: %s\n' "$*"; }
# python3 (fleet-invalidation.py needs only its standard library), installed when missing.
# shellcheck source=scripts/python-env.sh
source scripts/python-env.sh

FLEET_SCRIPT=check-fleet
FLEET_WORK="$(mktemp -d /tmp/unicache-check-fleet-XXXXXX)"
# shellcheck source=scripts/service-lib.sh
source scripts/service-lib.sh
# shellcheck source=scripts/fleet-lib.sh
source scripts/fleet-lib.sh

BIN="${UNICACHE_BIN:-}"
FLEET_ARGS=(--demo-latency 20ms)
UNICACHE_ADMIN_TOKEN="$(fleet_random_token)"
export UNICACHE_ADMIN_TOKEN

fleet_stop_on_exit

# request URL [curl args...]: one request (5 s deadline); sets STATUS and HEADERS (the answer's header lines).
STATUS="" HEADERS=""
request() {
  local url=$1
  shift
  HEADERS="$(curl -sS --max-time 5 -o /dev/null -D - "$@" "$url" | tr -d '\r')" || fail "no answer from ${url}"
  STATUS="$(head -n 1 <<<"$HEADERS" | awk '{ print $2 }')"
}
# header NAME: the value of header NAME in HEADERS (empty when absent).
header() { grep -i "^$1:" <<<"$HEADERS" | head -n 1 | cut -d: -f2- | sed -E 's/^ +//' || true; }
# expect WHAT STATUS [NAME VALUE]...: the last answer had this status and these header values.
expect() {
  local what=$1 status=$2
  shift 2
  [[ "$STATUS" == "$status" ]] || fail "${what}: status ${STATUS}, expected ${status}"$'\n'"${HEADERS}"
  while (($# >= 2)); do
    [[ "$(header "$1")" == "$2" ]] || fail "${what}: $1 is '$(header "$1")', expected '$2'"$'\n'"${HEADERS}"
    shift 2
  done
}
# The wall clock in microseconds (bash's own, no fork).
now_us() { echo "${EPOCHREALTIME/./}"; }

started_us="$(now_us)"
step "start: redis-server, ${FLEET_INSTANCES[*]}, haproxy"
fleet_start
LB="http://127.0.0.1:${BALANCER_PORT}"
declare -A URL_OF=([unicache-a]="http://127.0.0.1:${INSTANCE_PORTS[0]}" [unicache-b]="http://127.0.0.1:${INSTANCE_PORTS[1]}")
[[ "$FLEET_TLS" != 1 ]] || { curl -sS --max-time 5 "${URL_OF[unicache-a]}/stats" | jq -e '.shared.tls == true' >/dev/null \
  || fail "over TLS, unicache-a's /stats does not say shared.tls true"; }
echo "redis :${REDIS_PORT}$([[ "$FLEET_TLS" == 1 ]] && echo ' (TLS only)') (pid ${REDIS_PID}); unicache-a :${INSTANCE_PORTS[0]} (pid ${INSTANCE_PIDS[0]}); unicache-b :${INSTANCE_PORTS[1]} (pid ${INSTANCE_PIDS[1]}); haproxy :${BALANCER_PORT} (pid ${BALANCER_PID}); up in $(( ($(now_us) - started_us) / 1000 )) ms"

# ---------------------------------------------------------------------------------------------- 1. shared hits
step "a value fetched through one instance is a shared hit on the other (each asked directly)"
for pair in "unicache-a unicache-b alice" "unicache-b unicache-a carol"; do
  read -r first second user <<<"$pair"
  request "${URL_OF[$first]}/v1/users/${user}/subscription"
  expect "${first}, first read of ${user}" 200 X-Cache MISS
  request "${URL_OF[$second]}/v1/users/${user}/subscription"
  expect "${second}, after ${first} fetched ${user}" 200 X-Cache HIT X-Cache-Tier shared Cache-Status "unicache; hit; detail=shared"
  echo "${user}: MISS on ${first}, then HIT from the shared tier on ${second}"
done

# ---------------------------------------------------------------------------------------------- 2. balancer
step "through the balancer: requests spread over both instances, a shared hit on the second"
request "${LB}/v1/users/bob/subscription"
expect "balancer, first read of bob" 200 X-Cache MISS
first="$(header X-Served-By)"
[[ -n "${URL_OF[$first]:-}" ]] || fail "the balancer's answer names no instance (X-Served-By '${first}')"
second=""
for _ in 1 2 3; do
  request "${LB}/v1/users/bob/subscription"
  [[ "$(header X-Served-By)" != "$first" ]] && { second="$(header X-Served-By)"; break; }
  expect "balancer, bob again on ${first}" 200 X-Cache HIT X-Cache-Tier memory
done
[[ -n "$second" ]] || fail "four requests through the balancer all went to ${first}: it does not spread them"
expect "balancer, bob on ${second}" 200 X-Cache HIT X-Cache-Tier shared
echo "bob: MISS on ${first}, then HIT from the shared tier on ${second}, both through ${LB}"

# ---------------------------------------------------------------------------------------------- 3. invalidation
step "an event through the balancer invalidates the value on every instance within ${INVALIDATION_BOUND_MS} ms"
# Both instances hold alice now (one fetched it, the other from the shared tier). The polling is Python's, on
# kept-alive connections: a curl per poll from bash was sent 5-200 ms after the previous one on a loaded machine.
USER_ID=alice BOUND_MS="$INVALIDATION_BOUND_MS" \
  python3 scripts/fleet-invalidation.py "$BALANCER_PORT" "unicache-a=${INSTANCE_PORTS[0]}" "unicache-b=${INSTANCE_PORTS[1]}" \
  || fail "the event's invalidation did not reach every instance within ${INVALIDATION_BOUND_MS} ms (above)"
request "${LB}/v1/users/alice/subscription"
expect "balancer, alice after the event" 200 X-Cache MISS
echo "alice through the balancer after the event: MISS (fetched again)"

# ---------------------------------------------------------------------------------------------- 4. lose an instance
step "kill unicache-b (SIGKILL): the balancer keeps answering"
{ kill -KILL "${INSTANCE_PIDS[1]}"; wait "${INSTANCE_PIDS[1]}"; } 2>/dev/null || true   # quietly: bash would report the killed job
killed_us="$(now_us)"
served=""
for i in $(seq 1 10); do   # before the health check has noticed: a refused connection is retried on unicache-a
  request "${LB}/v1/users/dave${i}/subscription"
  expect "balancer, dave${i} with unicache-b dead" 200
  served+="$(header X-Served-By) "
done
echo "10 reads right after the kill: all 200 (served by: $(tr ' ' '\n' <<<"$served" | grep . | sort | uniq -c | xargs))"
deadline=$((SECONDS + HEALTH_CHECK_DEADLINE))
until curl -sS --max-time 5 "http://127.0.0.1:${BALANCER_STATS_PORT}/stats;csv" | grep -q '^unicache,unicache-b,.*,DOWN'; do
  ((SECONDS < deadline)) || fail "haproxy did not mark unicache-b DOWN within ${HEALTH_CHECK_DEADLINE}s"
  sleep 0.1
done
echo "haproxy marked unicache-b DOWN $(( ($(now_us) - killed_us) / 1000 )) ms after the kill"
for i in 1 2 3 4; do
  request "${LB}/v1/users/erin${i}/subscription"
  expect "balancer, erin${i} with unicache-b out" 200 X-Served-By unicache-a
done
echo "4 reads after: all 200 from unicache-a"

# ---------------------------------------------------------------------------------------------- 5. lose Redis
step "kill Redis (SIGKILL): reads keep answering (§6.5)"
{ kill -KILL "$REDIS_PID"; wait "$REDIS_PID"; } 2>/dev/null || true   # quietly: bash would report the killed job
for user in alice bob carol; do   # cached on unicache-a
  request "${LB}/v1/users/${user}/subscription"
  expect "balancer, ${user} with Redis dead" 200
done
for i in 1 2 3 4 5; do            # never seen: fetched from the upstream
  request "${LB}/v1/users/frank${i}/subscription"
  expect "balancer, frank${i} with Redis dead" 200 X-Cache MISS
done
echo "8 reads with Redis dead (3 cached, 5 fetched): all 200"
wait_for_http "${LB}/readyz" '"sharedTier":"unreachable"' "$REDIS_LOSS_DEADLINE" \
  || fail "/readyz did not answer 200 naming the shared tier unreachable within ${REDIS_LOSS_DEADLINE}s"
echo "/readyz: 200, $(curl -sS --max-time 5 "${LB}/readyz")"
request "${LB}/v1/users/alice/events" -X POST -H "Authorization: Bearer ${UNICACHE_ADMIN_TOKEN}" \
  -H 'Content-Type: application/json' -d '{"type":"subscription.updated"}'
expect "an event with Redis dead" 503 Content-Type application/problem+json
[[ -n "$(header Retry-After)" ]] || fail "the 503 of an event with Redis dead has no Retry-After"$'\n'"${HEADERS}"
echo "an event with Redis dead: 503 problem+json, Retry-After $(header Retry-After)"

printf '\ncheck-fleet: OK in %d ms\n' $(( ($(now_us) - started_us) / 1000 ))
