# shellcheck shell=bash
# Sourced by scripts/fleet.sh (`make fleet`) and scripts/check-fleet.sh: the topology of compose.fleet.yaml on this
# machine's loopback, without Docker. Debian's redis-server on deploy/redis.conf, two instances of the
# release build, Debian's haproxy on deploy/haproxy.cfg in front; every process on a free port and stopped by its
# PID. The sourcing script sources service-lib.sh and this file (which defines fail()), names itself in FLEET_SCRIPT,
# and sets:
#   BIN              the unicache executable (from UNICACHE_BIN)
#   FLEET_WORK       an empty folder for the data dirs, Redis's append-only file and the logs
#   STARTUP_TIMEOUT  seconds a process may take to come up; STOP_TIMEOUT seconds it may take to stop
#   FLEET_ARGS       (array, optional) extra flags for every instance, e.g. (--demo-latency 20ms)
# and exports UNICACHE_ADMIN_TOKEN (the instances take it from the environment, so that `ps` does not show it).
# After fleet_start: REDIS_PID, REDIS_PORT; INSTANCE_NAMES, INSTANCE_PIDS, INSTANCE_PORTS (arrays, same order);
# BALANCER_PID, BALANCER_PORT, BALANCER_STATS_PORT. fleet_stop stops whatever of it runs; fleet_stop_on_exit makes
# the script's exit (Ctrl-C and SIGTERM included) call it.

FLEET_ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
FLEET_INSTANCES=(unicache-a unicache-b)   # as in compose.fleet.yaml; deploy/haproxy.cfg names their two servers
FLEET_PIDS=()  # every process started, in start order
REDIS_PID="" REDIS_PORT=""
INSTANCE_NAMES=() INSTANCE_PIDS=() INSTANCE_PORTS=()
BALANCER_PID="" BALANCER_PORT="" BALANCER_STATS_PORT=""

# The failure of a step: what failed, the end of every log of the fleet, exit 1. FLEET_SCRIPT names the script.
fail() {
  printf '%s: FAIL: %s\n' "${FLEET_SCRIPT:-fleet}" "$*" >&2
  fleet_show_logs
  exit 1
}

# A random admin token (URL-safe base64 of 18 bytes).
fleet_random_token() { head -c 18 /dev/urandom | base64 | tr '+/' '-_'; }

# The end of every log of the fleet, on stderr.
fleet_show_logs() {
  local log
  [[ -n "${FLEET_WORK:-}" ]] || return 0
  for log in "$FLEET_WORK"/*.log; do
    [[ -f "$log" ]] || continue
    echo "--- ${log##*/} (last 20 lines)" >&2
    tail -n 20 "$log" >&2 || true
  done
}

# fleet_launch WHAT START OURS: runs START (a function that picks free ports, starts a process in the background and
# sets LAUNCHED_PID) until OURS (a function) says the process answering on those ports is the one started. A process
# that exits meanwhile could not bind a port another program took after free_port: tried again on other ports.
fleet_launch() {
  local what=$1 start=$2 ours=$3 attempt deadline
  for attempt in 1 2 3; do
    "$start"
    FLEET_PIDS+=("$LAUNCHED_PID")
    deadline=$((SECONDS + STARTUP_TIMEOUT))
    while ((SECONDS < deadline)) && kill -0 "$LAUNCHED_PID" 2>/dev/null; do
      "$ours" && return 0
      sleep 0.05
    done
    kill -0 "$LAUNCHED_PID" 2>/dev/null && fail "${what} did not answer within ${STARTUP_TIMEOUT}s"
    echo "${FLEET_SCRIPT:-fleet}: ${what} exited before answering (attempt ${attempt}; a port taken?), trying other ports" >&2
  done
  fail "${what} did not start"
}

# A random secret of 32 hex digits (a Redis password).
fleet_secret() { od -An -N16 -tx1 /dev/urandom | tr -d ' \n'; }

# Private by default (CONTRACT §10.5): the instances connect as the ACL user `unicache`, restricted by
# deploy/redis-acl.rules to the fleet's prefix and the commands it sends; the default user (this script's redis-cli
# look-ups, an operator) has a password of its own. Both passwords are made anew for each fleet.
REDIS_USER=unicache
REDIS_PASSWORD=${REDIS_PASSWORD:-$(fleet_secret)}
REDIS_ADMIN_PASSWORD=${REDIS_ADMIN_PASSWORD:-$(fleet_secret)}
fleet_redis_rules() { grep -v '^#' "$FLEET_ROOT/deploy/redis-acl.rules" | grep -v '^$'; }

