#!/usr/bin/env bash
# The operator's kit against a running service (CI: `make ops-check`, part of `make check`):
#   a) deploy/grafana/unicache.json is a valid dashboard (schema version, unique panel ids, every query on the
#      `datasource` variable) whose every PromQL expression parses (`promtool check rules` on them as recording
#      rules) and names only metrics the service exports: compared with a scrape of /metrics after a short workload,
#      with a shared tier (an unreachable one) and a budget configured, so that every family shows;
#   b) the alert rules (deploy/alerts.yml) name only exported metrics too (and Prometheus's own `up`);
#   c) `unicache top` in a real terminal (a detached tmux session of a fixed size) shows figures that move under a
#      small workload, and `unicache top --once` prints the same view as plain text.
# Usage: scripts/check-ops.sh   (UNICACHE_BIN=/path/to/unicache skips the build). Installs promtool and tmux from
# Debian's packages when missing (scripts/ops-tools.sh).
set -euo pipefail
cd "$(dirname "$0")/.."

STARTUP_TIMEOUT=60
STOP_TIMEOUT=20
step() { printf '\n== ops-check: %s\n' "$*"; }
fail() { printf 'ops-check: FAIL: %s\n' "$*" >&2; exit 1; }

# shellcheck source=scripts/python-env.sh
source scripts/python-env.sh
# shellcheck source=scripts/ops-tools.sh
source scripts/ops-tools.sh
ensure_promtool
ensure_tmux

WORK="$(mktemp -d)"
SERVICE_LOG="$WORK/service.log"
TMUX_SESSION="unicache-top-check-$$"
# shellcheck source=scripts/service-lib.sh
source scripts/service-lib.sh
cleanup() {
  tmux kill-session -t "$TMUX_SESSION" 2>/dev/null || true
  if [[ -n "$SERVICE_PID" ]] && kill -0 "$SERVICE_PID" 2>/dev/null; then kill -KILL "$SERVICE_PID" 2>/dev/null || true; fi
  rm -rf "$WORK"
}
trap cleanup EXIT

if [[ -n "${UNICACHE_BIN:-}" ]]; then
  BIN="$UNICACHE_BIN"
else
  step "swift build"
  swift build --product unicache
  BIN="$(swift build --show-bin-path)/unicache"
fi
[[ -x "$BIN" ]] || fail "no executable at $BIN"

# ---------------------------------------------------------------------------------------------- a) the dashboard
step "the dashboard is a valid Grafana dashboard; its expressions as recording rules"
python3 - deploy/grafana/unicache.json "$WORK/dashboard-rules.yml" "$WORK/dashboard-metrics.txt" <<'PY' \
  || fail "deploy/grafana/unicache.json is not a valid dashboard (above)"
import json, re, sys, yaml
path, rules_out, names_out = sys.argv[1:4]
d = json.load(open(path, encoding="utf-8"))
errors = []
if not isinstance(d.get("schemaVersion"), int) or d["schemaVersion"] < 36:
    errors.append(f"schemaVersion {d.get('schemaVersion')!r}: want an integer >= 36 (Grafana 9+)")
for key in ("uid", "title", "panels", "templating"):
    if not d.get(key):
        errors.append(f"no {key}")
variables = {v.get("name"): v for v in d.get("templating", {}).get("list", [])}
ds = variables.get("datasource")
if not ds or ds.get("type") != "datasource" or ds.get("query") != "prometheus":
    errors.append("no `datasource` variable of type datasource for prometheus")
WANT = {"type": "prometheus", "uid": "${datasource}"}
for name, v in variables.items():
    if v.get("type") == "query" and v.get("datasource") != WANT:
        errors.append(f"variable {name}: datasource {v.get('datasource')!r}, want {WANT}")
panels = []
def walk(items):
    for p in items:
        panels.append(p)
        walk(p.get("panels", []))
walk(d.get("panels", []))
ids = [p.get("id") for p in panels]
dupes = {i for i in ids if ids.count(i) > 1}
if None in ids or dupes:
    errors.append(f"panel ids missing or repeated: {sorted(x for x in dupes if x is not None)}")
