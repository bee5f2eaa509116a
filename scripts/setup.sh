#!/usr/bin/env bash
# Create .venv with the core, the four first-party plugins (all editable), the CPU build of
# MXNet and the test/benchmark references. Safe to rerun: it reinstalls only when packaging
# changed. Versions come from constraints/py3.X.txt, so every run resolves the same set.
#
#   PYTHON=python3.12 bash scripts/setup.sh          # another supported Python
#   GLUON_HUB_VENV=.venv-py3.12 SETUP_PROFILE=vision ...   # another folder, a smaller set (CI)
#
# Profiles: "full" (default) installs everything the whole test suite and the main job
# need; installing gluonnlp, a test reference, compiles Cython, so it needs a C compiler.
# "vision" installs what the core's and the vision plugin's tests need (no C compiler;
# scikit-learn for the digits the quantization tests train on). "onnx" is the MXNet-free hub
# (the only profile on Python 3.13, where MXNet 1.9.1 has no wheel): the core and the four
# plugins with numpy 2, onnxruntime, Pillow, decord (videos) and the tokenizer libraries, and
# pytest for the tests that need no MXNet (pytest -m "not mxnet").
set -euo pipefail
cd "$(dirname "$0")/.."

PYTHON=${PYTHON:-python3}
VENV=${GLUON_HUB_VENV:-.venv}
PROFILE=${SETUP_PROFILE:-full}
if ! "$PYTHON" -c 'import sys; sys.exit(not ((3, 10) <= sys.version_info[:2] <= (3, 13)))'; then
    echo "setup: gluon_hub supports Python 3.10-3.13; set PYTHON to one of them" >&2
    exit 1
fi
version=$("$PYTHON" -c 'import sys; print("%d.%d" % sys.version_info[:2])')
constraints=constraints/py$version.txt
if [ "$version" = 3.13 ] && [ "$PROFILE" != onnx ]; then
    echo "setup: MXNet 1.9.1 has no wheel for Python 3.13, so profile '$PROFILE' cannot be installed there;" \
         "use SETUP_PROFILE=onnx (the MXNet-free hub) or Python 3.10-3.12" >&2
    exit 1
fi

case "$PROFILE" in
    full) packages=(-e ".[mxnet,test,demo]" -e "plugins/gluon-cv-core[test]"
                    -e "plugins/gluon-nlp-core[test]" -e "plugins/gluon-contrib[test]"
                    -e "plugins/gluon-hub-deploy[test]") ;;
    vision) packages=(-e ".[mxnet]" -e "plugins/gluon-cv-core[test]" -e plugins/gluon-nlp-core
                      -e plugins/gluon-contrib -e "plugins/gluon-hub-deploy[onnx]"
                      pytest hypothesis build wheel scikit-learn) ;;
    onnx) packages=(-e ".[onnxruntime]" -e "plugins/gluon-cv-core[video]" -e "plugins/gluon-nlp-core[tokenizers]"
                    -e plugins/gluon-contrib -e plugins/gluon-hub-deploy pytest) ;;
    *) echo "setup: SETUP_PROFILE must be full, vision or onnx, not '$PROFILE'" >&2; exit 1 ;;
esac

stamp=$VENV/.gluon-hub-setup
# Reinstall when packaging, pins or compiled sources change (the nlp plugin builds a C
# extension; setup.py installs the .pth file that lets a plain `import mxnet` work).
want=$( (echo "$PROFILE $version"; cat pyproject.toml setup.py plugins/*/pyproject.toml \
    plugins/*/setup.py plugins/*/*/*/*.c "$constraints" 2>/dev/null || true) | sha256sum | cut -d' ' -f1)
if [ -f "$stamp" ] && [ "$(cat "$stamp")" = "$want" ]; then
    exit 0
fi
echo "setup: creating $VENV with $("$PYTHON" --version) ($PROFILE)"
"$PYTHON" -m venv --clear "$VENV"
"$VENV/bin/python" -m pip install --quiet --disable-pip-version-check --upgrade pip
pins=()
if [ -f "$constraints" ]; then
    pins=(-c "$constraints")
else
    echo "setup: no $constraints; resolving the newest versions" >&2
fi
"$VENV/bin/python" -m pip install --quiet --disable-pip-version-check "${pins[@]}" "${packages[@]}"
echo "$want" > "$stamp"
echo "setup: done"