# With FLEET_TLS=1 (`make fleet TLS=1`, CONTRACT §10.1) Redis listens with TLS only, on a certificate for 127.0.0.1
# signed by a CA made for this fleet (FLEET_WORK/tls), and the instances verify it (`rediss://`, --redis-tls-ca).
FLEET_TLS=${FLEET_TLS:-0}
FLEET_TLS_DIR=""
fleet_tls_certificates() {
  FLEET_TLS_DIR="$FLEET_WORK/tls"
  mkdir -p "$FLEET_TLS_DIR"
  local dir=$FLEET_TLS_DIR
  command -v openssl >/dev/null || fail "openssl is missing: \`make deps\` installs it (APT_PACKAGES in the Makefile)"
  openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -days 2 -subj "/CN=unicache fleet CA" \
    -addext "basicConstraints=critical,CA:TRUE" -addext "keyUsage=critical,keyCertSign,cRLSign" \
    -keyout "$dir/ca.key" -out "$dir/ca.pem" 2>"$dir/openssl.log" || fail "openssl could not make the fleet's CA"
  openssl req -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -subj "/CN=127.0.0.1" \
    -keyout "$dir/redis.key" -out "$dir/redis.csr" 2>>"$dir/openssl.log" || fail "openssl could not make Redis's key"
  printf 'subjectAltName=IP:127.0.0.1\nbasicConstraints=CA:FALSE\nextendedKeyUsage=serverAuth\n' >"$dir/redis.ext"
  openssl x509 -req -in "$dir/redis.csr" -CA "$dir/ca.pem" -CAkey "$dir/ca.key" -CAcreateserial -days 2 \
    -extfile "$dir/redis.ext" -out "$dir/redis.pem" 2>>"$dir/openssl.log" || fail "openssl could not sign Redis's certificate"
  chmod 600 "$dir/ca.key" "$dir/redis.key"
}
# Redis's listening flags: plain TCP, or TLS only.
fleet_redis_listen() {
  if [[ "$FLEET_TLS" == 1 ]]; then
    echo --port 0 --tls-port "$REDIS_PORT" --tls-cert-file "$FLEET_TLS_DIR/redis.pem" \
      --tls-key-file "$FLEET_TLS_DIR/redis.key" --tls-ca-cert-file "$FLEET_TLS_DIR/ca.pem" --tls-auth-clients no
  else
    echo --port "$REDIS_PORT"
  fi
}
# The instances' --redis (the password percent-encoding-free: hex digits) and, with TLS, the CA that verifies Redis.
fleet_redis_url() {
  local scheme=redis
  [[ "$FLEET_TLS" == 1 ]] && scheme=rediss
  echo "${scheme}://${REDIS_USER}:${REDIS_PASSWORD}@127.0.0.1:${REDIS_PORT}"
}
# One flag or value per line.
fleet_redis_flags() {
  printf '%s\n' --redis "$(fleet_redis_url)"
  [[ "$FLEET_TLS" != 1 ]] || printf '%s\n' --redis-tls-ca "$FLEET_TLS_DIR/ca.pem"
}
fleet_redis_cli() {
  local tls=()
  [[ "$FLEET_TLS" == 1 ]] && tls=(--tls --cacert "$FLEET_TLS_DIR/ca.pem")
  REDISCLI_AUTH="$REDIS_ADMIN_PASSWORD" redis-cli "${tls[@]}" -p "$REDIS_PORT" "$@"
}

# Redis, its append-only file in FLEET_WORK/redis; ours when INFO names its process id.
fleet_redis_start() {
  REDIS_PORT="$(free_port)"
  local rules listen
  read -r -a rules <<<"$(fleet_redis_rules)"
  read -r -a listen <<<"$(fleet_redis_listen)"
  redis-server "$FLEET_ROOT/deploy/redis.conf" "${listen[@]}" --bind 127.0.0.1 --dir "$FLEET_WORK/redis" \
    --requirepass "$REDIS_ADMIN_PASSWORD" --user "$REDIS_USER" on ">${REDIS_PASSWORD}" "${rules[@]}" \
    --daemonize no >"$FLEET_WORK/redis.log" 2>&1 &
  REDIS_PID=$!
  LAUNCHED_PID=$REDIS_PID
}
fleet_redis_ours() {
  fleet_redis_cli info server 2>/dev/null | grep -q "^process_id:${REDIS_PID}"$'\r'
}

