# shellcheck shell=bash
# Sourced by scripts/fleet.sh (`make fleet`) and scripts/check-fleet.sh: the topology of compose.fleet.yaml on this
# machine's loopback, without Docker. Debian's redis-server on deploy/redis.conf, two instances of the
# release build, Debian's haproxy on deploy/haproxy.cfg in front; every process on a free port and stopped by its
# PID. The sourcing script sources service-lib.sh, defines fail() (which calls fleet_show_logs), and sets:
#   BIN              the unicache executable
#   FLEET_WORK       an empty folder for the data dirs, Redis's append-only file and the logs
#   STARTUP_TIMEOUT  seconds a process may take to come up; STOP_TIMEOUT seconds it may take to stop
#   FLEET_ARGS       (array, optional) extra flags for every instance, e.g. (--demo-latency 20ms)
# and exports UNICACHE_ADMIN_TOKEN (the instances take it from the environment, so that `ps` does not show it).
# After fleet_start: REDIS_PID, REDIS_PORT; INSTANCE_NAMES, INSTANCE_PIDS, INSTANCE_PORTS (arrays, same order);
# BALANCER_PID, BALANCER_PORT, BALANCER_STATS_PORT. fleet_stop stops whatever of it runs (call it from an EXIT trap).

FLEET_ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
FLEET_INSTANCES=(unicache-a unicache-b)   # as in compose.fleet.yaml; deploy/haproxy.cfg names their two servers
FLEET_PIDS=()  # every process started, in start order
REDIS_PID="" REDIS_PORT=""
INSTANCE_NAMES=() INSTANCE_PIDS=() INSTANCE_PORTS=()
BALANCER_PID="" BALANCER_PORT="" BALANCER_STATS_PORT=""

# The end of every log of the fleet, on stderr: the sourcing script's fail() calls it.
fleet_show_logs() {
  local log
  for log in "$FLEET_WORK"/*.log; do
    [[ -f "$log" ]] || continue
    echo "--- ${log##*/} (last 20 lines)" >&2
    tail -n 20 "$log" >&2 || true
  done
}

# Redis on a free port, its append-only file in FLEET_WORK/redis; retried on another port if the port was taken.
# The process that answers must be ours (INFO's process_id), not another Redis that holds the port.
fleet_start_redis() {
  local attempt deadline
  mkdir -p "$FLEET_WORK/redis"
  for attempt in 1 2 3; do
    REDIS_PORT="$(free_port)"
    redis-server "$FLEET_ROOT/deploy/redis.conf" --port "$REDIS_PORT" --bind 127.0.0.1 --dir "$FLEET_WORK/redis" \
      --daemonize no >"$FLEET_WORK/redis.log" 2>&1 &
    REDIS_PID=$!
    FLEET_PIDS+=("$REDIS_PID")
    deadline=$((SECONDS + STARTUP_TIMEOUT))
    while ((SECONDS < deadline)) && kill -0 "$REDIS_PID" 2>/dev/null; do
      if redis-cli -p "$REDIS_PORT" info server 2>/dev/null | grep -q "^process_id:${REDIS_PID}"$'\r'; then
        return 0
      fi
      sleep 0.05
    done
    kill -0 "$REDIS_PID" 2>/dev/null && { fail "redis-server did not answer within ${STARTUP_TIMEOUT}s"; }
    echo "fleet: redis-server could not listen on ${REDIS_PORT} (attempt ${attempt}), trying another port" >&2
  done
  fail "redis-server did not start"
}

# One instance on port 0 (it says which port it took), its own data dir, the fleet's Redis.
fleet_start_instance() {
  local name=$1
  # shellcheck disable=SC2034 # read by start_service (service-lib.sh)
  SERVICE_LOG="$FLEET_WORK/${name}.log"
  start_service "$BIN" --host 127.0.0.1 --port 0 --data-dir "$FLEET_WORK/${name}" \
    --redis "redis://127.0.0.1:${REDIS_PORT}" "${FLEET_ARGS[@]}"
  FLEET_PIDS+=("$SERVICE_PID")
  INSTANCE_NAMES+=("$name")
  INSTANCE_PIDS+=("$SERVICE_PID")
  INSTANCE_PORTS+=("$SERVICE_PORT")
  SERVICE_PID=""   # stopped by fleet_stop, not by the caller's service-lib trap
}

