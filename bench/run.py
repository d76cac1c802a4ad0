#!/usr/bin/env python3
"""Side-by-side HTTP benchmark: the libmicrohttpd ceiling, PocketBase and roost, in one run.

Each server gets a fresh data dir and the same wrk load (2 threads, 16 connections, DURATION s
per workload). Prints requests/s, p50, p99, the server's peak resident memory and the CPU steal
during each run (time a shared host gave to other guests), then the ratios the issues set as targets.
Usage: bench/run.py [--duration 10] [--repeat 1] [--only roost,pocketbase,ceiling] [--workloads create,get,...]

`roost-noauto` is the same binary with --no-auto-index (roost as it was before automatic indexes: the hot path
differs by one relaxed atomic load): its `query-noindex` is the scan every query paid before any index exists.
"""
import argparse, json, os, random, re, shutil, signal, socket, subprocess, sys, tempfile, time
import urllib.request

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
OUT = os.path.join(ROOT, "bench", "out")
OBJECTS = 10_000


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def http(method, url, body=None, headers=None):
    data = json.dumps(body).encode() if body is not None else None
    request = urllib.request.Request(url, data=data, method=method, headers=headers or {})
    if data is not None:
        request.add_header("Content-Type", "application/json")
    with urllib.request.urlopen(request, timeout=30) as response:
        return json.loads(response.read() or b"null")


def wait_until_up(url, timeout=30):
    deadline = time.time() + timeout
    while time.time() < deadline:
        try:
            urllib.request.urlopen(url, timeout=1).read()
            return
        except Exception:
            time.sleep(0.1)
    raise RuntimeError("server did not come up: " + url)


def status_mb(pid, field):
    """A memory figure of /proc/PID/status (VmHWM, VmRSS), in MB."""
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            if line.startswith(field + ":"):
                return int(line.split()[1]) / 1024
    return float("nan")


def peak_rss_mb(pid):
    return status_mb(pid, "VmHWM")


def cpu_ticks(pid):
    with open(f"/proc/{pid}/stat") as f:
        fields = f.read().rsplit(")", 1)[1].split()
    return int(fields[11]) + int(fields[12])  # utime + stime


def wait_until_idle(pids, timeout=15):
    """Waits until no server is still busy after a run (a checkpoint, Go's GC), so it cannot slow the next one.
    Dirty pages are written out first: left to the kernel, a create run's writes reach the disk up to 30 s
    later, in the middle of another server's run."""
    os.sync()
    deadline = time.time() + timeout
    while time.time() < deadline:
        before = [cpu_ticks(pid) for pid in pids]
        time.sleep(0.5)
        busy = [cpu_ticks(pid) - b for pid, b in zip(pids, before)]
        if max(busy, default=0) <= 2:  # At most 2 ticks (20 ms) of CPU in half a second.
            return


def cpu_times():
    """The machine's CPU time so far: (steal, total) in ticks, from /proc/stat's first line."""
    with open("/proc/stat") as f:
        fields = [int(v) for v in f.readline().split()[1:9]]  # user nice system idle iowait irq softirq steal
    return fields[7], sum(fields)


def wrk(url, script, duration):
    args = ["wrk", "-t2", "-c16", f"-d{duration}s", "--latency", "-s", script, url]
    steal_before, total_before = cpu_times()
    output = subprocess.run(args, capture_output=True, text=True, check=True).stdout
    steal_after, total_after = cpu_times()
    # Time the hypervisor gave to other guests while this VM wanted the CPU: on a shared host it
    # inflates latencies (p99 above all) whatever the server does, so every run reports it.
    steal = 100 * (steal_after - steal_before) / max(total_after - total_before, 1)
    rps = float(re.search(r"Requests/sec:\s+([\d.]+)", output).group(1))
    def percentile(p):
        m = re.search(rf"^\s+{p}%\s+([\d.]+)(us|ms|s)\s*$", output, re.M)
        value, unit = float(m.group(1)), m.group(2)
        return value / 1000 if unit == "us" else value * 1000 if unit == "s" else value
    errors = re.search(r"Non-2xx or 3xx responses: (\d+)", output)
    return {"rps": rps, "p50": percentile(50), "p99": percentile(99), "non2xx": int(errors.group(1)) if errors else 0,
            "steal": steal}


def lua(name, text):
    path = os.path.join(OUT, name)
    with open(path, "w") as f:
        f.write(text)
    return path


