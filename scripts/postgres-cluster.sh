#!/usr/bin/env bash
# A throwaway PostgreSQL cluster for tests and benchmarks, in a private directory:
#
#   scripts/postgres-cluster.sh start DIR [--durable]   creates and starts it, prints its URL
#   scripts/postgres-cluster.sh url DIR                 prints the URL of a started cluster
#   scripts/postgres-cluster.sh stop DIR                stops it and deletes DIR (nothing to do if DIR is gone)
#   scripts/postgres-cluster.sh run COMMAND...          starts one in a fresh temporary directory, runs COMMAND with
#                                                       ROOST_TEST_POSTGRES_URL set, stops it even if COMMAND fails,
#                                                       and exits with COMMAND's status
#
# The URL is postgres://roost:<random password>@127.0.0.1:<free port>/roost (user roost may create databases and
# owns database roost); superuser postgres may connect, without password, on the socket in DIR/socket only.
# PostgreSQL refuses to run as root, so under root the cluster runs as the `postgres` user (Debian's package makes
# it). Without --durable, fsync is off: a test cluster trades crash safety for speed (bench/pg-layout.sh passes it).
set -euo pipefail

bin_dir() {
    local found
    found=$(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V | tail -n 1)
    if [ -n "$found" ]; then echo "$found"
    elif command -v initdb >/dev/null; then dirname "$(command -v initdb)"
    else echo "no PostgreSQL server binaries (Debian: apt-get install postgresql)" >&2; return 1
    fi
}

# Runs a command as the cluster's owner: postgres under root, else ourselves.
as_owner() {
    if [ "$(id -u)" -eq 0 ]; then runuser -u postgres -- "$@"; else "$@"; fi
}

# A localhost port nothing listens on now (pg_ctl start is retried on another if one takes it meanwhile).
free_port() {
    local port
    while :; do
        port=$((20000 + RANDOM % 40000))
        (exec 3<>"/dev/tcp/127.0.0.1/$port") 2>/dev/null || { echo "$port"; return; }
    done
}

start() {
    local dir=$1 durable=${2:-}
    [ -e "$dir/roost-cluster" ] && { echo "a cluster is already in $dir" >&2; return 1; }
    local bin; bin=$(bin_dir)
    mkdir -p "$dir"
    dir=$(cd "$dir" && pwd)
    touch "$dir/roost-cluster"
    mkdir -p "$dir/socket"
    [ "$(id -u)" -eq 0 ] && chown -R postgres: "$dir"
    chmod 700 "$dir" "$dir/socket"

    local password
    password=$(head -c 18 /dev/urandom | od -An -tx1 | tr -d ' \n')
    as_owner "$bin/initdb" -D "$dir/data" -U postgres --auth-local=trust --auth-host=scram-sha-256 -E UTF8 \
        --locale=C.UTF-8 >"$dir/initdb.log" 2>&1 || { cat "$dir/initdb.log" >&2; return 1; }

    # Connections: a parallel test group runs some 320 servers at once, each with its pool's connections, its cache
    # listener (`CacheInvalidation`), its change-log trimmer's and, with subscribers, its LiveQuery feed's (600 was
    # reached once the listeners came; measured peaks 882).
    local options="-c listen_addresses=127.0.0.1 -c unix_socket_directories=$dir/socket -c max_connections=1200"
    [ "$durable" = "--durable" ] || options+=" -c fsync=off -c synchronous_commit=off -c full_page_writes=off"
    local port attempt
    for attempt in 1 2 3 4 5; do
        port=$(free_port)
        if as_owner "$bin/pg_ctl" -D "$dir/data" -l "$dir/postgres.log" -w -t 60 -o "$options -c port=$port" start \
            >/dev/null; then break; fi
        port=""
    done
    [ -n "$port" ] || { echo "PostgreSQL did not start; its log:" >&2; tail -n 20 "$dir/postgres.log" >&2; return 1; }

    as_owner "$bin/psql" -X -q -h "$dir/socket" -p "$port" -U postgres -d postgres -v ON_ERROR_STOP=1 \
        -c "create role roost login createdb password '$password'" -c "create database roost owner roost" >/dev/null
    (umask 077; echo "postgres://roost:$password@127.0.0.1:$port/roost" >"$dir/url")
    echo "$port" >"$dir/port"
    cat "$dir/url"
}

stop() {
    local dir=$1
    [ -e "$dir" ] || return 0
    [ -e "$dir/roost-cluster" ] || { echo "$dir holds no cluster of this script; not touching it" >&2; return 1; }
    if [ -e "$dir/data/postmaster.pid" ]; then
        as_owner "$(bin_dir)/pg_ctl" -D "$dir/data" -m fast -w -t 60 stop >/dev/null 2>&1 || true
    fi
    rm -rf "$dir"
}

run() {
    local status=0
    run_dir=$(mktemp -d /tmp/roost-pg.XXXXXX)
    rmdir "$run_dir"
    trap 'stop "$run_dir"' EXIT
    trap 'exit 130' INT TERM
    ROOST_TEST_POSTGRES_URL=$(start "$run_dir")
    export ROOST_TEST_POSTGRES_URL ROOST_TEST_POSTGRES_DIR=$run_dir
    "$@" || status=$?
    exit "$status"
}

command=${1:-}
case "$command" in
    start) [ $# -ge 2 ] || { echo "usage: $0 start DIR [--durable]" >&2; exit 2; }; start "$2" "${3:-}" ;;
    url) [ $# -eq 2 ] || { echo "usage: $0 url DIR" >&2; exit 2; }; cat "$2/url" ;;
    stop) [ $# -eq 2 ] || { echo "usage: $0 stop DIR" >&2; exit 2; }; stop "$2" ;;
    run) shift; [ $# -ge 1 ] || { echo "usage: $0 run COMMAND..." >&2; exit 2; }; run "$@" ;;
    *) echo "usage: $0 start DIR [--durable] | url DIR | stop DIR | run COMMAND..." >&2; exit 2 ;;
esac
