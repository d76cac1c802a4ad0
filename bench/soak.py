#!/usr/bin/env python3
"""A long mixed run against roost on SQLite: is memory flat, and does the WAL stay within its bound?

Seeds as bench/run.py does, then for --minutes keeps two wrk clients going at once (1 thread, 8 connections each):
a writer taking turns between creates of small objects and of 20-field objects into a class with 5 automatic
indexes, and a reader taking turns between gets, queries, ACL-filtered gets and queries and the unindexed query,
20 s per turn. Every 2 s it samples the server's resident memory and the WAL file's size. Then it leaves the server
idle and checks that the WAL is truncated.

Prints one line per minute (requests, RSS min/max, WAL max) and the verdict; exits 1 when a check fails:
- flat: resident memory at the end of the run is at most --growth-mb above its maximum over the first quarter
  (caches fill in the first minutes; what grows after is a leak);
- the WAL never passes 128 MB (README, Storage);
- after the load, the WAL is truncated to nothing within 10 s (2 s without a write, README).
Usage: bench/soak.py [--minutes 10] [--binary .build/release/roost]  (builds nothing: scripts/build-release.sh)
"""
import argparse, os, shutil, subprocess, sys, tempfile, time

import run  # bench/run.py, beside this file

WAL_BOUND_MB = 128


def wal_mb(data):
    try:
        return os.path.getsize(os.path.join(data, "roost.sqlite-wal")) / 2**20
    except FileNotFoundError:
        return 0.0


def start_wrk(url, script, seconds):
    return subprocess.Popen(["wrk", "-t1", "-c8", f"-d{seconds}s", "-s", script, url],
                            stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)


def requests_done(output):
    line = next((line for line in output.splitlines() if "requests in" in line), "")
    return int(line.split()[0]) if line else 0


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--minutes", type=float, default=10)
    parser.add_argument("--binary", default=os.path.join(run.ROOT, ".build", "release", "roost"))
    parser.add_argument("--growth-mb", type=float, default=2.0, help="most growth of memory after the first quarter")
    args = parser.parse_args()
    if not os.path.exists(args.binary):
        sys.exit(f"no roost binary at {args.binary}: run scripts/build-release.sh (or pass --binary)")

    server = run.Roost()
    server.binary = lambda: args.binary
    data = tempfile.mkdtemp(prefix="roost-soak-")
    server.start(data)
    try:
        scripts = {name: (url, script) for name, url, script in server.workloads(server.seed())}
        writers = ["create", "create-auto5"]
        readers = ["get", "query", "get-acl", "query-acl", "query-noindex"]
        turn = 20
        seconds = args.minutes * 60
        samples = []  # (elapsed s, RSS MB, WAL MB)
        done = {}  # minute -> requests
        started = time.time()
        index = 0
        while time.time() - started < seconds:
            length = int(min(turn, seconds - (time.time() - started))) or 1
            clients = [start_wrk(*scripts[writers[index % len(writers)]], length),
                       start_wrk(*scripts[readers[index % len(readers)]], length)]
            while any(client.poll() is None for client in clients):
                samples.append((time.time() - started, run.status_mb(server.proc.pid, "VmRSS"), wal_mb(data)))
                time.sleep(2)
            minute = int((time.time() - started - 1) // 60)
            done[minute] = done.get(minute, 0) + sum(requests_done(client.stdout.read()) for client in clients)
            index += 1
        loaded = time.time() - started
        idle_deadline = time.time() + 10
        while wal_mb(data) > 0 and time.time() < idle_deadline:
            time.sleep(0.5)
        wal_after_idle = wal_mb(data)
    finally:
        server.proc.terminate()
        server.proc.wait(timeout=60)
        shutil.rmtree(data, ignore_errors=True)

    print(f"{'minute':>6} {'requests':>9} {'RSS min':>8} {'RSS max':>8} {'WAL max':>8}")
    for minute in range(int((loaded - 1) // 60) + 1):
        rows = [s for s in samples if minute * 60 <= s[0] < (minute + 1) * 60]
        if rows:
            print(f"{minute + 1:>6} {done.get(minute, 0):>9} {min(r[1] for r in rows):>7.1f}M {max(r[1] for r in rows):>7.1f}M "
                  f"{max(r[2] for r in rows):>7.1f}M")
    first_quarter = max(s[1] for s in samples if s[0] <= loaded / 4)
    end = samples[-1][1]
    peak = max(s[1] for s in samples)
    wal_peak = max(s[2] for s in samples)
    checks = [
        (end - first_quarter <= args.growth_mb,
         f"memory flat: {end:.1f} MB at the end, {first_quarter:.1f} MB at most in the first quarter, peak {peak:.1f} MB"),
        (wal_peak <= WAL_BOUND_MB, f"WAL within its bound: at most {wal_peak:.1f} MB (bound {WAL_BOUND_MB} MB)"),
        (wal_after_idle == 0, f"WAL truncated when idle: {wal_after_idle:.1f} MB 10 s after the load"),
    ]
    for ok, text in checks:
        print(f"    {'ok  ' if ok else 'FAIL'} {text}")
    return 0 if all(ok for ok, _ in checks) else 1


if __name__ == "__main__":
    sys.exit(main())
