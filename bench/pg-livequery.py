#!/usr/bin/env python3
"""LiveQuery on PostgreSQL: what numbering changes at commit costs writes, and how soon events reach the nodes.

Starts a throwaway durable cluster (scripts/postgres-cluster.sh --durable: fsync on, each commit waits for its WAL
flush) and the given roost binary on it.

  latency     two nodes on one database; a subscriber on each (Item where {}); 300 updates one after another through
              node A. Each event's latency is its arrival minus the arrival of the update's reply (and minus the moment
              the update was sent), on the writer's node and on the other one.
  throughput  wrk creates (2 threads, 16 connections, as bench/run.py) on one node, with LiveQuery recording every
              class (the default: each create is numbered under the lock and logged) and with none recorded
              (--live-query-classes ""), a fresh database each, rounds interleaved.

Needs the `websockets` package (make test installs it into .build/smtp-venv: run with .build/smtp-venv/bin/python).
Usage: bench/pg-livequery.py [--binary .build/release/roost] [--rounds 2] [--seconds 10]
"""
import argparse, asyncio, json, os, statistics, subprocess, tempfile, threading, time, urllib.request
import websockets

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
APP = "bench-app"


def start_node(binary, url, extra=()):
    data = tempfile.mkdtemp(prefix="roost-pglq-")
    process = subprocess.Popen([binary, "serve", "--port", "0", "--data-dir", data, "--app-id", APP, "--master-key", "bench-master-key",
                                "--database-url", url, "--log-level", "warning", *extra],
                               stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
    line = process.stdout.readline()
    port = int(line.split("127.0.0.1:")[1].split("/")[0])
    return process, port


def request(port, method, path, body=None):
    data = json.dumps(body).encode() if body is not None else None
    req = urllib.request.Request(f"http://127.0.0.1:{port}/parse{path}", data=data, method=method,
                                 headers={"X-Parse-Application-Id": APP, "Content-Type": "application/json"})
    with urllib.request.urlopen(req) as answer:
        return json.loads(answer.read())


def database(base, name):
    subprocess.run(["psql", base, "-qc", f"CREATE DATABASE {name}"], check=True)
    return base.rsplit("/", 1)[0] + "/" + name


async def subscriber(port, arrivals, ready):
    async with websockets.connect(f"ws://127.0.0.1:{port}/parse") as socket:
        await socket.send(json.dumps({"op": "connect", "applicationId": APP}))
        await socket.recv()
        await socket.send(json.dumps({"op": "subscribe", "requestId": 1, "query": {"className": "Item", "where": {}}}))
        await socket.recv()
        ready.set()
        async for message in socket:
            event = json.loads(message)
            if event.get("op") == "update":
                arrivals[event["object"]["n"]] = time.monotonic()


def latency(binary, base):
    url = database(base, "latency")
    (a, port_a), (b, port_b) = start_node(binary, url), start_node(binary, url)
    try:
        item = request(port_a, "POST", "/classes/Item", {"n": -1})["objectId"]
        arrivals = {"A": {}, "B": {}}
        for name, port in (("A", port_a), ("B", port_b)):
            ready = threading.Event()
            threading.Thread(target=lambda p=port, n=name, r=ready: asyncio.run(subscriber(p, arrivals[n], r)), daemon=True).start()
            ready.wait(10)
        sent, replied = {}, {}
        for n in range(300):
            sent[n] = time.monotonic()
            request(port_a, "PUT", f"/classes/Item/{item}", {"n": n})
            replied[n] = time.monotonic()
            time.sleep(0.01)
        time.sleep(2)
        result = {}
        for name in ("A", "B"):
            got = arrivals[name]
            after_reply = [1000 * (got[n] - replied[n]) for n in got]
            after_send = [1000 * (got[n] - sent[n]) for n in got]
            result[name] = {"events": len(got), "after reply ms": quantiles(after_reply), "after send ms": quantiles(after_send)}
        return result
    finally:
        for process in (a, b):
            process.terminate()
            process.wait()


def quantiles(values):
    values = sorted(values)
    if not values:
        return {}
    return {"p50": round(values[len(values) // 2], 2), "p99": round(values[int(len(values) * 0.99) - 1], 2), "max": round(values[-1], 2)}


def creates_per_second(binary, base, name, extra, seconds):
    url = database(base, name)
    process, port = start_node(binary, url, extra)
    try:
        request(port, "POST", "/classes/Bench", {"n": 0})
        script = os.path.join(tempfile.mkdtemp(), "create.lua")
        with open(script, "w") as f:
            f.write('wrk.method = "POST"\nwrk.body = \'{"n": 1, "room": "bench"}\'\n'
                    f'wrk.headers["X-Parse-Application-Id"] = "{APP}"\nwrk.headers["Content-Type"] = "application/json"\n')
        out = subprocess.run(["wrk", "-t2", "-c16", f"-d{seconds}s", "-s", script, f"http://127.0.0.1:{port}/parse/classes/Bench"],
                             capture_output=True, text=True).stdout
        rate = float(next(line.split()[1] for line in out.splitlines() if line.startswith("Requests/sec")))
        errors = [line.strip() for line in out.splitlines() if "Non-2xx" in line]
        return rate, errors
    finally:
        process.terminate()
        process.wait()


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--binary", default=os.path.join(ROOT, ".build/release/roost"))
    parser.add_argument("--rounds", type=int, default=2)
    parser.add_argument("--seconds", type=int, default=10)
    args = parser.parse_args()
    cluster = tempfile.mkdtemp(prefix="roost-pglq-cluster-")
    os.rmdir(cluster)
    base = subprocess.run([os.path.join(ROOT, "scripts/postgres-cluster.sh"), "start", cluster, "--durable"],
                          capture_output=True, text=True, check=True).stdout.strip().splitlines()[-1]
    try:
        print("latency:", json.dumps(latency(args.binary, base), indent=1))
        rates = {"recorded": [], "not recorded": []}
        for round in range(args.rounds):
            for label, extra in (("recorded", ()), ("not recorded", ("--live-query-classes", ""))):
                rate, errors = creates_per_second(args.binary, base, f"tp_{round}_{label[:3]}", extra, args.seconds)
                rates[label].append(rate)
                print(f"round {round + 1}, LiveQuery {label}: {rate:.0f} creates/s {' '.join(errors)}", flush=True)
        for label, values in rates.items():
            print(f"{label}: median {statistics.median(values):.0f} creates/s over {len(values)} rounds")
    finally:
        subprocess.run([os.path.join(ROOT, "scripts/postgres-cluster.sh"), "stop", cluster])


if __name__ == "__main__":
    main()
