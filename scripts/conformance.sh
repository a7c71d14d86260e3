#!/usr/bin/env bash
# Conformance of the running service (CI: Debian 12 with Swift, apt and pip, as root):
#   a) schemathesis against openapi.yaml with every default check (not_a_server_error, status_code_conformance,
#      content_type_conformance, response_headers_conformance, response_schema_conformance,
#      negative_data_rejection, positive_data_acceptance, missing_required_header, unsupported_method,
#      ignored_auth, …), --auth jwt with a JWT holding the read and admin scopes, a bounded number of examples per operation; any finding fails;
#      and /openapi.yaml serves this repository's openapi.yaml byte for byte;
#   b) `promtool check metrics` on /metrics and on /stats as Prometheus scrapes it, plus the contract's metric names;
#   c) SIGTERM → exit 0, and neither the admin token nor the JWT appears in the log.
# Usage: scripts/conformance.sh   (UNICACHE_BIN=/path/to/unicache skips the build;
#        CONFORMANCE_EXAMPLES=N examples per operation, default 25; CONFORMANCE_SEED=N, default 20260101)
set -euo pipefail
cd "$(dirname "$0")/.."

# python3 and the pinned Python tools (scripts/requirements-check.txt) in the project's .venv/.
# shellcheck source=scripts/python-env.sh
source scripts/python-env.sh
SCHEMATHESIS_VERSION="$(schemathesis --version | grep -oE '[0-9]+(\.[0-9]+)+' | head -n 1)"
EXAMPLES="${CONFORMANCE_EXAMPLES:-25}"
SEED="${CONFORMANCE_SEED:-20260101}"
SCHEMATHESIS_TIMEOUT=600   # seconds; the run takes about 2–4 minutes with the defaults
STARTUP_TIMEOUT=60
STOP_TIMEOUT=20
PROMETHEUS_ACCEPT='application/openmetrics-text;version=1.0.0,text/plain;version=0.0.4;q=0.5,*/*;q=0.1'

step() { printf '\n== conformance: %s\n' "$*"; }
fail() { printf 'conformance: FAIL: %s\n' "$*" >&2; exit 1; }

WORK="$(mktemp -d)"
SERVICE_LOG="$WORK/service.log"
# shellcheck source=scripts/service-lib.sh
source scripts/service-lib.sh
cleanup() {
  if [[ -n "$SERVICE_PID" ]] && kill -0 "$SERVICE_PID" 2>/dev/null; then
    kill -KILL "$SERVICE_PID" 2>/dev/null || true
  fi
  rm -rf "$WORK"
}
trap cleanup EXIT

# ---------------------------------------------------------------------------------------------- tools
step "tools"
schemathesis --version
# promtool comes with Debian's prometheus package (scripts/ops-tools.sh installs it when missing).
# shellcheck source=scripts/ops-tools.sh
source scripts/ops-tools.sh
ensure_promtool
promtool --version | head -n 1

# ---------------------------------------------------------------------------------------------- binary
if [[ -n "${UNICACHE_BIN:-}" ]]; then
  step "binary from UNICACHE_BIN=${UNICACHE_BIN}"
  BIN="$UNICACHE_BIN"
else
  # The same flags as the Dockerfile and check-docker.sh, so the three share one build.
  step "swift build -c release --static-swift-stdlib --product unicache"
  swift build -c release --static-swift-stdlib --product unicache
  BIN="$(swift build -c release --static-swift-stdlib --show-bin-path)/unicache"
fi
[[ -x "$BIN" ]] || fail "no executable at $BIN"

# ---------------------------------------------------------------------------------------------- start
step "start the service"
TOKEN="$(python3 -c 'import secrets; print(secrets.token_urlsafe(24))')"
mkdir -p "$WORK/data"
# --auth jwt (CONTRACT §8), so that every operation the document secures is checked with and without a token:
# one JWT with both scopes reads every user's data and passes every admin endpoint.
python3 scripts/dev-token.py keygen "$WORK/keys" >/dev/null
JWT="$(python3 scripts/dev-token.py mint "$WORK/keys" --sub conformance --scope "unicache:read unicache:admin" --ttl 3600)"
# The tokens go through the environment, not the command line (which `ps` shows).
start_service env UNICACHE_ADMIN_TOKEN="$TOKEN" UNICACHE_AUTH=jwt UNICACHE_JWT_JWKS="$WORK/keys/jwks.json" UNICACHE_JWT_AUDIENCE=unicache \
  "$BIN" --host 127.0.0.1 --port 0 --data-dir "$WORK/data" --demo-latency 0ms
