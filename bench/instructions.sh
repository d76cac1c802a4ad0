#!/usr/bin/env bash
# Installs valgrind if missing, builds the release binary if needed, then counts instructions per request.
set -euo pipefail
cd "$(dirname "$0")/.."
./scripts/install-deps.sh valgrind python3 binutils
[ -x .build/release/roost ] || swift build -c release
exec python3 bench/instructions.py "$@"
