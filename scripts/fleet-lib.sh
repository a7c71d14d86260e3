# shellcheck shell=bash
# Sourced by scripts/fleet.sh (`make fleet`) and scripts/check-fleet.sh: the topology of compose.fleet.yaml on this
# machine's loopback, without Docker. Debian's redis-server on deploy/redis.conf, two instances of the
# release build, Debian's haproxy on deploy/haproxy.cfg in front; every process on a free port and stopped by its
# PID. With FLEET_SENTINEL=1 Redis is a primary, a replica and three Sentinels instead, with FLEET_CLUSTER=1 a Redis
# Cluster of three primaries and three replicas (below). The sourcing script sources service-lib.sh and this file (which defines fail()), names itself in FLEET_SCRIPT,
# and sets:
#   BIN              the unicache executable (from UNICACHE_BIN)
#   FLEET_WORK       an empty folder for the data dirs, Redis's append-only file and the logs
#   STARTUP_TIMEOUT  seconds a process may take to come up; STOP_TIMEOUT seconds it may take to stop
#   FLEET_ARGS       (array, optional) extra flags for every instance, e.g. (--demo-latency 20ms)
# and exports UNICACHE_ADMIN_TOKEN (the instances take it from the environment, so that `ps` does not show it).
# After fleet_start: REDIS_PID, REDIS_PORT; INSTANCE_NAMES, INSTANCE_PIDS, INSTANCE_PORTS (arrays, same order);
# BALANCER_PID, BALANCER_PORT, BALANCER_STATS_PORT; with FLEET_SENTINEL=1 also REPLICA_PID, REPLICA_PORT,
# SENTINEL_PIDS, SENTINEL_PORTS (below). fleet_stop stops whatever of it runs; fleet_stop_on_exit makes the script's
# exit (Ctrl-C and SIGTERM included) call it.

FLEET_ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
FLEET_INSTANCES=(unicache-a unicache-b)   # as in compose.fleet.yaml; deploy/haproxy.cfg names their two servers
FLEET_PIDS=()  # every process started, in start order
REDIS_PID="" REDIS_PORT=""
REPLICA_PID="" REPLICA_PORT=""
SENTINEL_PIDS=() SENTINEL_PORTS=()
CLUSTER_PIDS=() CLUSTER_PORTS=()
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
fleet_redis_rules() {
  local rules=redis-acl.rules
  [[ "${FLEET_CLUSTER:-0}" == 1 ]] && rules=redis-cluster-acl.rules
  grep -v '^#' "$FLEET_ROOT/deploy/$rules" | grep -v '^$'
}

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
  # clientAuth too: a cluster's nodes present it to one another on the TLS bus (tls-cluster), which always verifies.
  printf 'subjectAltName=IP:127.0.0.1\nbasicConstraints=CA:FALSE\nextendedKeyUsage=serverAuth,clientAuth\n' >"$dir/redis.ext"
  openssl x509 -req -in "$dir/redis.csr" -CA "$dir/ca.pem" -CAkey "$dir/ca.key" -CAcreateserial -days 2 \
    -extfile "$dir/redis.ext" -out "$dir/redis.pem" 2>>"$dir/openssl.log" || fail "openssl could not sign Redis's certificate"
  chmod 600 "$dir/ca.key" "$dir/redis.key"
}
# Redis's listening flags on PORT (REDIS_PORT by default): plain TCP, or TLS only.
fleet_redis_listen() {
  local port=${1:-$REDIS_PORT}
  if [[ "$FLEET_TLS" == 1 ]]; then
    echo --port 0 --tls-port "$port" --tls-cert-file "$FLEET_TLS_DIR/redis.pem" \
      --tls-key-file "$FLEET_TLS_DIR/redis.key" --tls-ca-cert-file "$FLEET_TLS_DIR/ca.pem" --tls-auth-clients no
  else
    echo --port "$port"
  fi
}
# The instances' --redis (the password percent-encoding-free: hex digits) and, with TLS, the CA that verifies Redis.
# With Sentinel: the Sentinels' addresses and the name they watch (the user and password are the data nodes').
fleet_redis_url() {
  local scheme=redis
  if [[ "$FLEET_SENTINEL" == 1 ]]; then
    local IFS=, sentinels=() port
    for port in "${SENTINEL_PORTS[@]}"; do sentinels+=("127.0.0.1:${port}"); done
    echo "redis-sentinel://${REDIS_USER}:${REDIS_PASSWORD}@${sentinels[*]}?master=${FLEET_MASTER_NAME}"
    return
  fi
  [[ "$FLEET_TLS" == 1 ]] && scheme=rediss
  if [[ "$FLEET_CLUSTER" == 1 ]]; then
    # The first primary as the seed, two more nodes as further seeds.
    echo "${scheme}://${REDIS_USER}:${REDIS_PASSWORD}@127.0.0.1:${CLUSTER_PORTS[0]}?addr=127.0.0.1:${CLUSTER_PORTS[1]}&addr=127.0.0.1:${CLUSTER_PORTS[2]}"
    return
  fi
  echo "${scheme}://${REDIS_USER}:${REDIS_PASSWORD}@127.0.0.1:${REDIS_PORT}"
}
# One flag or value per line.
fleet_redis_flags() {
  printf '%s\n' --redis "$(fleet_redis_url)"
  [[ "$FLEET_CLUSTER" != 1 ]] || printf '%s\n' --redis-cluster
  [[ "$FLEET_TLS" != 1 ]] || printf '%s\n' --redis-tls-ca "$FLEET_TLS_DIR/ca.pem"
}
# redis-cli as the default user, on the primary (fleet_redis_cli_at: on the data node at PORT); 5 s at most.
fleet_redis_cli() { fleet_redis_cli_at "$REDIS_PORT" "$@"; }
fleet_redis_cli_at() {
  local port=$1 tls=()
  shift
  [[ "$FLEET_TLS" == 1 ]] && tls=(--tls --cacert "$FLEET_TLS_DIR/ca.pem")
  REDISCLI_AUTH="$REDIS_ADMIN_PASSWORD" timeout 5 redis-cli "${tls[@]}" -p "$port" "$@"
}