# HAProxy in the foreground (-db) on deploy/haproxy.cfg; retried on other ports if one was taken (it exits then).
fleet_start_balancer() {
  local attempt deadline
  for attempt in 1 2 3; do
    BALANCER_PORT="$(free_port)"
    BALANCER_STATS_PORT="$(free_port)"
    [[ "$BALANCER_STATS_PORT" != "$BALANCER_PORT" ]] || continue
    FLEET_LISTEN="127.0.0.1:${BALANCER_PORT}" FLEET_STATS="127.0.0.1:${BALANCER_STATS_PORT}" \
      FLEET_SERVER_A="127.0.0.1:${INSTANCE_PORTS[0]}" FLEET_SERVER_B="127.0.0.1:${INSTANCE_PORTS[1]}" \
      haproxy -db -f "$FLEET_ROOT/deploy/haproxy.cfg" >"$FLEET_WORK/haproxy.log" 2>&1 &
    BALANCER_PID=$!
    FLEET_PIDS+=("$BALANCER_PID")
    deadline=$((SECONDS + STARTUP_TIMEOUT))
    while ((SECONDS < deadline)) && kill -0 "$BALANCER_PID" 2>/dev/null; do
      # Its own stats page names its process: the balancer that answers is this one.
      if curl -sf --max-time 2 "http://127.0.0.1:${BALANCER_STATS_PORT}/stats" 2>/dev/null | grep -Eq "Statistics Report for pid ${BALANCER_PID}[^0-9]"; then
        wait_for_http "http://127.0.0.1:${BALANCER_PORT}/readyz" '"status":"ready"' "$STARTUP_TIMEOUT" \
          || { fail "the balancer on ${BALANCER_PORT} did not answer /readyz within ${STARTUP_TIMEOUT}s"; }
        return 0
      fi
      sleep 0.05
    done
    kill -0 "$BALANCER_PID" 2>/dev/null && { fail "haproxy did not answer within ${STARTUP_TIMEOUT}s"; }
    echo "fleet: haproxy could not listen on ${BALANCER_PORT} or ${BALANCER_STATS_PORT} (attempt ${attempt}), trying others" >&2
  done
  fail "haproxy did not start"
}

# Redis, the instances (each ready and subscribed to the fleet's invalidations), then the balancer.
fleet_start() {
  local i name tool
  for tool in redis-server redis-cli haproxy curl ss; do
    command -v "$tool" >/dev/null || fail "${tool} is missing: \`make deps\` installs it (APT_PACKAGES in the Makefile)"
  done
  [[ -x "$BIN" ]] || fail "no executable at ${BIN}"
  [[ -n "${UNICACHE_ADMIN_TOKEN:-}" ]] || fail "UNICACHE_ADMIN_TOKEN is not set"
  fleet_start_redis
  for name in "${FLEET_INSTANCES[@]}"; do
    fleet_start_instance "$name"
  done
  for ((i = 0; i < ${#INSTANCE_NAMES[@]}; i++)); do
    wait_for_http "http://127.0.0.1:${INSTANCE_PORTS[i]}/readyz" '"sharedTier":"connected"' "$STARTUP_TIMEOUT" \
      || { fail "${INSTANCE_NAMES[i]} did not report the shared tier connected within ${STARTUP_TIMEOUT}s"; }
  done
  fleet_start_balancer
}

# SIGTERM to every process still running (balancer first, Redis last), then SIGKILL to any left after STOP_TIMEOUT.
fleet_stop() {
  local i pid deadline
  for ((i = ${#FLEET_PIDS[@]} - 1; i >= 0; i--)); do
    kill -TERM "${FLEET_PIDS[i]}" 2>/dev/null || true
  done
  deadline=$((SECONDS + STOP_TIMEOUT))
  for pid in "${FLEET_PIDS[@]}"; do
    while kill -0 "$pid" 2>/dev/null && ((SECONDS < deadline)); do sleep 0.05; done
    kill -KILL "$pid" 2>/dev/null || true
    wait "$pid" 2>/dev/null || true
  done
  FLEET_PIDS=()
}