rules = []
for p in panels:
    where = f"panel {p.get('id')} ({p.get('title')!r})"
    g = p.get("gridPos", {})
    if not all(isinstance(g.get(k), int) for k in ("h", "w", "x", "y")) or g.get("x", 0) + g.get("w", 0) > 24:
        errors.append(f"{where}: gridPos {g}")
    if p.get("type") == "row":
        continue
    if p.get("datasource") != WANT:
        errors.append(f"{where}: datasource {p.get('datasource')!r}, want the variable {WANT}")
    targets = p.get("targets") or []
    if not targets:
        errors.append(f"{where}: no queries")
    refs = [t.get("refId") for t in targets]
    if len(set(refs)) != len(refs) or None in refs:
        errors.append(f"{where}: refIds missing or repeated")
    for t in targets:
        if t.get("datasource", WANT) != WANT:
            errors.append(f"{where} {t.get('refId')}: datasource {t.get('datasource')!r}")
        expr = t.get("expr", "")
        if not expr.strip():
            errors.append(f"{where} {t.get('refId')}: no expression")
            continue
        # Grafana's variables as Prometheus would see them once substituted.
        concrete = (expr.replace("$__rate_interval", "5m").replace("$__interval", "1m")
                    .replace("$job", "unicache").replace("$instance", ".*"))
        if "$" in concrete:
            errors.append(f"{where} {t.get('refId')}: an unknown variable in {expr!r}")
        rules.append({"record": f"dashboard:panel_{p['id']}:{t['refId']}", "expr": concrete})
for e in errors:
    print(e, file=sys.stderr)
yaml.safe_dump({"groups": [{"name": "dashboard", "rules": rules}]}, open(rules_out, "w"), sort_keys=False)
print(f"{len(panels)} panels, {len(rules)} queries")
sys.exit(1 if errors else 0)
PY
promtool check rules "$WORK/dashboard-rules.yml" || fail "a dashboard expression does not parse (above)"

# ---------------------------------------------------------------------------------------------- the service
step "start the service (an unreachable shared tier, a budget) and a short workload"
closed_port="$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1]); s.close()')"
mkdir -p "$WORK/data"
start_service "$BIN" --host 127.0.0.1 --port 0 --data-dir "$WORK/data" --demo-latency 5ms \
  --redis "redis://127.0.0.1:${closed_port}" --upstream-rate activities=1000/1m
BASE="http://127.0.0.1:${SERVICE_PORT}"
echo "service at ${BASE}"
workload() {
  local round
  for round in 1 2 3; do
    for user in alice bob; do
      curl -fsS --max-time 10 -o /dev/null "${BASE}/v1/users/${user}/subscription"
      curl -fsS --max-time 10 -o /dev/null "${BASE}/v1/users/${user}/activities?days=7"
      curl -fsS --max-time 10 -o /dev/null "${BASE}/v1/users/${user}/profile"
    done
  done
  curl -sS --max-time 10 -o /dev/null "${BASE}/v1/users/x/nothing" || true
}
workload || fail "the workload's requests failed"
curl -fsS --max-time 10 "${BASE}/metrics" -o "$WORK/metrics.txt" || fail "GET /metrics failed"
grep -v '^#' "$WORK/metrics.txt" | sed -E 's/[{ ].*//' | sort -u >"$WORK/exported.txt"
echo "$(wc -l <"$WORK/exported.txt") metric names exported:" $(cat "$WORK/exported.txt")

# ---------------------------------------------------------------------------------------------- a), b) names
step "the dashboard and the alert rules name only exported metrics"
python3 - "$WORK/exported.txt" deploy/grafana/unicache.json deploy/alerts.yml <<'PY' \
  || fail "an expression names a metric the service does not export (above)"
import json, re, sys, yaml
exported = set(open(sys.argv[1]).read().split())
dashboard = json.load(open(sys.argv[2]))
alerts = yaml.safe_load(open(sys.argv[3]))
exprs = []
def walk(items):
    for p in items:
        for t in p.get("targets", []):
            exprs.append(("dashboard panel %s" % p["id"], t.get("expr", "")))
        walk(p.get("panels", []))
walk(dashboard["panels"])
for v in dashboard["templating"]["list"]:
    if v.get("type") == "query":
        # label_values(SELECTOR, LABEL): the selector names a metric, the label does not.
        exprs.append((f"dashboard variable {v['name']}", re.sub(r"^label_values\((.*),\s*\w+\)$", r"\1", v["definition"])))
for g in alerts["groups"]:
    for r in g["rules"]:
        exprs.append((f"alert {r.get('alert') or r.get('record')}", r["expr"]))
# Metric names: identifiers outside strings and label matchers that are not PromQL's own words.
WORDS = {"sum", "min", "max", "avg", "count", "by", "without", "rate", "increase", "irate", "histogram_quantile",
         "and", "or", "unless", "on", "ignoring", "group_left", "group_right", "offset", "label_values", "scalar",
         "bool", "min_over_time", "max_over_time", "avg_over_time", "abs", "clamp_min", "clamp_max", "vector", "topk",
         "bottomk", "humanize", "time", "le"}
errors, used = [], set()
for where, expr in exprs:
    text = re.sub(r'"(?:[^"\\]|\\.)*"', '""', expr)          # strings
    text = re.sub(r"\{[^}]*\}", "{}", text)                     # label matchers
    text = re.sub(r"\b(by|without|on|ignoring|group_left|group_right)\s*\([^)]*\)", r"\1()", text)  # label lists
    text = re.sub(r"\[[^\]]*\]", "[]", text)                    # ranges
    text = re.sub(r"\b\d+(\.\d+)?([smhdwy]|ms)?\b", "0", text)  # numbers and durations
    for name in re.findall(r"[A-Za-z_:][A-Za-z0-9_:]*", text):
        if name in WORDS:
            continue
        used.add(name)
        if name not in exported and not (name == "up" and where.startswith("alert")):
            errors.append(f"{where}: {name} is not exported by the service")