def post_script(name, path, body, headers):
    header_lines = "".join(f'wrk.headers["{k}"] = "{v}"\n' for k, v in headers.items())
    return lua(name, f'wrk.method = "POST"\nwrk.body = {json.dumps(json.dumps(body))}\n'
                     f'wrk.headers["Content-Type"] = "application/json"\n{header_lines}')


def get_script(name, paths, headers):
    ids = os.path.join(OUT, name + ".paths")
    with open(ids, "w") as f:
        f.write("\n".join(paths))
    header_lines = "".join(f'wrk.headers["{k}"] = "{v}"\n' for k, v in headers.items())
    return lua(name, header_lines + f"""
local paths = {{}}
for line in io.lines("{ids}") do paths[#paths + 1] = line end
math.randomseed(os.time())
request = function() return wrk.format("GET", paths[math.random(#paths)]) end
""")


WIDE_FIELDS = 20  # Fields of the classes that creates with 0, 5, 10 (the default bound) and 20 automatic indexes go to.
AUTOMATIC_COUNTS = (0, 5, 10, 20)


class Roost:
    name = "roost"
    flags = []
    # The wide classes need 20 automatic indexes on one class (the default bound is 10).
    environment = {"ROOST_TEST_AUTO_INDEX_MAX_PER_CLASS": str(WIDE_FIELDS)}

    def binary(self):
        return os.path.join(ROOT, ".build", "release", "roost")

    def start(self, data):
        self.port = free_port()
        self.proc = subprocess.Popen([self.binary(), "serve", "--port", str(self.port), "--data-dir", data,
                                      "--master-key", "bench-master", "--log-level", os.environ.get("ROOST_LOG_LEVEL", "info")] + self.flags,
                                     env=dict(os.environ, **self.environment),
                                     stdout=subprocess.DEVNULL, stderr=open(os.path.join(OUT, f"{self.name}.log"), "w"))
        self.base = f"http://127.0.0.1:{self.port}/parse"
        wait_until_up(self.base + "/health")
        self.headers = {"X-Parse-Application-Id": "roost"}
        self.master = dict(self.headers, **{"X-Parse-Master-Key": "bench-master"})

    def seed_class(self, class_name, headers, acl=None, index=True, count=OBJECTS, body=None):
        ids = []
        for start in range(0, count, 50):
            requests = [{"method": "POST", "path": f"/parse/classes/{class_name}",
                         "body": dict(body(i) if body else {"title": f"item {i}", "n": random.randrange(OBJECTS), "done": i % 2 == 0},
                                      **({"ACL": acl} if acl else {}))}
                        for i in range(start, min(start + 50, count))]
            for result in http("POST", self.base + "/batch", {"requests": requests}, headers):
                ids.append(result["success"]["objectId"])
        if index:
            # As PocketBase gets an index on n, so does roost (declared through the schema API, as in Parse).
            http("PUT", f"{self.base}/schemas/{class_name}", {"indexes": {"n_1": {"n": 1}}}, self.master)
        return ids

    def wide_body(self, i):
        return dict({f"f{k}": random.randrange(OBJECTS) for k in range(WIDE_FIELDS)}, title=f"item {i}")

    def seed_wide(self, class_name, automatic):
        """1,000 objects (the least a class needs for automatic indexes), then queries on `automatic` of its fields
        until each has its automatic index."""
        self.seed_class(class_name, self.headers, index=False, count=1000, body=self.wide_body)
        for k in range(automatic):
            where = urllib.request.quote(json.dumps({f"f{k}": {"$lt": 100}}), safe="")
            for _ in range(3):
                http("GET", f"{self.base}/classes/{class_name}?where={where}&limit=1", headers=self.headers)
        deadline = time.time() + 60
        while time.time() < deadline:
            indexes = http("GET", f"{self.base}/schemas/{class_name}", headers=self.master).get("indexes", {})
            if len([name for name in indexes if name.startswith("_auto_")]) >= automatic:
                return
            time.sleep(0.2)
        raise RuntimeError(f"{class_name}: {automatic} automatic indexes did not appear")

    def seed(self):
        ids = self.seed_class("Item", self.headers)
        # The same data with no index declared: what a Parse app that never declared one queries.
        self.seed_class("Plain", self.headers, index=False)
        for automatic in AUTOMATIC_COUNTS:
            self.seed_wide(f"Wide{automatic}", automatic)
        # The same data owned by one user, with per-object ACLs, read with that user's session.
        start = time.time()
        user = http("POST", self.base + "/users", {"username": "bench", "password": "bench-password"}, self.headers)
        self.hash_ms = (time.time() - start) * 1000
        self.session = dict(self.headers, **{"X-Parse-Session-Token": user["sessionToken"]})
        self.acl_ids = self.seed_class("Owned", self.session, {user["objectId"]: {"read": True, "write": True}})
        return ids

    def workloads(self, ids):
        body = {"title": "hello", "n": 42, "done": False}
        yield "create", self.base + "/classes/Item", post_script(f"{self.name}-create.lua", "/parse/classes/Item", body, self.headers)
        yield "get", self.base, get_script(f"{self.name}-get.lua", [f"/parse/classes/Item/{i}" for i in ids], self.headers)
        queries = [urllib.request.quote(json.dumps({"n": {"$lt": random.randrange(OBJECTS)}}), safe="") for _ in range(1000)]
        yield "query", self.base, get_script(f"{self.name}-query.lua", [f"/parse/classes/Item?where={q}&order=n&limit=20" for q in queries], self.headers)
        yield "get-acl", self.base, get_script(f"{self.name}-get-acl.lua", [f"/parse/classes/Owned/{i}" for i in self.acl_ids], self.session)
        yield "query-acl", self.base, get_script(f"{self.name}-query-acl.lua", [f"/parse/classes/Owned?where={q}&order=n&limit=20" for q in queries], self.session)
        yield "login", self.base, get_script(f"{self.name}-login.lua", ["/parse/login?username=bench&password=bench-password"], self.headers)
        yield "query-noindex", self.base, get_script(f"{self.name}-query-noindex.lua", [f"/parse/classes/Plain?where={q}&order=n&limit=20" for q in queries], self.headers)
        for automatic in AUTOMATIC_COUNTS:
            yield (f"create-auto{automatic}", self.base + f"/classes/Wide{automatic}",
                   post_script(f"{self.name}-create-wide{automatic}.lua", "", self.wide_body(0), self.headers))


