#!/usr/bin/env bash
# Installs what issue 21's benchmark needs (wrk, PostgreSQL with pgbench, nginx), builds roost in release mode, then
# runs bench/postgres.py (its doc says what it measures). The build before the storage seam is made once, in
# bench/out/seamless-<rev> (a git worktree).
set -euo pipefail
cd "$(dirname "$0")/.."
./scripts/install-deps.sh wrk postgresql nginx
mkdir -p bench/out
./scripts/build-release.sh --product roost
exec python3 bench/postgres.py "$@"
