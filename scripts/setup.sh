#!/usr/bin/env bash
# Create .venv with the core, the three first-party plugins (all editable) and the
# test/benchmark references. Safe to rerun: it reinstalls only when a pyproject changed.
set -euo pipefail
cd "$(dirname "$0")/.."

PYTHON=${PYTHON:-python3}
if ! "$PYTHON" -c 'import sys; sys.exit(not ((3, 10) <= sys.version_info[:2] <= (3, 12)))'; then
    echo "setup: gluon_hub supports Python 3.10-3.12; set PYTHON to one of them" >&2
    exit 1
fi

stamp=.venv/.gluon-hub-setup
# Reinstall when packaging or compiled sources change (the nlp plugin builds a C extension).
want=$(cat pyproject.toml plugins/*/pyproject.toml plugins/*/setup.py plugins/*/*/*/*.c 2>/dev/null \
    | sha256sum | cut -d' ' -f1)
if [ -f "$stamp" ] && [ "$(cat "$stamp")" = "$want" ]; then
    exit 0
fi
echo "setup: creating .venv with $("$PYTHON" --version)"
"$PYTHON" -m venv .venv
.venv/bin/python -m pip install --quiet --disable-pip-version-check --upgrade pip
.venv/bin/python -m pip install --quiet --disable-pip-version-check \
    -e ".[test,demo]" -e plugins/gluon-cv-core -e plugins/gluon-nlp-core -e plugins/gluon-contrib
echo "$want" > "$stamp"
echo "setup: done"
