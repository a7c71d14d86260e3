# shellcheck shell=bash
# Sourced by the checks that need Python tools (check-openapi.sh, conformance.sh, check-docker.sh): makes sure
# python3 and its venv module are installed (apt-get, as on a fresh Debian 12 machine), creates the project-local
# virtual environment .venv/ (git-ignored), installs scripts/requirements-check.txt into it when that file changed,
# and puts .venv/bin first on PATH. Debian 12's system pip refuses global installs (PEP 668), hence the venv.
_python_env_root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
_python_env_venv="${UNICACHE_VENV:-$_python_env_root/.venv}"
_python_env_requirements="$_python_env_root/scripts/requirements-check.txt"

_python_env_apt() {
  local sudo=""
  [[ "$(id -u)" == 0 ]] || sudo=sudo
  echo "python-env: installing $*" >&2
  $sudo apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends "$@" >/dev/null
}

command -v python3 >/dev/null 2>&1 || _python_env_apt python3 python3-venv

_python_env_stamp="$_python_env_venv/.requirements.sha256"
_python_env_want="$(sha256sum "$_python_env_requirements" | cut -d' ' -f1)"
if [[ ! -x "$_python_env_venv/bin/python3" || "$(cat "$_python_env_stamp" 2>/dev/null)" != "$_python_env_want" ]]; then
  echo "python-env: preparing $_python_env_venv" >&2
  # Debian's python3 creates a venv only with python3-venv (ensurepip) installed.
  python3 -m venv "$_python_env_venv" >/dev/null 2>&1 \
    || { rm -rf "$_python_env_venv"; _python_env_apt python3-venv && python3 -m venv "$_python_env_venv"; }
  "$_python_env_venv/bin/python3" -m pip install --quiet --disable-pip-version-check -r "$_python_env_requirements"
  echo "$_python_env_want" >"$_python_env_stamp"
fi
export PATH="$_python_env_venv/bin:$PATH"
unset _python_env_root _python_env_venv _python_env_requirements _python_env_stamp _python_env_want