class RoostNoAuto(Roost):
    """The same binary with --no-auto-index: roost before automatic indexes (see the module's doc)."""
    name = "roost-noauto"
    flags = ["--no-auto-index"]

    def seed(self):
        ids = self.seed_class("Item", self.headers)
        self.seed_class("Plain", self.headers, index=False)
        start = time.time()
        user = http("POST", self.base + "/users", {"username": "bench", "password": "bench-password"}, self.headers)
        self.session = dict(self.headers, **{"X-Parse-Session-Token": user["sessionToken"]})
        self.acl_ids = self.seed_class("Owned", self.session, {user["objectId"]: {"read": True, "write": True}})
        return ids

    def workloads(self, ids):
        for workload, url, script in super().workloads(ids):
            if workload in ("create", "get", "query", "query-acl", "query-noindex"):
                yield workload, url, script


class PocketBase:
    name = "pocketbase"

    def start(self, data):
        self.port = free_port()
        binary = shutil.which("pocketbase", path=os.path.join(OUT, "venv", "bin")) or "pocketbase"
        # Migrations stay inside the fresh data dir (PocketBase writes them beside it by default).
        flags = ["--dir", data, "--migrationsDir", os.path.join(data, "pb_migrations"), "--automigrate=false"]
        subprocess.run([binary, "superuser", "upsert", "bench@example.com", "bench-password-123"] + flags,
                       check=True, capture_output=True)
        self.proc = subprocess.Popen([binary, "serve", "--http", f"127.0.0.1:{self.port}"] + flags,
                                     stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        self.base = f"http://127.0.0.1:{self.port}"
        wait_until_up(self.base + "/api/health")
        token = http("POST", self.base + "/api/collections/_superusers/auth-with-password",
                     {"identity": "bench@example.com", "password": "bench-password-123"})["token"]
        admin = {"Authorization": token}
        # Request logs off: PocketBase's fastest setting.
        http("PATCH", self.base + "/api/settings", {"logs": {"maxDays": 0}}, admin)
        http("POST", self.base + "/api/collections", {
            "name": "items", "type": "base", "listRule": "", "viewRule": "", "createRule": "",
            "fields": [{"name": "title", "type": "text"}, {"name": "n", "type": "number"}, {"name": "done", "type": "bool"}],
            "indexes": ["CREATE INDEX idx_items_n ON items (n)"],
        }, admin)
        # The same collection with no index: PocketBase's typed columns, scanned.
        http("POST", self.base + "/api/collections", {
            "name": "plain", "type": "base", "listRule": "", "viewRule": "", "createRule": "",
            "fields": [{"name": "title", "type": "text"}, {"name": "n", "type": "number"}, {"name": "done", "type": "bool"}],
        }, admin)
        self.headers = {}

    def seed(self):
        for i in range(OBJECTS):
            http("POST", self.base + "/api/collections/plain/records", {"title": f"item {i}", "n": random.randrange(OBJECTS), "done": i % 2 == 0})
        return [http("POST", self.base + "/api/collections/items/records",
                     {"title": f"item {i}", "n": random.randrange(OBJECTS), "done": i % 2 == 0})["id"]
                for i in range(OBJECTS)]

    def workloads(self, ids):
        body = {"title": "hello", "n": 42, "done": False}
        yield "create", self.base + "/api/collections/items/records", post_script("pb-create.lua", "", body, {})
        yield "get", self.base, get_script("pb-get.lua", [f"/api/collections/items/records/{i}" for i in ids], {})
        filters = [urllib.request.quote(f"n<{random.randrange(OBJECTS)}", safe="") for _ in range(1000)]
        yield "query", self.base, get_script("pb-query.lua", [f"/api/collections/items/records?filter={f}&sort=n&perPage=20&skipTotal=1" for f in filters], {})
        yield "query-noindex", self.base, get_script("pb-query-noindex.lua", [f"/api/collections/plain/records?filter={f}&sort=n&perPage=20&skipTotal=1" for f in filters], {})


class Ceiling:
    name = "ceiling"

    def start(self, data):
        self.port = free_port()
        binary = os.path.join(OUT, "ceiling")
        subprocess.run(["cc", "-O2", "-o", binary, os.path.join(ROOT, "bench", "ceiling.c"), "-lmicrohttpd"], check=True)
        self.proc = subprocess.Popen([binary, str(self.port), "4"], stdout=subprocess.DEVNULL)
        self.base = f"http://127.0.0.1:{self.port}"
        wait_until_up(self.base + "/")

    def seed(self):
        return []

    def workloads(self, ids):
        yield "get", self.base, get_script("ceiling-get.lua", ["/fixed"], {})


def queries_before_index(log, class_name, field):
    """How many queries of `class_name` roost answered before its automatic index on `field` existed (its log at info)."""
    try:
        lines = open(log).read().splitlines()
    except OSError:
        return None
    built = next((i for i, line in enumerate(lines) if f"automatic index on {class_name}.{field} built" in line), None)
    if built is None:
        return None
    return sum(1 for line in lines[:built] if f"GET /parse/classes/{class_name}?" in line or f"GET /parse/classes/{class_name} " in line)


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--duration", type=int, default=10)
    parser.add_argument("--only", default="ceiling,pocketbase,roost")
    parser.add_argument("--workloads", default="", help="comma-separated subset (default: all)")
    parser.add_argument("--repeat", type=int, default=1,
                        help="N rounds over every workload and server; each keeps its median run (by req/s): this machine is shared and noisy")
    args = parser.parse_args()
    os.makedirs(OUT, exist_ok=True)
    servers = {"ceiling": Ceiling, "pocketbase": PocketBase, "roost": Roost, "roost-noauto": RoostNoAuto}
    # All servers are started and seeded first, then measured in rounds, one workload at a time on
    # each server in turn: a slow minute on this shared machine then hits every server alike, so
    # the ratios compare like with like (one server after the other skewed them by up to 20 %).
    running = []
    try:
        for name in args.only.split(","):
            server = servers[name]()
            data = tempfile.mkdtemp(prefix=f"bench-{name}-")
            running.append((name, server, data))
            server.start(data)
            scripts = {workload: (url, script) for workload, url, script in server.workloads(server.seed())
                       if not args.workloads or workload in args.workloads.split(",")}
            running[-1] = (name, server, data, scripts)
        order = []
        for _, _, _, scripts in running:
            order += [workload for workload in scripts if workload not in order]
        runs = {}
        for _ in range(args.repeat):
            for workload in order:
                for name, server, _, scripts in running:
                    if workload in scripts:
                        wait_until_idle([entry[1].proc.pid for entry in running])
                        run = wrk(*scripts[workload], args.duration)
                        runs.setdefault((name, workload), []).append(run)
                        print(f"  ({name} {workload}: {run['rps']:.0f} req/s, p99 {run['p99']:.2f} ms, CPU steal {run['steal']:.0f}%)",
                              file=sys.stderr, flush=True)
        results = {}
        for name, server, _, scripts in running:
            rss = peak_rss_mb(server.proc.pid)  # The high-water mark over the whole run.
            for workload in scripts:
                ordered = sorted(runs[(name, workload)], key=lambda r: r["rps"])
                result = dict(ordered[len(ordered) // 2], rss=rss)
                results[(name, workload)] = result
                # The median run's p99 alone hides how the tail moved between rounds: every run's is shown too.
                every_p99 = "/".join(f"{r['p99']:.2f}" for r in runs[(name, workload)])
                every_steal = "/".join(f"{r['steal']:.0f}" for r in runs[(name, workload)])
                print(f"{name:<11} {workload:<7} {result['rps']:>9.0f} req/s  p50 {result['p50']:6.2f} ms  "
                      f"p99 {result['p99']:6.2f} ms (runs {every_p99})  peak RSS {result['rss']:6.1f} MB  "
                      f"non-2xx {result['non2xx']}  steal % {every_steal}", flush=True)
    finally:
        for entry in running:
            server, data = entry[1], entry[2]
            if getattr(server, "proc", None):
                server.proc.send_signal(signal.SIGTERM)
                server.proc.wait(timeout=30)
            shutil.rmtree(data, ignore_errors=True)

    def ratio(a, b):
        return results[a]["rps"] / results[b]["rps"] if a in results and b in results else float("nan")
    print()
    print(f"roost/pocketbase create: {ratio(('roost', 'create'), ('pocketbase', 'create')):.2f}x (target >= 2)")
    print(f"roost/pocketbase get:    {ratio(('roost', 'get'), ('pocketbase', 'get')):.2f}x (target >= 2)")
    print(f"roost/pocketbase query:  {ratio(('roost', 'query'), ('pocketbase', 'query')):.2f}x (target >= 2)")
    print(f"roost get / ceiling:     {ratio(('roost', 'get'), ('ceiling', 'get')) * 100:.0f}% (target >= 25%)")
    print(f"roost query / roost get: {ratio(('roost', 'query'), ('roost', 'get')) * 100:.0f}% (target >= 40%)")
    print(f"roost get with session + ACLs / get:     {ratio(('roost', 'get-acl'), ('roost', 'get')) * 100:.0f}% (target >= 80%)")
    print(f"roost query with session + ACLs / query: {ratio(('roost', 'query-acl'), ('roost', 'query')) * 100:.0f}% (target >= 80%)")
    print(f"roost/pocketbase query, no index declared, warm:            {ratio(('roost', 'query-noindex'), ('pocketbase', 'query-noindex')):.2f}x (target >= 3)")
    print(f"roost/pocketbase query, no index declared, before any index: {ratio(('roost-noauto', 'query-noindex'), ('pocketbase', 'query-noindex')):.2f}x (target >= 1; --no-auto-index)")
    scanned = queries_before_index(os.path.join(OUT, "roost.log"), "Plain", "n")
    if scanned is not None:
        print(f"roost query, no index declared: {scanned} queries scanned Plain before its automatic index on n was built")
    if ("roost", "query-noindex") in runs:
        first = runs[("roost", "query-noindex")][0]
        print(f"roost query, no index declared, first round (cold: the first queries scan): {first['rps']:.0f} req/s, "
              f"{first['rps'] / results[('pocketbase', 'query-noindex')]['rps'] if ('pocketbase', 'query-noindex') in results else float('nan'):.2f}x PocketBase")
    for automatic in AUTOMATIC_COUNTS:
        print(f"roost create with {automatic:>2} automatic indexes / pocketbase create: "
              f"{ratio(('roost', f'create-auto{automatic}'), ('pocketbase', 'create')):.2f}x (target >= 3)")
    for workload in ("create", "get", "query", "query-acl"):
        print(f"roost / roost --no-auto-index, {workload}: {ratio(('roost', workload), ('roost-noauto', workload)):.2f}x (target: no slower)")
    if ("roost", "login") in results:
        print(f"roost login: {results[('roost', 'login')]['rps']:.0f} req/s on 2 cores (PBKDF2-SHA256, 600,000 iterations)")


if __name__ == "__main__":
    main()
