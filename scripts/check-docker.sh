#!/usr/bin/env bash
# Proves what the Docker image needs without a Docker engine (CI: Debian 12 with Swift, apt and pip, as root):
#   1. hadolint passes on the Dockerfile; every compose file follows the compose specification (check-jsonschema),
#      and the HAProxy, Redis and Prometheus configurations they mount are valid;
#   2. the release binary is built exactly as the Dockerfile builds it (or taken from UNICACHE_BIN);
#   3. every shared library `ldd` lists is provided by a package the runtime stage installs, by one of their
#      dependencies, or by the base image's allow-list (BASE_PACKAGES below);
#   4. the binary serves as a non-root user with a read-only parent of its data dir: the start-up line,
#      /healthz 200, `unicache healthcheck` 0 against it and non-zero against a closed port, SIGTERM → exit 0;
#   5. the same with a certificate and key (UNICACHE_TLS_CERT/KEY): HTTPS, and the healthcheck healthy over it.
# Usage: scripts/check-docker.sh   (UNICACHE_BIN=/path/to/unicache skips the build; DOCKERFILE=path checks another file)
set -euo pipefail
cd "$(dirname "$0")/.."

# python3 and the pinned Python tools (scripts/requirements-check.txt) in the project's .venv/.
# shellcheck source=scripts/python-env.sh
source scripts/python-env.sh
# What debian:bookworm-slim itself provides and the runtime stage need not install: libc6 owns libc.so.6,
# libm.so.6, libpthread, libdl, librt and the dynamic loader (/lib64/ld-linux-x86-64.so.2).
BASE_PACKAGES=(libc6)
DOCKERFILE="${DOCKERFILE:-Dockerfile}"
STARTUP_TIMEOUT=60   # seconds to wait for the start-up line
STOP_TIMEOUT=20      # seconds to wait for exit after SIGTERM

step() { printf '\n== check-docker: %s\n' "$*"; }
fail() { printf 'check-docker: FAIL: %s\n' "$*" >&2; exit 1; }
warn() { printf 'check-docker: warning: %s\n' "$*" >&2; }

WORK="$(mktemp -d)"
chmod 0755 "$WORK"
SERVICE_LOG="$WORK/service.log"
# shellcheck source=scripts/service-lib.sh
source scripts/service-lib.sh
cleanup() {
  if [[ -n "$SERVICE_PID" ]] && kill -0 "$SERVICE_PID" 2>/dev/null; then
    kill -KILL "$SERVICE_PID" 2>/dev/null || true
  fi
  chmod -R u+w "$WORK" 2>/dev/null || true
  rm -rf "$WORK"
}
trap cleanup EXIT

# ---------------------------------------------------------------------------------------------- 1. hadolint
step "hadolint ${DOCKERFILE}"
hadolint "$DOCKERFILE"
echo "hadolint: no findings"

# The image's promises (see docs/operations.md), so that an edit cannot drop one silently.
while IFS= read -r rule; do
  grep -Eq "$rule" "$DOCKERFILE" || fail "the Dockerfile lacks a line matching: $rule"
done <<'RULES'
^FROM swift:[0-9]+\.[0-9]+(\.[0-9]+)?-bookworm AS build
swift build -c release --static-swift-stdlib --product unicache
^FROM debian:bookworm(-[0-9]+)?-slim
^USER 10001(:10001)?$
^VOLUME \["/data"\]$
^EXPOSE 8080$
UNICACHE_HOST=0\.0\.0\.0
UNICACHE_DATA_DIR=/data
UNICACHE_AUTH=(jwt|none)
^STOPSIGNAL SIGTERM$
^HEALTHCHECK .*CMD \["unicache", "healthcheck"\]$
^ENTRYPOINT \["unicache"\]$
RULES
echo "Dockerfile: build stage, non-root user, /data volume, port, env, healthcheck, stop signal, entrypoint"

# Every compose file against the compose specification (no Docker engine here: check-jsonschema's copy of it), their
# services, and the configurations they mount.
step "compose files"
COMPOSE_FILES=(compose*.yaml)
check-jsonschema --builtin-schema vendor.compose-spec "${COMPOSE_FILES[@]}" \
  || fail "a compose file does not follow the compose specification"
