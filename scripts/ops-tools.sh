# shellcheck shell=bash
# Sourced by scripts/conformance.sh, scripts/check-alerts.sh, scripts/check-ops.sh and scripts/bench-shared.sh: installs
# Prometheus's promtool (Debian's `prometheus` package ships it), tmux and nginx from Debian's packages when missing.
# Needs root or sudo, as the Makefile's `deps` does. The sourcing script defines fail().

apt_install_quietly() {
  local sudo=""
  [[ "$(id -u)" == 0 ]] || sudo=sudo
  $sudo apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends "$@" >/dev/null
}

# apt_install_without_starting PACKAGE...: installs them with their services kept from starting (a policy-rc.d that
# refuses every start, while the install runs, when we are root and the machine has none).
apt_install_without_starting() {
  local created_policy="" status=0
  if [[ ! -e /usr/sbin/policy-rc.d && "$(id -u)" == 0 ]]; then
    printf '#!/bin/sh\nexit 101\n' >/usr/sbin/policy-rc.d && chmod 0755 /usr/sbin/policy-rc.d && created_policy=1
  fi
  apt_install_quietly "$@" || status=$?
  if [[ -n "$created_policy" ]]; then rm -f /usr/sbin/policy-rc.d; fi
  return "$status"
}

# promtool, from the prometheus package.
ensure_promtool() {
  command -v promtool >/dev/null 2>&1 && return 0
  apt_install_without_starting prometheus || fail "could not install promtool (package prometheus)"
  command -v promtool >/dev/null 2>&1 || fail "the prometheus package did not install promtool"
}

# nginx, from the nginx-light package (its proxy_cache is scripts/bench-shared.sh's baseline for a disk hit); its
# binary is in /usr/sbin, which a user's PATH may lack.
ensure_nginx() {
  [[ -x /usr/sbin/nginx ]] && return 0
  apt_install_without_starting nginx-light || fail "could not install nginx (package nginx-light)"
  [[ -x /usr/sbin/nginx ]] || fail "the nginx-light package did not install /usr/sbin/nginx"
}

# tmux, for the terminal test of `unicache top`.
ensure_tmux() {
  command -v tmux >/dev/null 2>&1 && return 0
  apt_install_quietly tmux
  command -v tmux >/dev/null 2>&1 || fail "could not install tmux"
}
