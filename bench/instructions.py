#!/usr/bin/env python3
"""Instructions per request, counted by valgrind (callgrind): a figure that does not move with the
machine's load, unlike req/s and latencies on a shared VM. For comparing two builds of roost.

Each workload runs on a fresh server under valgrind: start, seed, N requests on one kept-alive
connection, stop. A run with no requests gives the fixed cost, subtracted from the others.
Counts user-space instructions only (not the kernel's TCP and scheduling work). The create figure
also holds the background checkpoints that ran meanwhile (they go by the clock): it moves by ~5 %.
The server logs at `error` (no line per request); `ROOST_LOG_LEVEL=info` counts the default's request lines too.
Usage: bench/instructions.py [--binary .build/release/roost] [--requests 1000]
"""
import argparse, http.client, json, os, re, shutil, signal, subprocess, sys, tempfile, time
import urllib.parse

from run import free_port  # bench/run.py, beside this file

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
LOG_LEVEL = os.environ.get("ROOST_LOG_LEVEL", "error")
HEADERS = {"X-Parse-Application-Id": "roost", "Content-Type": "application/json"}


def call(connection, method, path, body=None):
    connection.request(method, "/parse" + path, body=json.dumps(body) if body is not None else None, headers=HEADERS)
    response = connection.getresponse()
    payload = response.read()
    if response.status >= 300:
        raise RuntimeError(f"{method} {path}: {response.status} {payload[:200]!r}")
    return json.loads(payload)


def run(binary, workload, requests):
    """Total instructions of one server run: start, seed 100 objects, `requests` of `workload`, stop."""
    data = tempfile.mkdtemp(prefix="roost-instructions-")
    out = os.path.join(data, "callgrind.out")
    port = free_port()
    server = subprocess.Popen(["valgrind", "--tool=callgrind", f"--callgrind-out-file={out}", binary, "serve",
                               "--port", str(port), "--data-dir", os.path.join(data, "db"), "--master-key", "bench-master",
                               "--log-level", LOG_LEVEL], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        deadline = time.time() + 120
        while True:
            try:
                connection = http.client.HTTPConnection("127.0.0.1", port, timeout=60)
                call(connection, "GET", "/health")
                break
            except (OSError, http.client.HTTPException):
                if time.time() > deadline:
                    raise
                time.sleep(0.5)
        ids = []
        for start in (0, 50):  # A batch holds at most 50 requests.
            batch = {"requests": [{"method": "POST", "path": "/parse/classes/Item", "body": {"title": f"item {i}", "n": i, "done": False}}
                                  for i in range(start, start + 50)]}
            ids += [result["success"]["objectId"] for result in call(connection, "POST", "/batch", batch)]
        # As in bench/run.py: an index on `n`, declared through the schema API.
        connection.request("PUT", "/parse/schemas/Item", body=json.dumps({"indexes": {"n_1": {"n": 1}}}),
                           headers=dict(HEADERS, **{"X-Parse-Master-Key": "bench-master"}))
        connection.getresponse().read()
        where = urllib.parse.quote(json.dumps({"n": {"$lt": 50}}))
        for i in range(requests):
            if workload == "get":
                call(connection, "GET", f"/classes/Item/{ids[i % len(ids)]}")
            elif workload == "create":
                call(connection, "POST", "/classes/Item", {"title": "hello", "n": 42, "done": False})
            elif workload == "query":
                call(connection, "GET", f"/classes/Item?where={where}&order=n&limit=20")
        connection.close()
    finally:
        server.send_signal(signal.SIGTERM)
        server.wait(timeout=120)
    with open(out) as f:
        total = int(re.search(r"^totals:\s+(\d+)", f.read(), re.M).group(1))
    shutil.rmtree(data, ignore_errors=True)
    return total


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--binary", default=os.path.join(ROOT, ".build", "release", "roost"))
    parser.add_argument("--requests", type=int, default=1000)
    args = parser.parse_args()
    # Valgrind 3.19 (Debian 12's) gives up on the DWARF 5 debug info today's Swift writes ("Possibly corrupted
    # debuginfo file"): it counts a copy without it (the instructions are the same).
    binary = os.path.join(tempfile.mkdtemp(prefix="roost-instructions-binary-"), "roost")
    subprocess.run(["strip", "--strip-debug", "-o", binary, args.binary], check=True)
    fixed = run(binary, "none", 0)
    print(f"fixed cost (start, seed, stop): {fixed / 1e6:.1f} M instructions", flush=True)
    for workload in ["get", "create", "query"]:
        total = run(binary, workload, args.requests)
        print(f"{workload:<7} {(total - fixed) / args.requests / 1000:8.1f} k instructions per request", flush=True)
    shutil.rmtree(os.path.dirname(binary), ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
