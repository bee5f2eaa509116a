#!/bin/sh
# Compiles Predict.java against JNA (written by gluon-hub deploy).
set -e
. "$(dirname "$0")/env.sh"
command -v javac >/dev/null || { echo "error: no javac; install a JDK 17 (apt-get install openjdk-17-jdk-headless)" >&2; exit 1; }
[ -f "$JNA_JAR" ] || { echo "error: no JNA at $JNA_JAR; install it (apt-get install libjna-java) or set JNA_JAR" >&2; exit 1; }
cd "$HERE"
javac -encoding UTF-8 -cp "$JNA_JAR" -d classes Predict.java
