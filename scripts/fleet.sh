#!/usr/bin/env bash
# The fleet of compose.fleet.yaml on this machine, without Docker (`make fleet`): Debian's redis-server, two
# instances of the release build and Debian's haproxy in front, each on a free loopback port. Prints where to curl,
# runs until Ctrl-C (or SIGTERM), then stops everything it started, by PID. An instance or Redis killed meanwhile
# is reported and the rest keeps running (to watch the balancer and the fleet cope). FLEET_TLS=1 (`make fleet TLS=1`):
# Redis speaks TLS only; FLEET_SENTINEL=1 (`make fleet SENTINEL=1`): a primary, a replica and three Sentinels, the
# instances connecting with `redis-sentinel://` (to watch them follow `SENTINEL FAILOVER fleet` or a killed primary);
# FLEET_CLUSTER=1 (`make fleet CLUSTER=1`, with TLS=1 too): a Redis Cluster of three primaries and three replicas,
# the instances with `--redis-cluster` (to watch them follow a killed primary's promotion or a reshard).
# Usage: scripts/fleet.sh [unicache flags for every instance...]
#   UNICACHE_BIN=/path/to/unicache (`make fleet` passes the release build); UNICACHE_ADMIN_TOKEN (else a random one,
#   printed); the instances keep their default access mode, protected: loopback clients only, which the balancer is.
set -euo pipefail
cd "$(dirname "$0")/.."

STARTUP_TIMEOUT=${FLEET_STARTUP_TIMEOUT:-60}   # seconds for each process to come up (and the fleet to connect)
STOP_TIMEOUT=15      # seconds for each to stop after SIGTERM (an instance drains in-flight requests for up to 10 s)
FLEET_SCRIPT=fleet
FLEET_WORK="$(mktemp -d /tmp/unicache-fleet-XXXXXX)"
# shellcheck source=scripts/service-lib.sh
source scripts/service-lib.sh
# shellcheck source=scripts/fleet-lib.sh
source scripts/fleet-lib.sh

BIN="${UNICACHE_BIN:-}"
FLEET_ARGS=("$@")
if [[ -z "${UNICACHE_ADMIN_TOKEN:-}" ]]; then
  UNICACHE_ADMIN_TOKEN="$(fleet_random_token)"
  token_note="random; set UNICACHE_ADMIN_TOKEN to choose it"
  token_shown="$UNICACHE_ADMIN_TOKEN"
else
  token_note="from UNICACHE_ADMIN_TOKEN"
  # shellcheck disable=SC2016 # printed for the user's shell to expand
  token_shown='$UNICACHE_ADMIN_TOKEN'
fi
export UNICACHE_ADMIN_TOKEN

fleet_stop_on_exit

# Returns once every instance's /stats reports the shared tier connected (or fails, saying which did not, within
# STARTUP_TIMEOUT): the commands printed below work as their comments say from the first one.
fleet_start

lb="http://127.0.0.1:${BALANCER_PORT}"
a="http://127.0.0.1:${INSTANCE_PORTS[0]}"
b="http://127.0.0.1:${INSTANCE_PORTS[1]}"
redis_shown="$(fleet_redis_url | sed 's|//.*@|//|')"
sentinel_lines=""
if [[ "$FLEET_SENTINEL" == 1 ]]; then
  sentinel_lines="  sentinels   ${redis_shown}   pids ${SENTINEL_PIDS[*]}
  replica     redis://127.0.0.1:${REPLICA_PORT}   pid ${REPLICA_PID}; to switch: redis-cli -p ${SENTINEL_PORTS[0]} SENTINEL FAILOVER ${FLEET_MASTER_NAME}
"
  redis_shown="redis://127.0.0.1:${REDIS_PORT} (the primary at start)"
fi
if [[ "$FLEET_CLUSTER" == 1 ]]; then
  sentinel_lines="  cluster     nodes on ${CLUSTER_PORTS[*]} (pids ${CLUSTER_PIDS[*]}), the first three the primaries at start;
              to look: redis-cli -c -p ${REDIS_PORT} cluster shards; to reshard: redis-cli --cluster reshard 127.0.0.1:${REDIS_PORT}