# One instance on port 0 (it says which port it took), its own data dir, the fleet's Redis.
fleet_start_instance() {
  local name=$1
  # shellcheck disable=SC2034 # read by start_service (service-lib.sh)
  SERVICE_LOG="$FLEET_WORK/${name}.log"
  local redis
  mapfile -t redis < <(fleet_redis_flags)
  start_service "$BIN" --host 127.0.0.1 --port 0 --data-dir "$FLEET_WORK/${name}" \
    "${redis[@]}" "${FLEET_ARGS[@]}"
  FLEET_PIDS+=("$SERVICE_PID")
  INSTANCE_NAMES+=("$name")
  INSTANCE_PIDS+=("$SERVICE_PID")
  INSTANCE_PORTS+=("$SERVICE_PORT")
  SERVICE_PID=""   # stopped by fleet_stop, not by the caller's service-lib trap
}

# HAProxy in the foreground (-db) on deploy/haproxy.cfg, the instances' addresses in its environment; ours when its
# stats page names its process id.
fleet_balancer_start() {
  BALANCER_PORT="$(free_port)"
  BALANCER_STATS_PORT="$(free_port)"
  while [[ "$BALANCER_STATS_PORT" == "$BALANCER_PORT" ]]; do BALANCER_STATS_PORT="$(free_port)"; done
  FLEET_LISTEN="127.0.0.1:${BALANCER_PORT}" FLEET_STATS="127.0.0.1:${BALANCER_STATS_PORT}" \
    FLEET_SERVER_A="127.0.0.1:${INSTANCE_PORTS[0]}" FLEET_SERVER_B="127.0.0.1:${INSTANCE_PORTS[1]}" \
    haproxy -db -f "$FLEET_ROOT/deploy/haproxy.cfg" >"$FLEET_WORK/haproxy.log" 2>&1 &
  BALANCER_PID=$!
  LAUNCHED_PID=$BALANCER_PID
}
fleet_balancer_ours() {
  curl -sf --max-time 2 "http://127.0.0.1:${BALANCER_STATS_PORT}/stats" 2>/dev/null \
    | grep -Eq "Statistics Report for pid ${BALANCER_PID}[^0-9]"
}

# Redis, the instances (each ready and subscribed to the fleet's invalidations), then the balancer.
fleet_start() {
  local i name tool
  for tool in redis-server redis-cli haproxy curl ss; do
    command -v "$tool" >/dev/null || fail "${tool} is missing: \`make deps\` installs it (APT_PACKAGES in the Makefile)"
  done
  [[ -n "${BIN:-}" ]] || fail "set UNICACHE_BIN to the unicache executable (\`make fleet\` and \`make fleet-check\` build the release one and set it)"
  [[ -x "$BIN" ]] || fail "no executable at ${BIN}"
  [[ -n "${UNICACHE_ADMIN_TOKEN:-}" ]] || fail "UNICACHE_ADMIN_TOKEN is not set"
  mkdir -p "$FLEET_WORK/redis"
  [[ "$FLEET_TLS" == 1 ]] && fleet_tls_certificates
  fleet_launch redis-server fleet_redis_start fleet_redis_ours
  for name in "${FLEET_INSTANCES[@]}"; do
    fleet_start_instance "$name"
  done
  for ((i = 0; i < ${#INSTANCE_NAMES[@]}; i++)); do
    wait_for_http "http://127.0.0.1:${INSTANCE_PORTS[i]}/readyz" '"sharedTier":"connected"' "$STARTUP_TIMEOUT" \
      || fail "${INSTANCE_NAMES[i]} did not report the shared tier connected within ${STARTUP_TIMEOUT}s"
  done
  fleet_launch haproxy fleet_balancer_start fleet_balancer_ours
  wait_for_http "http://127.0.0.1:${BALANCER_PORT}/readyz" '"status":"ready"' "$STARTUP_TIMEOUT" \
    || fail "the balancer on ${BALANCER_PORT} did not answer /readyz within ${STARTUP_TIMEOUT}s"
}

# SIGTERM to every process still running (balancer first, Redis last), then SIGKILL to any left after STOP_TIMEOUT.
fleet_stop() {
  local i pid deadline
  # An instance whose start-up line never came (start_service failed) is not in FLEET_PIDS yet.
  if [[ -n "${SERVICE_PID:-}" ]]; then FLEET_PIDS+=("$SERVICE_PID"); SERVICE_PID=""; fi
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

# On exit, Ctrl-C or SIGTERM: stop the fleet and remove FLEET_WORK.
fleet_stop_on_exit() {
  trap 'echo "${FLEET_SCRIPT:-fleet}: stopping the fleet (pids ${FLEET_PIDS[*]:-none})" >&2; fleet_stop; rm -rf "$FLEET_WORK"' EXIT
  trap 'exit 130' INT
  trap 'exit 143' TERM
}
