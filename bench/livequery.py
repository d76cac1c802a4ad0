#!/usr/bin/env python3
"""LiveQuery benchmark (issue 20): delivery latency, create throughput with subscribers, memory per idle
subscriber connection, and 10,000 idle connections held while new HTTP clients are answered.

Starts the given roost binary (it builds nothing: `swift build -c release` first) on a free port in a temp
data dir, and drives it with bench/lqclient.c (compiled with cc into bench/out/, as run.py compiles its
ceiling), which holds the WebSockets: one Python process cannot read 100,000 frames a second here.

  ceiling     the same fan-out from bench/lqceiling.c, a C program that only sends (no matching, no JSON):
              what delivering RATE x N frames a second over loopback costs on this machine, for scale.
  latency     N subscribers (default 1,000) subscribed to Item where {room: "bench"}; one writer creates
              matching objects at RATE/s (default 100) over one kept-alive connection. Each event's latency is
              its arrival at the subscriber minus the moment the create was sent (the target's figure: it
              covers the commit, so it bounds commit-to-delivery from above), also given from the moment the
              create's reply arrived. Same machine, same clock (CLOCK_MONOTONIC) on both sides.
  throughput  wrk creates (2 threads, 16 connections, as bench/run.py) with no subscribers and with N
              subscribers on the same class (where {room: "bench"}, which the created objects do not match:
              every create is matched against every subscription, and none is delivered), interleaved rounds.
  memory      the server's VmRSS before and after K (default 1,000) idle subscribed connections, / K.
  idle        10,000 idle subscribed connections (from 127.0.0.2, .3, ...: 1,000 per address, under the
              per-address limit), held while new HTTP clients (a new connection each) ask /health; none may
              be refused; then every held connection must still be open (they answer the server's pings).

Usage: bench/livequery.py [--binary .build/release/roost] [--parts latency,throughput,memory,idle] [--json out.json]
"""
import argparse, http.client, json, os, resource, shutil, signal, socket, statistics, subprocess, sys, tempfile
import threading, time, urllib.request
from array import array

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
OUT = os.path.join(ROOT, "bench", "out")
HEADERS = {"X-Parse-Application-Id": "roost", "Content-Type": "application/json"}
TARGETS = {"latency_p99_ms": 20.0, "throughput_ratio": 0.80, "kb_per_connection": 16.0, "idle_connections": 10_000}


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def raise_descriptor_limit():
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    if soft < hard:
        resource.setrlimit(resource.RLIMIT_NOFILE, (hard, hard))
    return hard


def status_kb(pid, field):
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            if line.startswith(field + ":"):
                return int(line.split()[1])
    return 0


def cpu_ticks(pid):
    with open(f"/proc/{pid}/stat") as f:
        fields = f.read().rsplit(")", 1)[1].split()
    return int(fields[11]) + int(fields[12])


def wait_until_idle(pid, timeout=15):
    """Until the server is idle (as bench/run.py: dirty pages written out first)."""
    os.sync()
    deadline = time.time() + timeout
    while time.time() < deadline:
        before = cpu_ticks(pid)
        time.sleep(0.5)
        if cpu_ticks(pid) - before <= 2:
            return


def percentile(values, p):
    ordered = sorted(values)
    if not ordered:
        return float("nan")
    return ordered[min(len(ordered) - 1, int(round(p / 100 * (len(ordered) - 1))))]


