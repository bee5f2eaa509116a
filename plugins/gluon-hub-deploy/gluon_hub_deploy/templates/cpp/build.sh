#!/bin/sh
# Compiles predict.cpp against libmxnet.so (written by gluon-hub deploy).
set -e
. "$(dirname "$0")/env.sh"
CXX="${CXX:-g++}"
command -v "$CXX" >/dev/null || { echo "error: no C++ compiler '$CXX'; install one (apt-get install g++) or set CXX" >&2; exit 1; }
cd "$HERE"
"$CXX" -O2 -std=c++17 -I include predict.cpp -o predict -L"$MXNET_LIB_DIR" -lmxnet \
  -Wl,-rpath,'$ORIGIN/lib' -Wl,-rpath,"$MXNET_LIB_DIR"
