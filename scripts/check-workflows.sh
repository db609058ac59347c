#!/usr/bin/env bash
# Checks the hosted CI workflows, which cannot run here (scripts/check_workflows.py says what),
# with PyYAML from the test servers' virtual environment.
set -euo pipefail
cd "$(dirname "$0")/.."
. scripts/install.sh
test_python_env
"$python" scripts/check_workflows.py
