#!/usr/bin/env bash
# The system tools that gluon-hub-deploy's tests (plugins/gluon-hub-deploy/tests) build
# projects with: a C++ compiler, OpenJDK 17, JNA and Clojure; and Chromium, the headless
# browser tests/browser drives the catalogue in (through playwright, not its own download).
# Installs what is missing from Debian's packages when apt-get is there and this runs as root
# (or sudo works without a password); otherwise says what to install and fails.
set -euo pipefail

missing=()
command -v g++ >/dev/null || missing+=(g++)
command -v javac >/dev/null || missing+=(openjdk-17-jdk-headless)
[ -f "${JNA_JAR:-/usr/share/java/jna.jar}" ] || missing+=(libjna-java)
command -v clojure >/dev/null || missing+=(clojure)
command -v chromium >/dev/null || missing+=(chromium)
[ ${#missing[@]} -eq 0 ] && exit 0

as_root=()
if [ "$(id -u)" -ne 0 ]; then
    as_root=(sudo -n)
fi
if ! command -v apt-get >/dev/null || ! "${as_root[@]}" true 2>/dev/null; then
    echo "system-deps: the deploy and browser tests need ${missing[*]} (Debian's names); install them, or set" \
         "JNA_JAR to a jna.jar, then run again" >&2
    exit 1
fi
echo "system-deps: installing ${missing[*]}"
"${as_root[@]}" apt-get update -qq
DEBIAN_FRONTEND=noninteractive "${as_root[@]}" apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
