#!/usr/bin/env bash
# Set up .venv if needed, then check the registry index and run the whole test suite.
# Extra arguments go to one pytest run instead (for example: bash scripts/test.sh tests/core -x).
# .ci/run runs this, then the core's and the vision plugin's tests on Python 3.10 and 3.12.
# The parts run in two lanes side by side where the machine allows (scripts/lanes.sh).
set -euo pipefail
cd "$(dirname "$0")/.."
GLUON_HUB_VENV=.venv SETUP_PROFILE=full bash scripts/setup.sh
bash scripts/system-deps.sh  # g++, a JDK, JNA and Clojure for gluon-hub-deploy's tests; Chromium for tests/browser

# A first-party plugin that fails to load is an error here, not a status line.
export GLUON_HUB_STRICT_PLUGINS=1
.venv/bin/gluon-hub plugins
.venv/bin/gluon-hub registry check
if [ "$#" -gt 0 ]; then
    .venv/bin/python -m pytest -q -p no:cacheprovider "$@"
    exit
fi
# One pytest process per part: MXNet keeps the memory of what a process built, and the
# whole suite in one process outgrew a 24 GB machine; so did the vision suite without its
# video tests (killed near its end in the first CI run after the per-task layout), so its
# detection and segmentation folders run apart too. The video models get a process of
# their own: after the rest of the vision suite in one process (some 1,400 tests),
# oneDNN's AVX-512 kernels once crashed the hub's P3D (README, "Known issues"), while the
# video tests alone, and the 3D stress test, run clean. The text plugin's suite was killed for
# memory in one process (2026-11-28, after its ONNX and hub-entry tests were added), so its
# full-size models (test_hybridize.py: every text model; test_models_elmo.py: ELMo and the
# big LSTM) and its ONNX tests run apart. Every part runs; any failure fails.
cv=plugins/gluon-cv-core/tests
video=$cv/action
nlp=plugins/gluon-nlp-core/tests
nlp_onnx="$nlp/test_onnx_export.py $nlp/test_onnx_runners.py $nlp/test_onnx_translation.py $nlp/test_onnx_lm_scoring.py"
nlp_apart="$nlp_onnx $nlp/test_hybridize.py $nlp/test_models_elmo.py"
# Two lanes (the vision parts; the rest), ordered so that the parts that need the most memory
# never meet: the vision part without its task folders grows to 13.6 GB by its end and the
# text plugin's part needs 9.2 GB, together 22.9 of a 24 GB machine when they met (CI run of
# 2026-11-28), so the text parts go first, and segmentation (8 GB) last, beside detection and
# the video models (9 GB). In the CI run of e96b74f: vision 1,340 s, the rest 1,105 s, side
# by side (peak 17.9 GB), where one after another took 2,280 s; scripts/lanes.sh says why.
pytest=".venv/bin/python -m pytest -q -p no:cacheprovider"
lane_vision=("$pytest plugins/gluon-cv-core --ignore=$video --ignore=$cv/detection --ignore=$cv/segmentation"
             "$pytest $cv/detection" "$pytest $video")
lane_rest=("$pytest plugins/gluon-nlp-core ${nlp_apart//plugins/--ignore=plugins}"
           "$pytest $nlp/test_hybridize.py" "$pytest $nlp/test_models_elmo.py" "$pytest $nlp_onnx"
           "$pytest tests" "$pytest plugins/gluon-contrib" "$pytest plugins/gluon-hub-deploy"
           "$pytest $cv/segmentation")
# shellcheck source=scripts/lanes.sh
source scripts/lanes.sh
run_lanes "${lane_vision[@]}" -- "${lane_rest[@]}"