for e in errors:
    print(e, file=sys.stderr)
print(f"{len(exprs)} expressions, {len(used)} metric names, all exported" if not errors else "")
sys.exit(1 if errors else 0)
PY

# ---------------------------------------------------------------------------------------------- c) unicache top
step "unicache top in an 80x24 terminal (tmux): the whole frame shows, its figures move under a workload"
export TERM="${TERM:-xterm}"
[[ "$TERM" == dumb ]] && export TERM=xterm
tmux -f /dev/null new-session -d -s "$TMUX_SESSION" -x 80 -y 24 "$BIN top --url $BASE"
pane() { tmux capture-pane -p -t "$TMUX_SESSION" 2>/dev/null || true; }
# The read-through row: label, rate per second, total.
read_through() { pane | awk '$1 == "read-through" { print $2, $3; exit }'; }
first=""
deadline=$((SECONDS + 20))
while ((SECONDS < deadline)); do
  row="$(read_through)"
  if [[ "$row" =~ ^[-0-9.]+\ ([0-9]+)$ ]]; then first="${BASH_REMATCH[1]}"; break; fi
  sleep 0.1
done
[[ -n "$first" ]] || { pane >&2; fail "no frame of unicache top in the pane within 20s"; }
echo "first frame: ${first} read-through requests"
workload || fail "the second workload's requests failed"
want=$((first + 18))
moved="" rated=""
deadline=$((SECONDS + 20))
while ((SECONDS < deadline)); do
  row="$(read_through)"
  if [[ "$row" =~ ^([0-9.]+)\ ([0-9]+)$ ]]; then
    [[ "${BASH_REMATCH[1]}" != 0.0 ]] && rated="${BASH_REMATCH[1]}"
    ((BASH_REMATCH[2] >= want)) && moved="${BASH_REMATCH[2]}"
  fi
  [[ -n "$moved" && -n "$rated" ]] && break
  sleep 0.1
done
pane >"$WORK/pane.txt"
[[ -n "$moved" ]] || { cat "$WORK/pane.txt" >&2; fail "the read-through total did not reach ${want} within 20s"; }
[[ -n "$rated" ]] || { cat "$WORK/pane.txt" >&2; fail "no frame showed a read-through rate above 0"; }
echo "moved: ${first} -> ${moved} read-through requests, a frame at ${rated}/s"
# The first line and the last both on screen: the frame fits 80x24 without scrolling.
for row in "unicache top  " "hit rate" "latency p50 / p99" "  memory/disk/shared" "activities" "shared   unreachable" \
  "auth     mode protected" "disk     "; do
  grep -qF -- "$row" "$WORK/pane.txt" || { cat "$WORK/pane.txt" >&2; fail "the pane lacks '${row}'"; }
done
tmux kill-session -t "$TMUX_SESSION"

step "unicache top --once: one plain frame"
"$BIN" top --once --url "$BASE" >"$WORK/once.txt" || fail "unicache top --once failed"
if grep -q $'\e' "$WORK/once.txt"; then fail "unicache top --once wrote terminal escapes"; fi
for row in "read-through" "  memory/disk/shared" "fetches " "budget left" "memory   " "disk     "; do
  grep -qF -- "$row" "$WORK/once.txt" || { cat "$WORK/once.txt" >&2; fail "unicache top --once lacks '${row}'"; }
done
# The shared tier's Redis (a port nothing listens on) and its failovers (CONTRACT §10.6).
grep -Eq "failovers 0$" "$WORK/once.txt" && grep -Eq "endpoint 127\.0\.0\.1:${closed_port}$" "$WORK/once.txt" \
  || { cat "$WORK/once.txt" >&2; fail "unicache top --once does not name the shared tier's endpoint and failovers"; }
# The activities domain has a budget (1000/1m): its budget column is a number; the others' `-` (none).
grep -Eq '^activities +(closed|open|half-open) +[0-9]+ ' "$WORK/once.txt" \
  || { cat "$WORK/once.txt" >&2; fail "the activities row does not show its budget left"; }
if "$BIN" top --once --url "http://127.0.0.1:${closed_port}" >/dev/null 2>"$WORK/top-error.txt"; then
  fail "unicache top --once succeeded against a closed port"
fi
grep -q "unicache top" "$WORK/top-error.txt" || fail "unicache top --once against a closed port did not say why"

step "SIGTERM"
stop_service
printf '\nops-check: OK\n'