# fleet_redis_server NAME PORT [FLAGS...]: a data node in the background, its append-only file in FLEET_WORK/NAME,
# its log FLEET_WORK/NAME.log; sets LAUNCHED_PID. With Sentinel it runs on its own copy of deploy/redis.conf (Sentinel
# sends CONFIG REWRITE with each REPLICAOF, which would write the fleet's flags and passwords into the repository's
# file) and has the admin password as --masterauth, to follow whichever node is the primary after a failover.
fleet_redis_server() {
  local name=$1 port=$2 rules listen conf="$FLEET_ROOT/deploy/redis.conf" extra=()
  shift 2
  read -r -a rules <<<"$(fleet_redis_rules)"
  read -r -a listen <<<"$(fleet_redis_listen "$port")"
  if [[ "$FLEET_SENTINEL" == 1 ]]; then
    conf="$FLEET_WORK/${name}.conf"
    cp "$FLEET_ROOT/deploy/redis.conf" "$conf"
    extra=(--masterauth "$REDIS_ADMIN_PASSWORD")
  fi
  if [[ "$FLEET_CLUSTER" == 1 ]]; then
    mapfile -t extra < <(fleet_cluster_flags)
    extra+=(--masterauth "$REDIS_ADMIN_PASSWORD" --cluster-port "$(free_port)")
    [[ "$FLEET_TLS" == 1 ]] && extra+=(--tls-cluster yes --tls-replication yes)
  fi
  mkdir -p "$FLEET_WORK/${name}"
  redis-server "$conf" "${listen[@]}" --bind 127.0.0.1 --dir "$FLEET_WORK/${name}" \
    --requirepass "$REDIS_ADMIN_PASSWORD" --user "$REDIS_USER" on ">${REDIS_PASSWORD}" "${rules[@]}" \
    "${extra[@]}" "$@" --daemonize no >"$FLEET_WORK/${name}.log" 2>&1 &
  LAUNCHED_PID=$!
}

# Redis (with Sentinel, the primary), its append-only file in FLEET_WORK/redis; ours when INFO names its process id.
fleet_redis_start() {
  REDIS_PORT="$(free_port)"
  fleet_redis_server redis "$REDIS_PORT"
  REDIS_PID=$LAUNCHED_PID
}
fleet_redis_ours() {
  fleet_redis_cli info server 2>/dev/null | grep -q "^process_id:${REDIS_PID}"$'\r'
}

