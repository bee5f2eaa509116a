#!/usr/bin/env bash
# Set up .venv if needed, then run the main job end to end (no internet needed).
set -euo pipefail
cd "$(dirname "$0")/.."
GLUON_HUB_VENV=.venv SETUP_PROFILE=full bash scripts/setup.sh
exec .venv/bin/python scripts/main_job.py "$@"
