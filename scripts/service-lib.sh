# shellcheck shell=bash
# Sourced by scripts/conformance.sh, scripts/check-docker.sh and scripts/fleet-lib.sh: run the service in the background,
# wait for its `listening on http://HOST:PORT` line (https:// with TLS), stop it with SIGTERM and expect exit 0; pick a
# free loopback port for what cannot take port 0; wait for an HTTP answer. The sourcing script defines
# fail() and sets STARTUP_TIMEOUT, STOP_TIMEOUT (seconds) and SERVICE_LOG; its EXIT trap kills $SERVICE_PID.

SERVICE_PID=""

# The end of the service log, on stderr.
show_service_log() { echo "--- service log (last 40 lines)" >&2; tail -n 40 "$SERVICE_LOG" >&2 || true; }

# Runs "$@" in the background (output to $SERVICE_LOG); sets SERVICE_PID, SERVICE_LINE and SERVICE_PORT.
start_service() {
  # Emptied here, not only by the background job's redirection: the loop below could otherwise read the previous
  # run's start-up line before the new process has truncated the file.
  : >"$SERVICE_LOG"
  "$@" >>"$SERVICE_LOG" 2>&1 &
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

# A TCP port nothing on this machine listens on, for a program that cannot be given port 0 (redis-server, haproxy):
# below the kernel's ephemeral range, where outgoing connections take theirs. Another program may still take it
# before ours binds: the caller checks that its program is the one listening, and tries another port if not.
free_port() {
  local low port i
  read -r low _ </proc/sys/net/ipv4/ip_local_port_range
  ((low > 11024)) || low=61000
  for ((i = 0; i < 200; i++)); do
    port=$((10000 + RANDOM % (low - 10000)))
    if [[ -z "$(ss -Htln "sport = :${port}")" ]]; then
      echo "$port"
      return 0
    fi
  done
  fail "no free TCP port found below ${low}"
}

# wait_for_http URL PATTERN SECONDS: polls URL until it answers 200 with a body matching the extended regular
# expression PATTERN; returns 1 if it has not within SECONDS.
wait_for_http() {
  local url=$1 pattern=$2 seconds=$3 body deadline
  deadline=$((SECONDS + seconds))
  while ((SECONDS < deadline)); do
    if body="$(curl -sSf --max-time 2 "$url" 2>/dev/null)" && grep -Eq "$pattern" <<<"$body"; then
      return 0
    fi
    sleep 0.05
  done
  return 1
}