# With FLEET_SENTINEL=1 (`make fleet SENTINEL=1`, CONTRACT §10.3; plain TCP only) the instances find the primary
# through Sentinel, set up as Tests/RedisTestSupport/SentinelGroup.swift does: the primary above, a replica of it
# (with the same ACL user: ACL users are not replicated) and three Sentinels watching the primary as `fleet` (quorum
# 2, down after 1 s, failover timeout 5 s), each on its own port with its own config file in FLEET_WORK (Sentinel
# rewrites it). A killed primary is replaced in about 2-4 s; `SENTINEL FAILOVER fleet` on a Sentinel switches at once.
FLEET_SENTINEL=${FLEET_SENTINEL:-0}
FLEET_MASTER_NAME=fleet
fleet_replica_start() {
  REPLICA_PORT="$(free_port)"
  while [[ "$REPLICA_PORT" == "$REDIS_PORT" ]]; do REPLICA_PORT="$(free_port)"; done
  fleet_redis_server replica "$REPLICA_PORT" --replicaof 127.0.0.1 "$REDIS_PORT"
  REPLICA_PID=$LAUNCHED_PID
}
fleet_replica_ours() {
  fleet_redis_cli_at "$REPLICA_PORT" info server 2>/dev/null | grep -q "^process_id:${REPLICA_PID}"$'\r'
}
# fleet_sentinel_cli N COMMAND...: redis-cli on Sentinel N (0-2; they have no password); 5 s at most.
fleet_sentinel_cli() {
  local n=$1
  shift
  timeout 5 redis-cli -p "${SENTINEL_PORTS[n]}" "$@"
}
fleet_sentinel_start() {
  local n=$((${#SENTINEL_PIDS[@]} + 1)) port conf
  port="$(free_port)"
  while [[ " ${REDIS_PORT} ${REPLICA_PORT} ${SENTINEL_PORTS[*]} " == *" ${port} "* ]]; do port="$(free_port)"; done
  conf="$FLEET_WORK/sentinel-${n}.conf"
  printf '%s\n' "port ${port}" "bind 127.0.0.1" "daemonize no" "dir ${FLEET_WORK}" \
    "sentinel monitor ${FLEET_MASTER_NAME} 127.0.0.1 ${REDIS_PORT} 2" \
    "sentinel auth-pass ${FLEET_MASTER_NAME} ${REDIS_ADMIN_PASSWORD}" \
    "sentinel down-after-milliseconds ${FLEET_MASTER_NAME} 1000" \
    "sentinel failover-timeout ${FLEET_MASTER_NAME} 5000" >"$conf"
  chmod 600 "$conf"
  redis-server "$conf" --sentinel >"$FLEET_WORK/sentinel-${n}.log" 2>&1 &
  LAUNCHED_PID=$!
  SENTINEL_LAUNCHED_PORT=$port
}
fleet_sentinel_ours() {
  timeout 5 redis-cli -p "$SENTINEL_LAUNCHED_PORT" info server 2>/dev/null \
    | grep -q "^process_id:${LAUNCHED_PID}"$'\r'
}
# Ready for a failover (as SentinelGroup.waitUntilReadyForFailover): every Sentinel knows the replica (its flags just
# `slave`, its link to the primary ok) and the two other Sentinels, and the replica is in sync. redis-cli prints a
# SENTINEL reply one field or value a line.
fleet_sentinels_ready() {
  local n replicas
  for n in 0 1 2; do
    replicas="$(fleet_sentinel_cli "$n" SENTINEL replicas "$FLEET_MASTER_NAME" 2>/dev/null)" || return 1
    [[ "$(grep -cx name <<<"$replicas")" == 1 ]] || return 1
    [[ "$(grep -A1 -x flags <<<"$replicas" | tail -n 1)" == slave ]] || return 1
    [[ "$(grep -A1 -x master-link-status <<<"$replicas" | tail -n 1)" == ok ]] || return 1
    [[ "$(fleet_sentinel_cli "$n" SENTINEL sentinels "$FLEET_MASTER_NAME" 2>/dev/null | grep -cx name)" == 2 ]] || return 1
  done
  fleet_redis_cli_at "$REPLICA_PORT" info replication 2>/dev/null | grep -q "^master_link_status:up"$'\r'
}
# The replica, the Sentinels (each ours when its INFO names its process id), then the wait until a failover can be.
fleet_sentinel_group_start() {
  local n deadline
  fleet_launch replica fleet_replica_start fleet_replica_ours
  for n in 1 2 3; do
    fleet_launch "sentinel ${n}" fleet_sentinel_start fleet_sentinel_ours
    SENTINEL_PIDS+=("$LAUNCHED_PID")
    SENTINEL_PORTS+=("$SENTINEL_LAUNCHED_PORT")
  done
  deadline=$((SECONDS + STARTUP_TIMEOUT))
  until fleet_sentinels_ready; do
    ((SECONDS < deadline)) \
      || fail "within ${STARTUP_TIMEOUT}s the Sentinels did not all see the replica (in sync) and each other"
    sleep 0.1
  done
}

# With FLEET_CLUSTER=1 (`make fleet CLUSTER=1`, CONTRACT §13; with FLEET_TLS=1 too) Redis is a cluster of three
# primaries and three replicas, set up as Tests/RedisTestSupport/RedisTestCluster.swift does, on deploy/redis.conf
# with deploy/redis-cluster.conf's settings as flags (`cluster-require-full-coverage no` among them): each node on
# its own port and cluster bus port, with the ACL user of deploy/redis-cluster-acl.rules (ACL users are per node),
# made a cluster by `redis-cli --cluster create`. REDIS_PID and REDIS_PORT name the first primary.
FLEET_CLUSTER=${FLEET_CLUSTER:-0}
FLEET_CLUSTER_NODES=6
# deploy/redis-cluster.conf's settings, one flag or value per line.
fleet_cluster_flags() {
  local name value
  while read -r name value; do
    [[ -z "$name" || "$name" == \#* ]] && continue
    printf '%s\n' "--${name}" "$value"
  done <"$FLEET_ROOT/deploy/redis-cluster.conf"
}
fleet_cluster_node_start() {
  local n=$((${#CLUSTER_PIDS[@]} + 1)) port
  port="$(free_port)"
  while [[ " ${CLUSTER_PORTS[*]} " == *" ${port} "* ]]; do port="$(free_port)"; done
  CLUSTER_LAUNCHED_PORT=$port
  fleet_redis_server "node-${n}" "$port"
}
fleet_cluster_node_ours() {
  fleet_redis_cli_at "$CLUSTER_LAUNCHED_PORT" info server 2>/dev/null | grep -q "^process_id:${LAUNCHED_PID}"$'\r'
}
# Whole: every node says cluster_state:ok and every replica is in step with its primary.
fleet_cluster_whole() {
  local port
  for port in "${CLUSTER_PORTS[@]}"; do
    fleet_redis_cli_at "$port" cluster info 2>/dev/null | grep -q "^cluster_state:ok"$'\r' || return 1
    fleet_redis_cli_at "$port" info replication 2>/dev/null | grep -Eq "^(role:master|master_link_status:up)"$'\r' || return 1
  done
}
fleet_cluster_start() {
  local n addresses=() tls=() deadline
  for ((n = 1; n <= FLEET_CLUSTER_NODES; n++)); do
    fleet_launch "redis-server node ${n}" fleet_cluster_node_start fleet_cluster_node_ours
    CLUSTER_PIDS+=("$LAUNCHED_PID")
    CLUSTER_PORTS+=("$CLUSTER_LAUNCHED_PORT")
    addresses+=("127.0.0.1:${CLUSTER_LAUNCHED_PORT}")
  done
  REDIS_PID=${CLUSTER_PIDS[0]} REDIS_PORT=${CLUSTER_PORTS[0]}
  [[ "$FLEET_TLS" == 1 ]] && tls=(--tls --cacert "$FLEET_TLS_DIR/ca.pem")
  REDISCLI_AUTH="$REDIS_ADMIN_PASSWORD" timeout 60 redis-cli "${tls[@]}" --cluster create "${addresses[@]}" \
    --cluster-replicas 1 --cluster-yes >"$FLEET_WORK/cluster-create.log" 2>&1 \
    || fail "redis-cli --cluster create failed (${FLEET_WORK}/cluster-create.log): $(tail -n 5 "$FLEET_WORK/cluster-create.log")"
  deadline=$((SECONDS + STARTUP_TIMEOUT))
  until fleet_cluster_whole; do
    ((SECONDS < deadline)) || fail "within ${STARTUP_TIMEOUT}s the cluster's nodes did not all say cluster_state:ok with their replicas in step"
    sleep 0.1
  done
}

# One instance on port 0 (it says which port it took), its own data dir, the fleet's Redis.
fleet_start_instance() {
  local name=$1
  # shellcheck disable=SC2034 # read by start_service (service-lib.sh)
  SERVICE_LOG="$FLEET_WORK/${name}.log"
  fleet_run_instance "$name" 0
  INSTANCE_NAMES+=("$name")
  INSTANCE_PIDS+=("$SERVICE_PID")
  INSTANCE_PORTS+=("$SERVICE_PORT")
  SERVICE_PID=""   # stopped by fleet_stop, not by the caller's service-lib trap
}
fleet_run_instance() {
  local name=$1 port=$2 redis
  mapfile -t redis < <(fleet_redis_flags)
  start_service "$BIN" --host 127.0.0.1 --port "$port" --data-dir "$FLEET_WORK/${name}" \
    "${redis[@]}" "${FLEET_ARGS[@]}"
  FLEET_PIDS+=("$SERVICE_PID")
}
# fleet_restart_instance I: instance I (killed) started again on its port (the balancer's address for it) and its
# data dir, its log FLEET_WORK/NAME.restarted.log.
fleet_restart_instance() {
  local i=$1
  # shellcheck disable=SC2034 # read by start_service (service-lib.sh)
  SERVICE_LOG="$FLEET_WORK/${INSTANCE_NAMES[i]}.restarted.log"
  fleet_run_instance "${INSTANCE_NAMES[i]}" "${INSTANCE_PORTS[i]}"
  INSTANCE_PIDS[i]=$SERVICE_PID
  SERVICE_PID=""
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

# Redis (with Sentinel: the primary, the replica and the Sentinels, ready for a failover), the instances (each ready
# and subscribed to the fleet's invalidations), then the balancer.
fleet_start() {
  local i name tool
  for tool in redis-server redis-cli haproxy curl jq ss timeout; do
    command -v "$tool" >/dev/null || fail "${tool} is missing: \`make deps\` installs it (APT_PACKAGES in the Makefile)"
  done
  [[ -n "${BIN:-}" ]] || fail "set UNICACHE_BIN to the unicache executable (\`make fleet\` and \`make fleet-check\` build the release one and set it)"
  [[ -x "$BIN" ]] || fail "no executable at ${BIN}"
  [[ -n "${UNICACHE_ADMIN_TOKEN:-}" ]] || fail "UNICACHE_ADMIN_TOKEN is not set"
  [[ "$FLEET_SENTINEL" == 1 && "$FLEET_TLS" == 1 ]] && fail "FLEET_SENTINEL=1 runs over plain TCP only, not with FLEET_TLS=1"
  [[ "$FLEET_SENTINEL" == 1 && "$FLEET_CLUSTER" == 1 ]] && fail "FLEET_SENTINEL=1 and FLEET_CLUSTER=1 are two kinds of Redis: choose one"
  [[ "$FLEET_TLS" == 1 ]] && fleet_tls_certificates
  if [[ "$FLEET_CLUSTER" == 1 ]]; then
    fleet_cluster_start
  else
    fleet_launch redis-server fleet_redis_start fleet_redis_ours
  fi
  [[ "$FLEET_SENTINEL" == 1 ]] && fleet_sentinel_group_start
  for name in "${FLEET_INSTANCES[@]}"; do
    fleet_start_instance "$name"
  done
  fleet_launch haproxy fleet_balancer_start fleet_balancer_ours
  wait_for_http "http://127.0.0.1:${BALANCER_PORT}/readyz" '"status":"ready"' "$STARTUP_TIMEOUT" \
    || fail "the balancer on ${BALANCER_PORT} did not answer /readyz within ${STARTUP_TIMEOUT}s"
  fleet_wait_shared_connected
}

# Every instance's /stats reports the shared tier connected (shared.connected: its Redis link up and the fleet's
# invalidation channel subscribed), polled for up to STARTUP_TIMEOUT seconds; else fail naming those that do not
# and what to look at. The last step of fleet_start: what is printed or checked after it runs on a whole fleet.
fleet_wait_shared_connected() {
  local i deadline waiting=()
  deadline=$((SECONDS + STARTUP_TIMEOUT))
  while :; do
    waiting=()
    for i in "${!INSTANCE_NAMES[@]}"; do
      curl -sf --max-time 2 "http://127.0.0.1:${INSTANCE_PORTS[i]}/stats" 2>/dev/null \
        | jq -e '.shared.connected == true' >/dev/null 2>&1 || waiting+=("${INSTANCE_NAMES[i]}")
    done
    ((${#waiting[@]} == 0)) && return 0
    ((SECONDS < deadline)) || break
    sleep 0.1
  done
  fail "after ${STARTUP_TIMEOUT}s, ${waiting[*]} did not report the shared tier connected (/stats shared.connected" \
    "true), so the fleet is not up: the logs below say why (Redis refusing the connection, AUTH or ACL errors)"
}

# SIGTERM to every process still running (balancer first, the Sentinels before the data nodes, Redis last), then SIGKILL to any left after STOP_TIMEOUT.
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
