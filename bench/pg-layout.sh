#!/usr/bin/env bash
# PostgreSQL layout measurement for issue 21: a jsonb document per object (with expression indexes) against typed
# columns per field (parse-server's layout), on a throwaway durable cluster (scripts/postgres-cluster.sh, fsync on):
# insert, get by id, and `n < X ORDER BY n LIMIT 20` unindexed then indexed, over ROWS objects (100,000); then
# pgbench's built-in select-only and simple-update as the server's ceiling. Workloads: bench/pg-layout/*.pgbench.
#
#   bench/pg-layout.sh                  # prints a table; SECONDS_PER_RUN=10 CLIENTS=4 THREADS=2 ROWS=100000 SCALE=10
#
# Every run is pgbench -M prepared (parameters of prepared statements, as Roost's libpq layer sends them) over TCP
# to 127.0.0.1. Inserts run twice: with synchronous_commit on (each commit waits for its WAL flush: the disk's
# figure) and off (the layouts' CPU cost).
set -euo pipefail
cd "$(dirname "$0")/.."
./scripts/install-deps.sh postgresql

seconds=${SECONDS_PER_RUN:-10} clients=${CLIENTS:-4} threads=${THREADS:-2} rows=${ROWS:-100000} scale=${SCALE:-10}
dir=$(mktemp -d /tmp/roost-pg-bench.XXXXXX)
rmdir "$dir"
trap './scripts/postgres-cluster.sh stop "$dir"' EXIT
url=$(./scripts/postgres-cluster.sh start "$dir" --durable)
bin=$(ls -d /usr/lib/postgresql/*/bin | sort -V | tail -n 1)
# libpq's environment, so no password is on a command line.
rest=${url#postgres://}
export PGUSER=${rest%%:*} PGPASSWORD=${rest#*:}
PGPASSWORD=${PGPASSWORD%%@*}
rest=${rest#*@}
export PGHOST=${rest%%:*} PGDATABASE=${rest##*/}
rest=${rest#*:}
export PGPORT=${rest%%/*}

workloads=bench/pg-layout
psql() { "$bin/psql" -X -q -v ON_ERROR_STOP=1 "$@"; }

# Transactions per second of one pgbench run.
tps() {
    local script=$1; shift
    "$bin/pgbench" -n -M prepared -c "$clients" -j "$threads" -T "$seconds" -D rows="$rows" "$@" ${script:+-f "$script"} 2>&1 |
        sed -n 's/^tps = \([0-9.]*\).*/\1/p' | cut -d. -f1
}

row() { printf '%-46s %12s %12s\n' "$@"; }

echo "PostgreSQL $("$bin/postgres" --version | awk '{print $3}'), $(nproc) cores, load $(cut -d' ' -f1-3 /proc/loadavg);" \
    "$rows rows, $clients clients, $threads pgbench threads, $seconds s per run, fsync on"
psql -v rows="$rows" -f "$workloads/setup.sql" >/dev/null
row "transactions per second" "jsonb" "typed"
row "get by id" "$(tps $workloads/get-jsonb.pgbench)" "$(tps $workloads/get-typed.pgbench)"
row "n < X order by n limit 20, no index" "$(tps $workloads/range-jsonb.pgbench)" "$(tps $workloads/range-typed.pgbench)"
psql -f "$workloads/indexes.sql" >/dev/null
row "n < X order by n limit 20, index on n" "$(tps $workloads/range-jsonb.pgbench)" "$(tps $workloads/range-typed.pgbench)"
row "insert, synchronous_commit on" "$(tps $workloads/insert-jsonb.pgbench)" "$(tps $workloads/insert-typed.pgbench)"
export PGOPTIONS="-c synchronous_commit=off"
row "insert, synchronous_commit off" "$(tps $workloads/insert-jsonb.pgbench)" "$(tps $workloads/insert-typed.pgbench)"
unset PGOPTIONS
size() { psql -At -c "SELECT pg_size_pretty(pg_total_relation_size('$1'))"; }
row "table + indexes after the inserts" "$(size doc_jsonb)" "$(size doc_typed)"
plan() { psql -At -c "EXPLAIN $1" | head -n 3 | tr '\n' ' ' | sed 's/  */ /g'; }
echo "plan, jsonb: $(plan "SELECT * FROM doc_jsonb WHERE (data->>'n')::float8 < 5000 ORDER BY (data->>'n')::float8 LIMIT 20")"
echo "plan, typed: $(plan "SELECT * FROM doc_typed WHERE n < 5000 ORDER BY n LIMIT 20")"

"$bin/pgbench" -i -q -s "$scale" >/dev/null 2>&1
echo "pgbench built-in ceilings (scale $scale: $((scale * 100000)) accounts):"
row "select-only (-b select-only)" "$(tps "" -b select-only)" ""
row "simple-update (-b simple-update)" "$(tps "" -b simple-update)" ""
PGOPTIONS="-c synchronous_commit=off" row "simple-update, synchronous_commit off" "$(PGOPTIONS="-c synchronous_commit=off" tps "" -b simple-update)" ""
