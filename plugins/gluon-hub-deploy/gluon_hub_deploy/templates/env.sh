# Sourced by build.sh and run (written by gluon-hub deploy): where libmxnet.so is.
# MXNET_LIB_DIR when set, else this project's lib/ (where you shipped the library), else
# the mxnet wheel the project was written from.
HERE="$(cd "$(dirname "$0")" && pwd)"
if [ -z "${MXNET_LIB_DIR:-}" ]; then
  if [ -f "$HERE/lib/libmxnet.so" ]; then MXNET_LIB_DIR="$HERE/lib"; else MXNET_LIB_DIR=@MXNET_LIB_DIR@; fi
fi
if [ ! -f "$MXNET_LIB_DIR/libmxnet.so" ]; then
  echo "error: no libmxnet.so in $MXNET_LIB_DIR; copy libmxnet.so, libopenblas.so.0 and libgfortran.so.3 from the mxnet wheel into $HERE/lib, or set MXNET_LIB_DIR to the folder that holds them" >&2
  exit 1
fi
export MXNET_LIB_DIR
JNA_JAR="${JNA_JAR:-/usr/share/java/jna.jar}"
