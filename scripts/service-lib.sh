# shellcheck shell=bash
# Sourced by scripts/conformance.sh and scripts/check-docker.sh: run the service in the background, wait for its
# `listening on http://HOST:PORT` line (https:// with TLS), stop it with SIGTERM and expect exit 0. The sourcing script defines
# fail() and sets STARTUP_TIMEOUT, STOP_TIMEOUT (seconds) and SERVICE_LOG; its EXIT trap kills $SERVICE_PID.

SERVICE_PID=""

# The end of the service log, on stderr.
show_service_log() { echo "--- service log (last 40 lines)" >&2; tail -n 40 "$SERVICE_LOG" >&2 || true; }

# Runs "$@" in the background (output to $SERVICE_LOG); sets SERVICE_PID, SERVICE_LINE and SERVICE_PORT.
start_service() {
  "$@" >"$SERVICE_LOG" 2>&1 &
  SERVICE_PID=$!
  SERVICE_LINE=""
  SERVICE_PORT=""
  local i
  for ((i = 0; i < STARTUP_TIMEOUT * 10; i++)); do
    SERVICE_LINE="$(grep -m1 -oE 'listening on https?://[^ "]*' "$SERVICE_LOG" || true)"
    if [[ -n "$SERVICE_LINE" ]]; then SERVICE_PORT="$(sed -E 's#.*:([0-9]+)/?$#\1#' <<<"$SERVICE_LINE")"; break; fi
    kill -0 "$SERVICE_PID" 2>/dev/null || { show_service_log; fail "the service exited before its start-up line"; }
    sleep 0.1
  done
  [[ "$SERVICE_PORT" =~ ^[0-9]+$ ]] \
    || { show_service_log; fail "no 'listening on http://HOST:PORT' line within ${STARTUP_TIMEOUT}s"; }
}

# SIGTERM; the service must exit, with 0, within STOP_TIMEOUT.
stop_service() {
  kill -TERM "$SERVICE_PID"
  local i
  for ((i = 0; i < STOP_TIMEOUT * 10; i++)); do
    kill -0 "$SERVICE_PID" 2>/dev/null || break
    sleep 0.1
  done
  kill -0 "$SERVICE_PID" 2>/dev/null && fail "the service still runs ${STOP_TIMEOUT}s after SIGTERM"
  local rc=0
  wait "$SERVICE_PID" || rc=$?
  SERVICE_PID=""
  ((rc == 0)) || { show_service_log; fail "the service exited ${rc} after SIGTERM (expected 0)"; }
}
