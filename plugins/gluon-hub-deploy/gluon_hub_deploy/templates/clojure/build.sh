#!/bin/sh
# Checks that Clojure and JNA are there; predict.clj runs as a script (written by gluon-hub deploy).
set -e
. "$(dirname "$0")/env.sh"
command -v clojure >/dev/null || { echo "error: no clojure command; install it (apt-get install clojure)" >&2; exit 1; }
[ -f "$JNA_JAR" ] || { echo "error: no JNA at $JNA_JAR; install it (apt-get install libjna-java) or set JNA_JAR" >&2; exit 1; }