python3 - <<'PY' || fail "a compose file lacks a service or a setting it promises (above)"
import sys, yaml
def services(path, wanted):
    found = yaml.safe_load(open(path))["services"]
    missing = wanted - set(found)
    if missing:
        sys.exit(f"{path}: no service {sorted(missing)}")
    return found
services("compose.yaml", {"unicache", "prometheus"})
fleet = services("compose.fleet.yaml", {"redis", "unicache-a", "unicache-b", "balancer", "prometheus"})
volumes = set()
for name in ("unicache-a", "unicache-b"):
    env, data = fleet[name]["environment"], [v for v in fleet[name]["volumes"] if v.endswith(":/data")]
    for key in ("UNICACHE_AUTH", "UNICACHE_ADMIN_TOKEN", "UNICACHE_REDIS"):
        if key not in env:
            sys.exit(f"compose.fleet.yaml: {name} does not set {key}")
    if "build" not in fleet[name] or len(data) != 1:
        sys.exit(f"compose.fleet.yaml: {name} is not built from the Dockerfile with a data volume of its own")
    volumes.add(data[0])
if len(volumes) != 2:
    sys.exit("compose.fleet.yaml: the instances share a data volume")
# The files `make fleet` runs Debian's redis-server and haproxy on are the ones the compose file mounts.
for name, config in (("redis", "./deploy/redis.conf"), ("balancer", "./deploy/haproxy.cfg")):
    if not any(v.startswith(config + ":") for v in fleet[name]["volumes"]):
        sys.exit(f"compose.fleet.yaml: {name} does not mount {config}, the file scripts/fleet-lib.sh uses")
# The cluster profile (`make fleet CLUSTER=1`'s topology): six nodes on the files fleet-lib.sh uses, the instances
# with --redis-cluster and data volumes of their own, a balancer; every one of them only in that profile.
nodes = [f"redis-node-{n}" for n in range(1, 7)]
cluster = nodes + ["redis-cluster-create", "unicache-cluster-a", "unicache-cluster-b", "balancer-cluster"]
services("compose.fleet.yaml", set(cluster))
for name in cluster:
    if fleet[name].get("profiles") != ["cluster"]:
        sys.exit(f"compose.fleet.yaml: {name} is not in the cluster profile (alone)")
for name in nodes:
    for config in ("./deploy/redis.conf", "./deploy/redis-cluster.conf", "./deploy/redis-cluster-acl.rules"):
        if not any(v.startswith(config + ":") for v in fleet[name]["volumes"]):
            sys.exit(f"compose.fleet.yaml: {name} does not mount {config}, a file scripts/fleet-lib.sh uses")
for name in ("unicache-cluster-a", "unicache-cluster-b"):
    env = fleet[name]["environment"]
    if env.get("UNICACHE_REDIS_CLUSTER") != "true" or "UNICACHE_REDIS" not in env or "build" not in fleet[name]:
        sys.exit(f"compose.fleet.yaml: {name} is not an instance built from the Dockerfile with --redis-cluster")
    volumes.add([v for v in fleet[name]["volumes"] if v.endswith(":/data")][0])
if len(volumes) != 4:
    sys.exit("compose.fleet.yaml: instances share a data volume")
PY
echo "compose files: valid (${COMPOSE_FILES[*]}), with their services"
grep -Eq '^cluster-require-full-coverage no$' deploy/redis-cluster.conf \
  || fail "deploy/redis-cluster.conf does not set cluster-require-full-coverage no (one dead primary would stop every shard's writes)"
if ! grep -Eq '^appendonly yes$' deploy/redis.conf || ! grep -Eq '^appendfsync everysec$' deploy/redis.conf; then
  fail "deploy/redis.conf does not keep an append-only file fsynced every second"
fi
grep -Eq '^ *http-check send meth GET uri /readyz ' deploy/haproxy.cfg \
  || fail "deploy/haproxy.cfg does not health-check the instances' /readyz"
if command -v haproxy >/dev/null 2>&1; then
  FLEET_LISTEN=127.0.0.1:8080 FLEET_STATS=127.0.0.1:8404 FLEET_SERVER_A=127.0.0.1:8081 FLEET_SERVER_B=127.0.0.1:8082 \
    haproxy -c -q -f deploy/haproxy.cfg || fail "deploy/haproxy.cfg is not a valid HAProxy configuration"
  echo "deploy/haproxy.cfg: valid"
