#!/usr/bin/env bash
# Every command in the README and docs/*.md runs as written (`make docs-check`, part of `make check`).
#
# How: each document's fenced ```sh blocks are turned, in order, into one bash script (set -euo pipefail) that runs
# in a scratch folder against a service this script starts (UNICACHE_BIN, else the debug build) on 127.0.0.1 and a
# port the service picks (--port 0). Line by line (a line ending in `\` is joined to the next):
#
#   make run [ARGS="…"]       (re)starts the service with those flags: the tour's "terminal 1"
#   unicache [serve] FLAGS…   the same (a line that starts the service); other `unicache` commands (healthcheck,
#                             --version, --help) run the binary, healthcheck against the started port
#   docker run … unicache …   starts the binary with the image's environment (the Dockerfile's ENV lines), the line's
#                             -e variables (container paths of its -v mounts read as the host paths) and the
#                             arguments after the image name: the same flags and environment, without Docker
#   docker build, docker compose, sudo …, other make targets
#                             are not run (hadolint and scripts/check-docker.sh check the Dockerfile and compose files)
#   anything else             runs as written, with localhost:8080 and 127.0.0.1:8080 rewritten to the started port;
#                             a curl printing -w '%{http_code}' whose comment starts with a status must print it
#
# Every started service gets --host 127.0.0.1 --port 0 and its own --data-dir after the document's flags, and must
# print its `listening on` line; a command that fails (curl cannot connect, grep finds nothing, jq cannot parse)
# fails the check. Each document first gets a service started with --admin-token s3cret (what the docs' admin
# examples say to start). The scratch folder holds a link to scripts/, test keys from `scripts/dev-token.py keygen
# .dev-keys` and a file `admin-token`; STRAVA_TOKEN is set to a dummy value.
#
# A block whose first line is `# docs-check: skip (REASON)` is not run; use it sparingly (an identity provider's
# tenant, Docker itself). `# docs-check: docker (…)` marks a block checked the Docker way above.
#
# `bash scripts/check-docs.sh README.md docs/tls.md` checks only those documents; DOCS_CHECK_VERBOSE=1 prints what the
# commands printed. About 45 s for all documents with the debug build on a 2-core machine.
#
# First, every flag that `unicache --help` and `unicache serve --help` print must appear in docs/configuration.md.
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT="$PWD"
STARTUP_TIMEOUT="${STARTUP_TIMEOUT:-30}"
STOP_TIMEOUT="${STOP_TIMEOUT:-15}"
DOCS=("README.md" docs/*.md)
[[ $# -gt 0 ]] && DOCS=("$@")   # or only the documents named

fail() { echo "check-docs: FAIL: $*" >&2; exit 1; }

# What the commands need, on a fresh Debian 12 machine (`make docs-check` installs them through `make deps` first).
missing=""
for tool in curl jq python3 openssl; do command -v "$tool" >/dev/null 2>&1 || missing="$missing $tool"; done
if [[ -n "$missing" ]]; then
  sudo=""; [[ "$(id -u)" == 0 ]] || sudo=sudo
  echo "check-docs: installing$missing" >&2
  $sudo apt-get update -qq && DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq $missing >/dev/null
fi

if [[ -z "${UNICACHE_BIN:-}" ]]; then
  swift build --product unicache >/dev/null
  UNICACHE_BIN="$(swift build --show-bin-path)/unicache"
fi
[[ -x "$UNICACHE_BIN" ]] || fail "no binary at $UNICACHE_BIN"
UNICACHE_BIN="$(cd "$(dirname "$UNICACHE_BIN")" && pwd)/$(basename "$UNICACHE_BIN")"

# --- the flags of --help are documented
for help in "" serve healthcheck; do
  # shellcheck disable=SC2086
  for flag in $("$UNICACHE_BIN" $help --help 2>&1 | grep -oE -- '--[a-z][a-z0-9-]+' | sort -u); do
    [[ "$flag" == --help || "$flag" == --version ]] && continue
    grep -qF -- "\`$flag" docs/configuration.md || fail "docs/configuration.md does not document $flag (unicache $help --help)"
  done
done
echo "check-docs: every flag of --help is in docs/configuration.md"

SCRATCH="$(mktemp -d)"
trap 'rm -rf "$SCRATCH"' EXIT

# The harness the generated scripts source: starting and stopping the service, docker run without Docker.
cat >"$SCRATCH/harness.sh" <<'HARNESS'
SERVICE_PID=""
PORT=""
SERVE_COUNT=0
__stop() {
  [[ -n "$SERVICE_PID" ]] || return 0
  kill -TERM "$SERVICE_PID" 2>/dev/null || true
  local i
  for ((i = 0; i < STOP_TIMEOUT * 10; i++)); do kill -0 "$SERVICE_PID" 2>/dev/null || break; sleep 0.1; done
  if kill -0 "$SERVICE_PID" 2>/dev/null; then kill -KILL "$SERVICE_PID"; echo "service did not stop on SIGTERM" >&2; return 1; fi
  wait "$SERVICE_PID" || { echo "service exited non-zero on SIGTERM" >&2; tail -20 "$LOG" >&2; return 1; }
  SERVICE_PID=""
}
trap '__stop || true' EXIT
# __serve [serve] FLAGS…: (re)start the service with FLAGS, then our host, port and data folder (and the
# variables of SERVE_ENV, which __docker_run sets, in its environment).
SERVE_ENV=()
__serve() {
  __stop
  [[ "${1:-}" == serve ]] && shift
  SERVE_COUNT=$((SERVE_COUNT + 1))
  LOG="$PWD/service-$SERVE_COUNT.log"
  echo "+ started: ${SERVE_ENV[*]} unicache serve $*" >&2
  env "${SERVE_ENV[@]}" "$UNICACHE_BIN" serve "$@" --host 127.0.0.1 --port 0 --data-dir "$PWD/data-$SERVE_COUNT" \
    >"$LOG" 2>&1 &
  SERVICE_PID=$!
  SERVE_ENV=()
  local i line=""
  for ((i = 0; i < STARTUP_TIMEOUT * 10; i++)); do
    line="$(grep -m1 -oE 'listening on https?://[^ "]*' "$LOG" || true)"
    [[ -n "$line" ]] && break
    if ! kill -0 "$SERVICE_PID" 2>/dev/null; then
      tail -20 "$LOG" >&2; echo "the service exited at start-up: unicache $*" >&2; SERVICE_PID=""; return 1
    fi
    sleep 0.1
  done
  [[ -n "$line" ]] || { tail -20 "$LOG" >&2; echo "no listening line: unicache $*" >&2; return 1; }
  PORT="$(sed -E 's#.*:([0-9]+)/?$#\1#' <<<"$line")"
}
# __run <<LINE: one command line of a block (from stdin), with localhost:8080 and 127.0.0.1:8080 the started port.
__run() {
  local line
  line="$(cat)"
  line="${line//localhost:8080/localhost:$PORT}"
  line="${line//127.0.0.1:8080/127.0.0.1:$PORT}"
  # A curl that prints its status (-w '%{http_code}') with a comment starting with the status it shows: checked.
  if [[ "$line" == *'%{http_code}'* && "$line" =~ \#[[:space:]]*([1-5][0-9][0-9])([^0-9]|$) ]]; then
    local want="${BASH_REMATCH[1]}" got
    got="$(eval "$line")"
    echo "$got"
    [[ "$(tail -n1 <<<"$got")" == "$want" ]] || { echo "expected status $want, got $got: $line" >&2; return 1; }
  else
    eval "$line"
  fi
}
# unicache COMMAND…: the binary; healthcheck asks the started port.
unicache() {
  if [[ "${1:-}" == healthcheck ]]; then shift; "$UNICACHE_BIN" healthcheck --port "$PORT" "$@"; else "$UNICACHE_BIN" "$@"; fi
}
# __docker_run OPTIONS… IMAGE ARGS…: starts the binary with ARGS, the image's environment and the -e variables,
# their container paths of -v mounts read as the host's.
__docker_run() {
  local -a envs=() mounts=() image_env=()
  while [[ $# -gt 0 && "$1" == -* ]]; do
    case "$1" in
      -e|--env) envs+=("$2"); shift 2 ;;
      -v|--volume) mounts+=("$2"); shift 2 ;;
      -p|--publish|--name|-u|--user|--cpus|--memory) shift 2 ;;
      *) shift ;;
    esac
  done
  shift   # the image
  mapfile -t image_env < <(sed -n '/^ENV /,/[^\\]$/p' "$ROOT/Dockerfile" | sed -E 's/^ENV //; s/\\$//' | tr -s ' ' '\n' | grep '=')
  local kv m src dst
  SERVE_ENV=()
  for kv in "${image_env[@]}" "${envs[@]}"; do
    for m in "${mounts[@]}"; do
      src="${m%%:*}"; dst="${m#*:}"; dst="${dst%%:*}"
      [[ "$src" == /* || "$src" == .* ]] || continue   # a named volume: --data-dir replaces it
      kv="${kv//$dst/$src}"
    done
    SERVE_ENV+=("$kv")
  done
  __serve "$@"
}
HARNESS

# Turns one document's ```sh blocks into a script (the rules at the top).
generate() {
  awk '
    function emit(line,   rest) {
      if (line ~ /^make run( |$)/) {
        rest = line; sub(/^make run ?/, "", rest)
        print "ARGS=\"\""
        if (rest != "") print rest
        print "eval \"__serve $ARGS\""
      } else if (line ~ /^unicache( serve)?( +--|$)/ && line !~ /^unicache --(version|help)/) {
        rest = line; sub(/^unicache/, "", rest); print "__serve" rest
      } else if (line ~ /^docker run /) {
        rest = line; sub(/^docker run/, "", rest); print "__docker_run" rest
      } else if (line ~ /^(docker |sudo |make )/) {
        gsub(/\n/, " ", line); print "# not run here: " line
      } else {
        print "__run <<'"'"'__DOCS_LINE__'"'"'"; print line; print "__DOCS_LINE__"
      }
    }
    /^```sh[ \t]*$/ { inblock = 1; first = 1; skip = 0; pending = ""; print "# --- " FILENAME " line " NR; next }
    /^```/ && inblock { inblock = 0; next }
    inblock {
      if (first && $0 ~ /^# docs-check: skip/) skip = 1
      first = 0
      if (skip) next
      line = (pending != "") ? pending "\n" $0 : $0
      if (line ~ /\\$/) { pending = line; next }
      pending = ""
      emit(line)
    }
  ' "$1"
}

total_start=$SECONDS
for doc in "${DOCS[@]}"; do
  grep -q '^```sh' "$doc" || continue
  work="$SCRATCH/$(basename "$doc" .md)"
  mkdir -p "$work"
  ln -s "$ROOT/scripts" "$work/scripts"
  (cd "$work" && python3 scripts/dev-token.py keygen .dev-keys >/dev/null && (umask 077; echo s3cret >admin-token))
  {
    echo "set -euo pipefail"
    echo "source '$SCRATCH/harness.sh'"
    echo "__serve --admin-token s3cret"
    generate "$doc"
  } >"$work/run.sh"
  start=$SECONDS
  echo "check-docs: $doc" >&2
  if ! (cd "$work" && UNICACHE_BIN="$UNICACHE_BIN" STARTUP_TIMEOUT="$STARTUP_TIMEOUT" STOP_TIMEOUT="$STOP_TIMEOUT" \
        ROOT="$ROOT" STRAVA_TOKEN=dummy-token bash -x run.sh >"$work/out.txt" 2>&1); then
    echo "--- $doc: the generated script ($work/run.sh) and the end of its run:" >&2
    tail -40 "$work/out.txt" >&2
    trap - EXIT
    fail "a command of $doc failed (scratch folder kept: $SCRATCH)"
  fi
  [[ -n "${DOCS_CHECK_VERBOSE:-}" ]] && grep -v '^+' "$work/out.txt" >&2
  echo "check-docs: $doc ok ($((SECONDS - start)) s)" >&2
done
echo "check-docs: every command ran ($((SECONDS - total_start)) s)"