BASE="http://127.0.0.1:${SERVICE_PORT}"
echo "service at ${BASE}"

# ---------------------------------------------------------------------------------------------- a) schemathesis
step "GET /openapi.yaml is this repository's openapi.yaml"
curl -fsS --max-time 10 "${BASE}/openapi.yaml" -o "$WORK/served-openapi.yaml" || fail "GET /openapi.yaml failed"
cmp -s openapi.yaml "$WORK/served-openapi.yaml" || fail "the service serves another openapi.yaml than the repository's"
echo "identical"

step "schemathesis ${SCHEMATHESIS_VERSION}: every default check, ${EXAMPLES} examples per operation, seed ${SEED}"
st_rc=0
SPEC="$PWD/openapi.yaml"
# Run from the temporary folder: schemathesis keeps a replay cache (.schemathesis/) in its working directory.
(cd "$WORK" && timeout "$SCHEMATHESIS_TIMEOUT" schemathesis run "$SPEC" \
  --url "$BASE" \
  --header "Authorization: Bearer ${JWT}" \
  --max-examples "$EXAMPLES" \
  --seed "$SEED" \
  --workers 1 \
  --request-timeout 15 \
  --generation-database none \
  --no-color) \
  || st_rc=$?
if ((st_rc != 0)); then
  show_service_log
  ((st_rc == 124)) && fail "schemathesis did not finish within ${SCHEMATHESIS_TIMEOUT}s"
  fail "schemathesis reported findings (exit ${st_rc})"
fi
kill -0 "$SERVICE_PID" 2>/dev/null || { show_service_log; fail "the service died during the schemathesis run"; }

# ---------------------------------------------------------------------------------------------- b) metrics
step "promtool check metrics: /metrics"
headers="$WORK/metrics.headers"
curl -fsS --max-time 10 -D "$headers" "${BASE}/metrics" -o "$WORK/metrics.txt" || fail "GET /metrics failed"
grep -qi '^content-type: text/plain; *version=0\.0\.4' "$headers" \
  || fail "/metrics is not served as text/plain; version=0.0.4 ($(grep -i '^content-type' "$headers" | tr -d '\r'))"
promtool check metrics <"$WORK/metrics.txt" || fail "promtool found problems in /metrics"
for family in unicache_cache_requests_total unicache_cache_entries unicache_cache_bytes \
              unicache_upstream_fetch_seconds unicache_http_requests_total; do
  grep -q "^# TYPE ${family} " "$WORK/metrics.txt" || fail "/metrics lacks ${family}"
done
grep -q '^# TYPE unicache_upstream_fetch_seconds histogram' "$WORK/metrics.txt" \
  || fail "unicache_upstream_fetch_seconds is not a histogram"
grep -Eq '^unicache_cache_requests_total\{.*result="(hit|miss|coalesced|stale|refresh)"' "$WORK/metrics.txt" \
  || fail "unicache_cache_requests_total has no series with a result label after the schemathesis run"
echo "ok: $(grep -c -v '^#' "$WORK/metrics.txt") samples"

step "promtool check metrics: /stats with a Prometheus Accept header"
curl -fsS --max-time 10 -D "$headers" -H "Accept: ${PROMETHEUS_ACCEPT}" "${BASE}/stats" -o "$WORK/stats.txt" \
  || fail "GET /stats failed"
grep -qi '^content-type: text/plain' "$headers" \
  || fail "/stats did not answer the text exposition to a Prometheus Accept header"
promtool check metrics <"$WORK/stats.txt" || fail "promtool found problems in /stats"
echo "ok: $(grep -c -v '^#' "$WORK/stats.txt") samples"

# ---------------------------------------------------------------------------------------------- c) stop
step "SIGTERM"
stop_service
echo "exit 0"
if grep -qF -- "$TOKEN" "$WORK/service.log"; then fail "the admin token appears in the service log"; fi
if grep -qF -- "${JWT##*.}" "$WORK/service.log"; then fail "the bearer JWT appears in the service log"; fi

printf '\nconformance: OK\n'