fi
if command -v promtool >/dev/null 2>&1; then
  for config in deploy/prometheus.yml deploy/prometheus.fleet.yml; do
    promtool check config "$config" >/dev/null || fail "${config} is not a valid Prometheus configuration"
    echo "${config}: valid"
  done
fi

# ---------------------------------------------------------------------------------------------- 2. binary
if [[ -n "${UNICACHE_BIN:-}" ]]; then
  step "binary from UNICACHE_BIN=${UNICACHE_BIN}"
  BIN_SOURCE="$UNICACHE_BIN"
else
  step "swift build -c release --static-swift-stdlib --product unicache"
  swift build -c release --static-swift-stdlib --product unicache
  BIN_SOURCE="$(swift build -c release --static-swift-stdlib --show-bin-path)/unicache"
fi
[[ -x "$BIN_SOURCE" ]] || fail "no executable at $BIN_SOURCE"
# A copy in a world-readable folder, so that the non-root user below can run it like /usr/local/bin/unicache.
mkdir -p "$WORK/bin"
install -m 0755 "$BIN_SOURCE" "$WORK/bin/unicache"
find "$(dirname "$BIN_SOURCE")" -maxdepth 1 -name '*.resources' -exec cp -R {} "$WORK/bin/" \;  # as the image does
BIN="$WORK/bin/unicache"

# ---------------------------------------------------------------------------------------------- 3. libraries
step "shared libraries vs. the runtime stage's packages"
# The runtime stage is the last FROM of the Dockerfile; join continuation lines, keep its RUN instructions.
RUNTIME_STAGE="$(awk '/^FROM[[:space:]]/ { stage = "" } { stage = stage $0 "\n" } END { printf "%s", stage }' "$DOCKERFILE" \
  | sed -e ':a' -e '/\\$/N; s/\\\n/ /; ta' | sed -e 's/#.*$//')"
grep -Eq '^FROM[[:space:]]+debian:bookworm(-[0-9]+)?-slim([[:space:]]|$)' <<<"$RUNTIME_STAGE" \
  || fail "the runtime stage is not FROM debian:bookworm-slim"
INSTALL_SEGMENT="$(grep -E '^RUN ' <<<"$RUNTIME_STAGE" | tr '&;|' '\n' | grep -E 'apt-get[[:space:]]+install' || true)"
[[ -n "$INSTALL_SEGMENT" ]] || fail "the runtime stage has no apt-get install"
grep -q -- '--no-install-recommends' <<<"$INSTALL_SEGMENT" || fail "apt-get install without --no-install-recommends"
grep -q 'rm -rf /var/lib/apt/lists' <<<"$RUNTIME_STAGE" || fail "the runtime stage keeps the apt lists"
declare -a RUNTIME_PACKAGES=() PINS=()
# shellcheck disable=SC2013 # the words of the install command are what we want
for word in $(sed -E 's/.*apt-get[[:space:]]+install//' <<<"$INSTALL_SEGMENT"); do
  [[ "$word" == -* ]] && continue
  PINS+=("$word")
  RUNTIME_PACKAGES+=("${word%%=*}")
