#!/usr/bin/env bash
# saveEventually benchmark: starts a release roost on a free port with a fresh data dir and runs
# roost-eventually-bench against it. Usage: bench/eventually.sh [--objects 10000]
set -euo pipefail
cd "$(dirname "$0")/.."
./scripts/install-deps.sh
swift build -c release --product roost --product roost-eventually-bench 2>&1 | tail -1
data=$(mktemp -d)
port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
.build/release/roost serve --port "$port" --data-dir "$data" --master-key bench --log-level warning > /dev/null &
server=$!
trap 'kill $server 2>/dev/null; wait $server 2>/dev/null; rm -rf "$data"' EXIT
until curl -s "http://127.0.0.1:$port/parse/health" > /dev/null; do sleep 0.1; done
.build/release/roost-eventually-bench "http://127.0.0.1:$port/parse" roost "$@"
