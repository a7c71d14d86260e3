#!/usr/bin/env bash
# The alert rules (deploy/alerts.yml) parse and behave as their tests say: `promtool check rules` and
# `promtool test rules deploy/alerts.test.yml` (a firing and a quiet series for every rule), and every rule has a
# test, a summary, a description and a runbook section in docs/operations.md. Installs promtool (Debian's prometheus
# package) when missing. No build needed.
set -euo pipefail
cd "$(dirname "$0")/.."
fail() { printf 'check-alerts: FAIL: %s\n' "$*" >&2; exit 1; }
# python3 and PyYAML from the project's .venv/ (scripts/requirements-check.txt).
# shellcheck source=scripts/python-env.sh
source scripts/python-env.sh
# shellcheck source=scripts/ops-tools.sh
source scripts/ops-tools.sh
ensure_promtool

promtool check rules deploy/alerts.yml || fail "deploy/alerts.yml does not parse"
promtool test rules deploy/alerts.test.yml || fail "an alert rule's test failed"
# The Prometheus configurations of compose.yaml and compose.fleet.yaml load them (alerts.yml beside each).
for config in deploy/prometheus.yml deploy/prometheus.fleet.yml; do
  promtool check config "$config" || fail "$config is not a valid Prometheus configuration"
  grep -qE '^  - alerts\.yml$' "$config" || fail "$config does not load alerts.yml"
done

# Every rule: annotations, a test of its own, a runbook section (the anchor its runbook_url names).
python3 - <<'PY' || fail "a rule lacks an annotation, a test or its runbook (above)"
import re, sys, yaml
rules = [r for g in yaml.safe_load(open("deploy/alerts.yml"))["groups"] for r in g["rules"] if "alert" in r]
tests = yaml.safe_load(open("deploy/alerts.test.yml"))["tests"]
tested = {t["alertname"] for test in tests for t in test.get("alert_rule_test", []) if t.get("exp_alerts")}
doc = open("docs/operations.md", encoding="utf-8").read()
# GitHub's anchors: lower case, punctuation dropped, spaces as dashes.
anchors = {re.sub(r"[^a-z0-9 _-]", "", h.strip().lower()).replace(" ", "-") for h in re.findall(r"^#+ (.*)$", doc, re.M)}
errors = []
for rule in rules:
    name, notes = rule["alert"], rule.get("annotations", {})
    for key in ("summary", "description", "runbook_url"):
        if not notes.get(key):
            errors.append(f"{name}: no {key}")
    if name not in tested:
        errors.append(f"{name}: no test in deploy/alerts.test.yml where it fires")
    anchor = notes.get("runbook_url", "").partition("#")[2]
    if anchor not in anchors:
        errors.append(f"{name}: docs/operations.md has no section #{anchor}")
for e in errors:
    print(e, file=sys.stderr)
sys.exit(1 if errors else 0)
PY
# The compose files mount the rules beside each Prometheus configuration; the fleet's Grafana gets its datasource
# and the dashboard from deploy/grafana.
python3 - <<'PY' || fail "a compose file does not mount the rules or the dashboard (above)"
import sys, yaml
def mounts(path, service):
    return yaml.safe_load(open(path))["services"][service].get("volumes", [])
for path in ("compose.yaml", "compose.fleet.yaml"):
    if not any(str(v).startswith("./deploy/alerts.yml:/etc/prometheus/alerts.yml") for v in mounts(path, "prometheus")):
        sys.exit(f"{path}: prometheus does not mount ./deploy/alerts.yml at /etc/prometheus/alerts.yml")
grafana = mounts("compose.fleet.yaml", "grafana")
for want in ("./deploy/grafana/provisioning:/etc/grafana/provisioning",
             "./deploy/grafana/unicache.json:/var/lib/grafana/dashboards/unicache.json"):
    if not any(str(v).startswith(want) for v in grafana):
        sys.exit(f"compose.fleet.yaml: grafana does not mount {want}")
PY

echo "check-alerts: OK ($(grep -c '^      - alert:' deploy/alerts.yml) rules)"