class Server:
    def __init__(self, binary, extra_flags):
        self.data = tempfile.mkdtemp(prefix="roost-lqbench-")
        self.port = free_port()
        self.log = open(os.path.join(OUT, "livequery-roost.log"), "w")
        self.proc = subprocess.Popen([binary, "serve", "--port", str(self.port), "--data-dir", self.data,
                                      "--master-key", "bench-master",
                                      # 1,000 subscribers per source address: past the default LiveQuery cap (100).
                                      "--live-query-max-connections-per-ip", "0"] + extra_flags,
                                     stdout=subprocess.DEVNULL, stderr=self.log)
        self.base = f"http://127.0.0.1:{self.port}/parse"
        deadline = time.time() + 30
        while True:
            try:
                urllib.request.urlopen(self.base + "/health", timeout=1).read()
                break
            except Exception:
                if time.time() > deadline or self.proc.poll() is not None:
                    raise RuntimeError("roost did not come up; see bench/out/livequery-roost.log")
                time.sleep(0.1)
        self.post("/classes/Item", {"room": "setup", "k": -1})

    def post(self, path, body):
        request = urllib.request.Request(self.base + path, data=json.dumps(body).encode(), headers=HEADERS, method="POST")
        with urllib.request.urlopen(request, timeout=30) as response:
            return json.loads(response.read())

    def rss_kb(self):
        return status_kb(self.proc.pid, "VmRSS")

    def peak_kb(self):
        return status_kb(self.proc.pid, "VmHWM")

    def stop(self):
        self.proc.send_signal(signal.SIGTERM)
        try:
            self.proc.wait(timeout=20)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()
        shutil.rmtree(self.data, ignore_errors=True)


