# shellcheck shell=bash
# Sourced by scripts/conformance.sh, scripts/check-alerts.sh and scripts/check-ops.sh: installs Prometheus's promtool
# (Debian's `prometheus` package ships it) and tmux from Debian's packages when missing. Needs root or sudo, as the
# Makefile's `deps` does. The sourcing script defines fail().

apt_install_quietly() {
  local sudo=""
  [[ "$(id -u)" == 0 ]] || sudo=sudo
  $sudo apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends "$@" >/dev/null
}

# promtool, from the prometheus package; its service is kept from starting during the install.
ensure_promtool() {
  command -v promtool >/dev/null 2>&1 && return 0
  local created_policy=""
  if [[ ! -e /usr/sbin/policy-rc.d && "$(id -u)" == 0 ]]; then
    printf '#!/bin/sh\nexit 101\n' >/usr/sbin/policy-rc.d && chmod 0755 /usr/sbin/policy-rc.d && created_policy=1
  fi
  apt_install_quietly prometheus || { [[ -n "$created_policy" ]] && rm -f /usr/sbin/policy-rc.d; fail "could not install promtool (package prometheus)"; }
  if [[ -n "$created_policy" ]]; then rm -f /usr/sbin/policy-rc.d; fi
  command -v promtool >/dev/null 2>&1 || fail "the prometheus package did not install promtool"
}

# tmux, for the terminal test of `unicache top`.
ensure_tmux() {
  command -v tmux >/dev/null 2>&1 && return 0
  apt_install_quietly tmux
  command -v tmux >/dev/null 2>&1 || fail "could not install tmux"
}
