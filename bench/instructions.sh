#!/usr/bin/env bash
# Installs valgrind if missing, builds the release binary, then counts instructions per request.
set -euo pipefail
cd "$(dirname "$0")/.."
./scripts/install-deps.sh valgrind python3 binutils
./scripts/build-release.sh --product roost  # quick when nothing changed
exec python3 bench/instructions.py "$@"