class Subscribers:
    """COUNT WebSockets held by one lqclient process, each with one subscription."""

    def __init__(self, client, port, count, mode, where=None, per_source=1000):
        self.out = tempfile.mktemp(prefix="lqrecords-", dir=OUT)
        subscribe = json.dumps({"op": "subscribe", "requestId": 1,
                                "query": {"className": "Item", "where": where or {"room": "bench"}}})
        started = time.time()
        self.proc = subprocess.Popen([client, str(port), str(count), str(per_source), mode, subscribe, self.out],
                                     stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
        line = self.proc.stdout.readline()
        if not line.startswith("ready"):
            self.proc.kill()
            raise RuntimeError(f"lqclient did not get {count} subscriptions (see its message above)")
        self.setup_seconds = time.time() - started

    def close(self):
        """Ends the client; returns (records as [(k, arrival)], connections the server had dropped)."""
        self.proc.stdin.close()
        _, records, dropped = self.proc.stdout.readline().split()
        self.proc.wait()
        pairs = array("d")
        if os.path.exists(self.out):
            with open(self.out, "rb") as f:
                pairs.frombytes(f.read())
            os.remove(self.out)
        return [(int(pairs[i]), pairs[i + 1]) for i in range(0, len(pairs), 2)], int(dropped)


def measure_latency(server, client, count, rate, seconds):
    subscribers = Subscribers(client, server.port, count, "record")
    connection = http.client.HTTPConnection("127.0.0.1", server.port, timeout=30)
    writes = int(rate * seconds)
    sent, replied = [0.0] * writes, [0.0] * writes
    # A second of warm-up writes (k < 0, not counted), then the measured ones, each at its scheduled moment.
    warmup = int(rate)
    ticks_before = cpu_ticks(server.proc.pid)
    start = time.monotonic() + 0.1
    for i in range(-warmup, writes):
        moment = start + (i + warmup) / rate
        pause = moment - time.monotonic()
        if pause > 0:
            time.sleep(pause)
        body = json.dumps({"room": "bench", "k": i, "title": "live"})
        before = time.monotonic()
        connection.request("POST", "/parse/classes/Item", body, HEADERS)
        response = connection.getresponse()
        response.read()
        after = time.monotonic()
        if response.status != 201:
            raise RuntimeError(f"create answered {response.status}")
        if i >= 0:
            sent[i], replied[i] = before, after
    # Until the server has sent every event (it is idle again).
    time.sleep(0.5)
    wait_until_idle(server.proc.pid, timeout=60)
    # CPU per delivered event, warm-up included: steadier than latency on a machine others share.
    cpu_us = (cpu_ticks(server.proc.pid) - ticks_before) / os.sysconf("SC_CLK_TCK") * 1e6 / ((writes + warmup) * count)
    records, dropped = subscribers.close()
    from_sent, from_reply = [], []
    for k, arrival in records:
        if 0 <= k < writes:
            from_sent.append((arrival - sent[k]) * 1000)
            from_reply.append((arrival - replied[k]) * 1000)
    expected = writes * count
    create_ms = [(replied[i] - sent[i]) * 1000 for i in range(writes)]
    return {
        "subscribers": count, "writes_per_s": rate, "writes": writes, "deliveries": len(from_sent),
        "expected_deliveries": expected, "dropped_connections": dropped, "setup_s": round(subscribers.setup_seconds, 2),
        "p50_ms": percentile(from_sent, 50), "p99_ms": percentile(from_sent, 99), "max_ms": max(from_sent, default=float("nan")),
        "p50_from_reply_ms": percentile(from_reply, 50), "p99_from_reply_ms": percentile(from_reply, 99),
        "create_p50_ms": percentile(create_ms, 50), "create_p99_ms": percentile(create_ms, 99),
        "server_cpu_us_per_event": cpu_us,
    }


def measure_ceiling(client, ceiling, count, rate, seconds):
    """The same fan-out from bench/lqceiling.c, which does nothing but send: this machine's floor."""
    port, rounds = free_port(), int(rate * seconds)
    starts_path = os.path.join(OUT, "lqceiling-starts")
    proc = subprocess.Popen([ceiling, str(port), str(count), str(rate), str(rounds), starts_path],
                            stdout=subprocess.PIPE, text=True)
    proc.stdout.readline()  # listening
    subscribers = Subscribers(client, port, count, "record")
    used = resource.getrusage(resource.RUSAGE_CHILDREN)
    proc.wait(timeout=seconds + 120)
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu_us = (after.ru_utime + after.ru_stime - used.ru_utime - used.ru_stime) * 1e6 / (rounds * count)
    time.sleep(0.5)
    records, _ = subscribers.close()
    starts = array("d")
    with open(starts_path, "rb") as f:
        starts.frombytes(f.read())
    latencies = [(arrival - starts[k]) * 1000 for k, arrival in records if 0 <= k < len(starts)]
    return {"subscribers": count, "events_per_s": rate, "rounds": rounds, "deliveries": len(latencies),
            "expected_deliveries": rounds * count, "p50_ms": percentile(latencies, 50), "p99_ms": percentile(latencies, 99),
            "max_ms": max(latencies, default=float("nan")), "cpu_us_per_event": cpu_us}


def wrk_creates(server, seconds):
    script = os.path.join(OUT, "livequery-create.lua")
    with open(script, "w") as f:
        f.write('wrk.method = "POST"\nwrk.body = \'{"room":"quiet","title":"hello","n":42,"done":false}\'\n'
                'wrk.headers["Content-Type"] = "application/json"\nwrk.headers["X-Parse-Application-Id"] = "roost"\n')
    output = subprocess.run(["wrk", "-t2", "-c16", f"-d{seconds}s", "-s", script, server.base + "/classes/Item"],
                            capture_output=True, text=True, check=True).stdout
    rps = float(output.split("Requests/sec:")[1].split()[0])
    if "Non-2xx" in output:
        raise RuntimeError("wrk got errors:\n" + output)
    return rps


def measure_throughput(server, client, count, rounds, seconds):
    without, with_ = [], []
    for r in range(rounds):
        for subscribed in ([False, True] if r % 2 == 0 else [True, False]):
            wait_until_idle(server.proc.pid)
            subscribers = Subscribers(client, server.port, count, "idle") if subscribed else None
            rps = wrk_creates(server, seconds)
            (with_ if subscribed else without).append(rps)
            if subscribers:
                subscribers.close()
    ratio = statistics.median(with_) / statistics.median(without)
    return {"subscribers": count, "rounds": rounds, "seconds": seconds, "without": without, "with": with_,
            "median_without": statistics.median(without), "median_with": statistics.median(with_), "ratio": ratio}


def measure_memory(server, client, count):
    # Warm-up: the first connections grow tables and thread caches once; those are not per connection.
    Subscribers(client, server.port, 50, "idle").close()
    time.sleep(1)
    before, peak_before = server.rss_kb(), server.peak_kb()
    subscribers = Subscribers(client, server.port, count, "idle")
    time.sleep(2)
    after, peak_after = server.rss_kb(), server.peak_kb()
    _, dropped = subscribers.close()
    return {"connections": count, "rss_before_kb": before, "rss_after_kb": after, "peak_before_kb": peak_before,
            "peak_after_kb": peak_after, "kb_per_connection": (after - before) / count,
            "peak_kb_per_connection": (peak_after - peak_before) / count, "dropped_connections": dropped}


def new_client_get(port):
    """One request on a new connection: (status or an error name, milliseconds)."""
    started = time.monotonic()
    try:
        connection = http.client.HTTPConnection("127.0.0.1", port, timeout=10)
        connection.request("GET", "/parse/health", headers={"Connection": "close"})
        response = connection.getresponse()
        response.read()
        connection.close()
        return response.status, (time.monotonic() - started) * 1000
    except Exception as error:
        return type(error).__name__, (time.monotonic() - started) * 1000


def measure_idle(server, client, count, requests, hold_seconds):
    before = server.rss_kb()
    subscribers = Subscribers(client, server.port, count, "idle")
    held_at = time.monotonic()
    answers = []
    for i in range(requests):
        answers.append(new_client_get(server.port))
        time.sleep(hold_seconds / requests / 2)
    # Held past the server's ping interval (10 s) at least once more: the idle sockets must still be open.
    time.sleep(max(0.0, hold_seconds - (time.monotonic() - held_at)))
    after = server.rss_kb()
    _, dropped = subscribers.close()
    statuses = {}
    for status, _ in answers:
        statuses[str(status)] = statuses.get(str(status), 0) + 1
    times = [ms for status, ms in answers if status == 200]
    return {"connections": count, "setup_s": round(subscribers.setup_seconds, 2), "held_s": hold_seconds,
            "requests": requests, "answered_200": statuses.get("200", 0), "statuses": statuses,
            "p50_ms": percentile(times, 50), "p99_ms": percentile(times, 99),
            "dropped_connections": dropped, "kb_per_connection": (after - before) / count,
            "rss_after_kb": after, "peak_kb": server.peak_kb()}


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--binary", default=os.path.join(ROOT, ".build", "release", "roost"))
    parser.add_argument("--parts", default="ceiling,latency,throughput,memory,idle")
    parser.add_argument("--subscribers", type=int, default=1000)
    parser.add_argument("--rate", type=float, default=100)
    parser.add_argument("--seconds", type=float, default=10, help="length of the latency run")
    parser.add_argument("--rounds", type=int, default=3, help="throughput rounds (each: one run without, one with)")
    parser.add_argument("--wrk-seconds", type=int, default=5)
    parser.add_argument("--memory-connections", type=int, default=1000)
    parser.add_argument("--idle-connections", type=int, default=10_000)
    parser.add_argument("--idle-requests", type=int, default=300)
    parser.add_argument("--hold-seconds", type=float, default=25)
    parser.add_argument("--server-flag", action="append", default=[], help="passed to roost serve (repeatable)")
    parser.add_argument("--json", help="also write the results here")
    args = parser.parse_args()
    os.makedirs(OUT, exist_ok=True)
    limit = raise_descriptor_limit()
    if limit < args.idle_connections + 1000:
        sys.exit(f"the descriptor hard limit ({limit}) is too low for {args.idle_connections} connections")
    client = os.path.join(OUT, "lqclient")
    ceiling = os.path.join(OUT, "lqceiling")
    subprocess.run(["cc", "-O2", "-Wall", "-o", client, os.path.join(ROOT, "bench", "lqclient.c")], check=True)
    subprocess.run(["cc", "-O2", "-Wall", "-o", ceiling, os.path.join(ROOT, "bench", "lqceiling.c")], check=True)
    parts = args.parts.split(",")
    results = {"binary": args.binary, "targets": TARGETS}
    if "ceiling" in parts:
        results["ceiling"] = measure_ceiling(client, ceiling, args.subscribers, args.rate, args.seconds)
        print(f"ceiling: {json.dumps(results['ceiling'])}", file=sys.stderr)
    # Each part on a fresh server, so one part's connections and data cannot weigh on another's figures.
    for part in ["latency", "throughput", "memory", "idle"]:
        if part not in parts:
            continue
        server = Server(args.binary, args.server_flag)
        try:
            if part == "latency":
                results[part] = measure_latency(server, client, args.subscribers, args.rate, args.seconds)
            elif part == "throughput":
                results[part] = measure_throughput(server, client, args.subscribers, args.rounds, args.wrk_seconds)
            elif part == "memory":
                results[part] = measure_memory(server, client, args.memory_connections)
            else:
                results[part] = measure_idle(server, client, args.idle_connections, args.idle_requests, args.hold_seconds)
        finally:
            server.stop()
        print(f"{part}: {json.dumps(results[part])}", file=sys.stderr)
    report(results)
    if args.json:
        with open(args.json, "w") as f:
            json.dump(results, f, indent=2)


def report(results):
    rows = []
    if "ceiling" in results:
        r = results["ceiling"]
        rows.append((f"fan-out ceiling (bench/lqceiling.c: sends only), {r['subscribers']} subscribers, {r['events_per_s']:.0f} events/s",
                     f"p50 {r['p50_ms']:.2f} ms, p99 {r['p99_ms']:.2f} ms, {r['deliveries']}/{r['expected_deliveries']} delivered, "
                     f"{r['cpu_us_per_event']:.1f} us CPU per event", "reference", True))
    if "latency" in results:
        r = results["latency"]
        complete = r["deliveries"] == r["expected_deliveries"]
        rows.append((f"delivery latency, {r['subscribers']} subscribers, {r['writes_per_s']:.0f} creates/s "
                     f"(from send; from reply p50 {r['p50_from_reply_ms']:.2f}, p99 {r['p99_from_reply_ms']:.2f} ms)",
                     f"p50 {r['p50_ms']:.2f} ms, p99 {r['p99_ms']:.2f} ms, {r['deliveries']}/{r['expected_deliveries']} delivered, "
                     f"{r['server_cpu_us_per_event']:.1f} us server CPU per event",
                     f"p99 <= {TARGETS['latency_p99_ms']:.0f} ms, all delivered",
                     r["p99_ms"] <= TARGETS["latency_p99_ms"] and complete))
    if "throughput" in results:
        r = results["throughput"]
        rows.append((f"creates/s with {r['subscribers']} subscribers / without (medians of {r['rounds']} rounds)",
                     f"{r['median_with']:.0f} / {r['median_without']:.0f} = {r['ratio'] * 100:.0f} %",
                     f">= {TARGETS['throughput_ratio'] * 100:.0f} %", r["ratio"] >= TARGETS["throughput_ratio"]))
    if "memory" in results:
        r = results["memory"]
        rows.append((f"server RSS per idle subscribed connection ({r['connections']}; peak {r['peak_kb_per_connection']:.1f} KB)",
                     f"{r['kb_per_connection']:.1f} KB", f"<= {TARGETS['kb_per_connection']:.0f} KB",
                     r["kb_per_connection"] <= TARGETS["kb_per_connection"] and r["dropped_connections"] == 0))
    if "idle" in results:
        r = results["idle"]
        ok = r["answered_200"] == r["requests"] and r["dropped_connections"] == 0
        rows.append((f"{r['connections']} idle connections held {r['held_s']:.0f} s; new HTTP clients answered "
                     f"(p50 {r['p50_ms']:.1f}, p99 {r['p99_ms']:.1f} ms; {r['kb_per_connection']:.1f} KB/conn)",
                     f"{r['answered_200']}/{r['requests']} answered, {r['dropped_connections']} dropped {r['statuses']}",
                     "all answered, none dropped", ok))
    width = max(len(row[0]) for row in rows)
    print(f"\n{'measure'.ljust(width)} | result | target | met")
    for name, value, target, met in rows:
        print(f"{name.ljust(width)} | {value} | {target} | {'-' if target == 'reference' else 'yes' if met else 'NO'}")
    print(json.dumps(results))


if __name__ == "__main__":
    main()