"
  redis_shown="$(fleet_redis_url | sed 's|//.*@|//|') (--redis-cluster)"
fi
cat <<EOF

unicache fleet up (logs and data in ${FLEET_WORK}, removed on exit):
  balancer    ${lb}   haproxy, pid ${BALANCER_PID}; its stats http://127.0.0.1:${BALANCER_STATS_PORT}/stats, metrics /metrics
  unicache-a  ${a}   pid ${INSTANCE_PIDS[0]}
  unicache-b  ${b}   pid ${INSTANCE_PIDS[1]}
${sentinel_lines}  redis       ${redis_shown}   pid ${REDIS_PID}; the instances connect as ACL user ${REDIS_USER}
              (deploy/redis-$([[ "$FLEET_CLUSTER" == 1 ]] && echo cluster-)acl.rules); look inside with REDISCLI_AUTH=${REDIS_ADMIN_PASSWORD} redis-cli -p ${REDIS_PORT}$(
                [[ "$FLEET_TLS" == 1 ]] && echo " --tls --cacert ${FLEET_TLS_DIR}/ca.pem")
  admin token ${token_shown}   (${token_note})

A value fetched by one instance is a shared hit on the other:
  curl -si ${a}/v1/users/alice/subscription | grep -i '^x-cache'    # X-Cache: MISS (a fetched it)
  curl -si ${b}/v1/users/alice/subscription | grep -i '^x-cache'    # X-Cache: HIT, X-Cache-Tier: shared
Through the balancer (X-Served-By names the instance; requests alternate):
  curl -si ${lb}/v1/users/bob/subscription | grep -iE '^x-(cache|served)'
An event sent to one instance invalidates the value on every one (within 100 ms):
  curl -s -X POST -H "Authorization: Bearer ${token_shown}" -d '{"type":"subscription.updated"}' ${lb}/v1/users/alice/events
  curl -s -o /dev/null -w '%{http_code}\\n' -H 'Cache-Control: only-if-cached' ${b}/v1/users/alice/subscription   # 504: gone
Kill one (kill ${INSTANCE_PIDS[1]}) and the balancer still answers; kill Redis (kill ${REDIS_PID}) and reads still do.
Ctrl-C stops everything.
EOF

# Until Ctrl-C: report each process that exits, keep the others running.
running=("${FLEET_PIDS[@]}")
while ((${#running[@]} > 0)); do
  ended=""
  wait -n -p ended "${running[@]}" || true
  [[ -n "$ended" ]] || continue
  what="pid ${ended}"
  [[ "$ended" == "$REDIS_PID" ]] && what="redis (pid ${ended})"
  [[ "$ended" == "$REPLICA_PID" ]] && what="the replica (pid ${ended})"
  for i in "${!CLUSTER_PIDS[@]}"; do
    [[ "$ended" == "${CLUSTER_PIDS[i]}" ]] && what="cluster node $((i + 1)) (pid ${ended})"
  done
  for i in "${!SENTINEL_PIDS[@]}"; do
    [[ "$ended" == "${SENTINEL_PIDS[i]}" ]] && what="sentinel $((i + 1)) (pid ${ended})"
  done
  [[ "$ended" == "$BALANCER_PID" ]] && what="haproxy (pid ${ended})"
  for i in "${!INSTANCE_PIDS[@]}"; do
    [[ "$ended" == "${INSTANCE_PIDS[i]}" ]] && what="${INSTANCE_NAMES[i]} (pid ${ended})"
  done
  echo "fleet: ${what} exited; the rest keeps running (Ctrl-C stops it)" >&2
  remaining=()
  for pid in "${running[@]}"; do [[ "$pid" == "$ended" ]] || remaining+=("$pid"); done
  running=("${remaining[@]}")
done
echo "fleet: every process has exited" >&2
