#!/usr/bin/env bash
# Build wheels of the core and the first-party plugins, which are on no package index,
# into dist/ (gitignored). The hub's install hints then name these wheels:
#   gluon-hub search bert   ->   pip install /path/to/dist/gluon_nlp_core-0.1.0-....whl
#
# Usage: scripts/build-wheels.sh [-o DIR] [DISTRIBUTION ...]
#   DISTRIBUTION: gluon-hub, gluon-cv-core, gluon-nlp-core, gluon-contrib, gluon-hub-deploy
#   (default: all)
# Uses $PYTHON (default .venv/bin/python, else python3); builds need the package index
# (or pip's cache) for setuptools, as any pip build does. gluon-nlp-core has a C extension,
# so its wheel is for this platform and Python and needs a C compiler.
set -euo pipefail
cd "$(dirname "$0")/.."

out=dist
if [ "${1:-}" = "-o" ]; then
    out=$2
    shift 2
fi
if [ $# -eq 0 ]; then
    set -- gluon-hub gluon-cv-core gluon-nlp-core gluon-contrib gluon-hub-deploy
fi
PYTHON=${PYTHON:-$([ -x .venv/bin/python ] && echo .venv/bin/python || echo python3)}

sources=()
for dist in "$@"; do
    case $dist in
        gluon-hub) sources+=(.) ;;
        gluon-cv-core | gluon-nlp-core | gluon-contrib | gluon-hub-deploy) sources+=("plugins/$dist") ;;
        *) echo "build-wheels: unknown distribution '$dist'" >&2; exit 2 ;;
    esac
done

mkdir -p "$out"
"$PYTHON" -m pip wheel --quiet --disable-pip-version-check --no-deps --wheel-dir "$out" "${sources[@]}"
ls -1 "$out"/*.whl