done
((${#RUNTIME_PACKAGES[@]} > 0)) || fail "no packages found in the runtime stage's apt-get install"
echo "runtime stage installs: ${RUNTIME_PACKAGES[*]}"
echo "base image allow-list:  ${BASE_PACKAGES[*]}"

# Pins that no longer match bookworm's current version would break `docker build`: say so (apt lists permitting).
for pin in "${PINS[@]}"; do
  [[ "$pin" == *=* ]] || { warn "${pin} is not pinned to a version"; continue; }
  candidate="$(apt-cache policy "${pin%%=*}" 2>/dev/null | awk '/Candidate:/ { print $2 }')"
  if [[ -n "$candidate" && "$candidate" != "(none)" && "$candidate" != "${pin#*=}" ]]; then
    warn "${pin%%=*} is pinned to ${pin#*=} but apt's candidate is ${candidate}"
  fi
done

# Everything the runtime packages pull in (Depends and Pre-Depends, recursively, every alternative).
declare -A PROVIDED=()
queue=("${RUNTIME_PACKAGES[@]}" "${BASE_PACKAGES[@]}")
while ((${#queue[@]} > 0)); do
  pkg="${queue[0]}"; queue=("${queue[@]:1}")
  [[ -n "${PROVIDED[$pkg]:-}" ]] && continue
  PROVIDED[$pkg]=1
  deps="$(dpkg-query -W -f='${Depends}, ${Pre-Depends}' "$pkg" 2>/dev/null || true)"
  for dep in $(tr ',|' '\n' <<<"$deps" | sed -E 's/\(.*\)//; s/:any//; s/[[:space:]]//g' | grep -v '^$' || true); do
    [[ -z "${PROVIDED[$dep]:-}" ]] && queue+=("$dep")
  done
done

owner_of() { # the package(s) owning a library file, trying the path as shown, its real path and the /usr twin
  local path="$1" candidate real
  real="$(readlink -f "$path")"
  for candidate in "$path" "$real" "/usr$path" "${path#/usr}" "/usr$real" "${real#/usr}"; do
    if out="$(dpkg -S "$candidate" 2>/dev/null)"; then
      sed -E 's/: .*$//; s/:[a-z0-9_]+//g; s/, /\n/g' <<<"$out" | sort -u
      return 0
    fi
  done
  return 1
}

LDD_OUT="$(ldd "$BIN")" || fail "ldd failed on the binary"
missing=0
declare -A NEEDED_PACKAGES=()
while read -r line; do
  [[ -z "$line" || "$line" == linux-vdso* || "$line" == linux-gate* ]] && continue
  if [[ "$line" == *"not found"* ]]; then
    echo "  $line"; missing=1; continue
  fi
  if [[ "$line" == *" => "* ]]; then
    path="$(sed -E 's/.* => ([^ ]+).*/\1/' <<<"$line")"
  else
    path="$(awk '{ print $1 }' <<<"$line")"
  fi
  if ! owners="$(owner_of "$path")"; then
    printf '  %-45s NO PACKAGE OWNS IT\n' "$path"; missing=1; continue
  fi
  ok=""
  for owner in $owners; do
    NEEDED_PACKAGES[$owner]=1
    [[ -n "${PROVIDED[$owner]:-}" ]] && ok="$owner"
  done
  if [[ -n "$ok" ]]; then
    printf '  %-45s %s\n' "$path" "$ok"
  else
    printf '  %-45s %s  <- NOT INSTALLED BY THE RUNTIME STAGE\n' "$path" "$(tr '\n' ' ' <<<"$owners")"; missing=1
  fi
done <<<"$LDD_OUT"
((missing == 0)) || fail "the runtime stage does not provide every shared library (add the packages above)"
for pkg in "${RUNTIME_PACKAGES[@]}"; do
  if [[ -z "${NEEDED_PACKAGES[$pkg]:-}" && "$pkg" != ca-certificates ]]; then
    echo "  note: ${pkg} owns none of the binary's libraries (kept on purpose, or drop it)"
  fi
done
echo "every shared library is provided"

# ---------------------------------------------------------------------------------------------- 4. run it
step "run as a non-root user"
if [[ "$(id -u)" == 0 ]]; then
  RUN_USER="unicache-check"
  id -u "$RUN_USER" >/dev/null 2>&1 \
    || useradd --system --no-log-init --no-create-home --home-dir /nonexistent --shell /usr/sbin/nologin "$RUN_USER"
  # setpriv execs the service (no shell in between), so $! below is the service's own pid.
  AS_USER=(setpriv --reuid="$RUN_USER" --regid="$(id -g "$RUN_USER")" --clear-groups --)
else
  RUN_USER="$(id -un)"
  AS_USER=()
fi
echo "user: ${RUN_USER} ($(id -u "$RUN_USER"))"
# Like the image: the data dir belongs to the user, its parent is read-only to it.
mkdir -p "$WORK/root/data"
chown "$RUN_USER" "$WORK/root/data" 2>/dev/null || true
chmod 0700 "$WORK/root/data"
chmod 0555 "$WORK/root"

start_service "${AS_USER[@]}" env -i PATH=/usr/bin:/bin HOME=/nonexistent UNICACHE_DATA_DIR="$WORK/root/data" \
  "$BIN" --host 127.0.0.1 --port 0
port="$SERVICE_PORT"
echo "start-up line: ${SERVICE_LINE} (port ${port})"

status="$(curl -sS -o "$WORK/healthz.json" -w '%{http_code}' --max-time 10 "http://127.0.0.1:${port}/healthz")" \
  || fail "GET /healthz did not answer"
[[ "$status" == 200 ]] || fail "GET /healthz answered ${status}"
echo "GET /healthz: 200 $(head -c 200 "$WORK/healthz.json")"

timeout 30 env -i PATH=/usr/bin:/bin UNICACHE_HOST=127.0.0.1 UNICACHE_PORT="$port" "$BIN" healthcheck \
  || fail "unicache healthcheck exited non-zero against the running service"
# The image sets UNICACHE_HOST=0.0.0.0: the healthcheck must then connect to 127.0.0.1.
timeout 30 env -i PATH=/usr/bin:/bin UNICACHE_HOST=0.0.0.0 UNICACHE_PORT="$port" "$BIN" healthcheck \
  || fail "unicache healthcheck exited non-zero with UNICACHE_HOST=0.0.0.0"
echo "unicache healthcheck: 0 against the service (host 127.0.0.1 and 0.0.0.0)"

closed_port="$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1]); s.close()')"
if timeout 30 env -i PATH=/usr/bin:/bin UNICACHE_HOST=127.0.0.1 UNICACHE_PORT="$closed_port" "$BIN" healthcheck; then
  fail "unicache healthcheck exited 0 against port ${closed_port}, where nothing listens"
fi
echo "unicache healthcheck: non-zero against closed port ${closed_port}"

stop_service
echo "SIGTERM: exit 0"

# ---------------------------------------------------------------------------------------------- 5. HTTPS
# As the image runs with a mounted certificate and key (UNICACHE_TLS_CERT/KEY): HTTPS on the port, and the
# HEALTHCHECK, which reads the same UNICACHE_TLS_CERT, still healthy.
step "HTTPS with a mounted certificate and key"
command -v openssl >/dev/null || fail "openssl is needed to make the check's certificate"
mkdir -p "$WORK/tls"
openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -days 2 -subj /CN=localhost \
  -addext subjectAltName=DNS:localhost,IP:127.0.0.1 -keyout "$WORK/tls/key.pem" -out "$WORK/tls/cert.pem" 2>/dev/null
chown "$RUN_USER" "$WORK/tls/key.pem" 2>/dev/null || true
chmod 0400 "$WORK/tls/key.pem"
chmod 0444 "$WORK/tls/cert.pem"
TLS_ENV=(UNICACHE_TLS_CERT="$WORK/tls/cert.pem" UNICACHE_TLS_KEY="$WORK/tls/key.pem")
start_service "${AS_USER[@]}" env -i PATH=/usr/bin:/bin HOME=/nonexistent UNICACHE_DATA_DIR="$WORK/root/data" \
  "${TLS_ENV[@]}" "$BIN" --host 127.0.0.1 --port 0
port="$SERVICE_PORT"
[[ "$SERVICE_LINE" == "listening on https://"* ]] || fail "with TLS the start-up line is '${SERVICE_LINE}'"
echo "start-up line: ${SERVICE_LINE}"
status="$(curl -sS -o /dev/null -w '%{http_code}' --max-time 10 --cacert "$WORK/tls/cert.pem" \
  "https://localhost:${port}/healthz")" || fail "GET https://…/healthz did not answer"
[[ "$status" == 200 ]] || fail "GET https://…/healthz answered ${status}"
echo "GET https://localhost:${port}/healthz: 200 (verified against the certificate)"
timeout 30 env -i PATH=/usr/bin:/bin UNICACHE_HOST=0.0.0.0 UNICACHE_PORT="$port" "${TLS_ENV[@]}" "$BIN" healthcheck \
  || fail "unicache healthcheck exited non-zero against the HTTPS service"
if timeout 30 env -i PATH=/usr/bin:/bin UNICACHE_HOST=0.0.0.0 UNICACHE_PORT="$port" "$BIN" healthcheck 2>/dev/null; then
  fail "unicache healthcheck without UNICACHE_TLS_CERT exited 0 against the HTTPS port"
fi
echo "unicache healthcheck: 0 with UNICACHE_TLS_CERT (as the image's HEALTHCHECK), non-zero without it"
stop_service
echo "SIGTERM: exit 0"

printf '\ncheck-docker: OK\n'
