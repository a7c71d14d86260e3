#!/usr/bin/env bash
# Validates openapi.yaml (repository root) against the OpenAPI 3.1 specification.
# openapi-spec-validator comes from the project's .venv (scripts/python-env.sh). Exits non-zero on any error.
set -euo pipefail
cd "$(dirname "$0")/.."

# python3 and the pinned Python tools (scripts/requirements-check.txt) in the project's .venv/.
# shellcheck source=scripts/python-env.sh
source scripts/python-env.sh
SPEC="${1:-openapi.yaml}"

# The validator checks the document against the 3.1 meta-schema and resolves every $ref.
openapi-spec-validator --schema 3.1 "$SPEC"

# What the validator does not check: every error answer is a problem document, every operation has an id.
python3 - "$SPEC" <<'PY'
import sys
import yaml

spec = yaml.safe_load(open(sys.argv[1], encoding="utf-8"))
responses = spec["components"]["responses"]
errors = []
seen_ids = set()
for path, item in spec["paths"].items():
    for method, op in item.items():
        if method == "parameters":
            continue
        op_id = op.get("operationId")
        if not op_id or op_id in seen_ids:
            errors.append(f"{method.upper()} {path}: missing or duplicate operationId")
        seen_ids.add(op_id)
        for status, answer in op["responses"].items():
            if "$ref" in answer:
                answer = responses[answer["$ref"].rsplit("/", 1)[-1]]
            if int(status) >= 400 and method != "head":
                if list(answer.get("content", {})) != ["application/problem+json"]:
                    errors.append(f"{method.upper()} {path} {status}: error answers must be application/problem+json")
            if int(status) >= 500 and int(status) not in (502, 503, 504, 507):
                errors.append(f"{method.upper()} {path} {status}: only 502/503/504/507 are documented server errors")
if errors:
    print("\n".join(errors), file=sys.stderr)
    sys.exit(1)
print(f"check-openapi: {len(seen_ids)} operations, error answers are problem documents")
PY
