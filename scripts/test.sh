#!/usr/bin/env bash
# Set up .venv if needed, then check the registry index and run the whole test suite.
# Extra arguments go to pytest (for example: bash scripts/test.sh tests/core -x).
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh

# A first-party plugin that fails to load is an error here, not a status line.
export GLUON_HUB_STRICT_PLUGINS=1
.venv/bin/gluon-hub plugins
.venv/bin/gluon-hub registry check
.venv/bin/python -m pytest -q -p no:cacheprovider "$@"
