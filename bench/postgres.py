#!/usr/bin/env python3
"""Issue 21's benchmark, in one run: roost on SQLite (this build, and the build before the storage seam), roost on
PostgreSQL with one node and with two nodes behind nginx (round robin), and pgbench's select-only and insert rates on
the same PostgreSQL server as its ceiling.

Every server gets the same wrk load as bench/run.py (2 threads, 16 connections, DURATION s per workload), in rounds
(each workload on each server in turn, the median run kept: this machine is shared and noisy).

PostgreSQL runs on a durable cluster (fsync on) with synchronous_commit off: the durability roost's SQLite has
(WAL with synchronous=NORMAL: a commit survives the process crashing, the last ones may be lost if the machine
loses power; neither database is ever corrupted). pgbench runs with the same setting, 16 clients, 2 threads.

Usage: bench/postgres.sh [--duration 10] [--repeat 3] [--baseline REV | --no-baseline] [--only ...]
"""
import argparse, os, shutil, signal, subprocess, sys, tempfile, time
import urllib.parse

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import run  # bench/run.py: wrk, the Roost server class, seeding and workloads

ROOT, OUT = run.ROOT, run.OUT
CLUSTER = os.path.join(ROOT, "scripts", "postgres-cluster.sh")
WORKLOADS = ("create", "get", "query", "get-acl")
# The last commit before the storage seam (44f5eed): what "the seam costs nothing on SQLite" is measured against.
SEAMLESS = "9bd4aa2"


def psql(url, *statements):
    subprocess.run(["psql", "-X", "-q", "-v", "ON_ERROR_STOP=1", url] + [a for s in statements for a in ("-c", s)],
                   check=True, capture_output=True)


def database(cluster_url, name):
    """A fresh database on the cluster, with synchronous_commit off (see the module's doc); its URL."""
    psql(cluster_url, f"CREATE DATABASE {name}")
    url = cluster_url.rsplit("/", 1)[0] + "/" + name
    psql(url, f"ALTER DATABASE {name} SET synchronous_commit = off")
    return url


class RoostSQLite(run.Roost):
    """This build on SQLite, with only the workloads the PostgreSQL rows have."""
    name = "sqlite"

    def seed(self):
        ids = self.seed_class("Item", self.headers)
        user = run.http("POST", self.base + "/users", {"username": "bench", "password": "bench-password"}, self.headers)
        self.session = dict(self.headers, **{"X-Parse-Session-Token": user["sessionToken"]})
        self.acl_ids = self.seed_class("Owned", self.session, {user["objectId"]: {"read": True, "write": True}})
        return ids

    def workloads(self, ids):
        for workload, url, script in super().workloads(ids):
            if workload in WORKLOADS:
                yield workload, url, script


class RoostSeamless(RoostSQLite):
    """The build before the storage seam, on SQLite (built once into bench/out/seamless-REV)."""
    name = "sqlite-before-seam"
    revision = SEAMLESS

    def binary(self):
        source = os.path.join(OUT, f"seamless-{self.revision}")
        binary = os.path.join(source, ".build", "static", "release", "roost")
        if not os.path.exists(binary):
            if not os.path.exists(source):
                subprocess.run(["git", "-C", ROOT, "worktree", "add", "--detach", source, self.revision], check=True)
            print(f"building {self.revision} (once; minutes)...", file=sys.stderr, flush=True)
            # Linked as this build is (scripts/build-release.sh), so that the two differ only by their code.
            subprocess.run([os.path.join(ROOT, "scripts", "build-release.sh"), "--package-path", source,
                            "--scratch-path", os.path.join(source, ".build", "static"), "--product", "roost"], check=True)
        return binary


class RoostPostgres(RoostSQLite):
    """This build on PostgreSQL, one node."""
    name = "postgres-1-node"
    nodes = 1

    def __init__(self, cluster_url):
        self.cluster_url = cluster_url

    def start(self, data):
        url = database(self.cluster_url, self.name.replace("-", "_"))
        self.nodes_started = []
        for node in range(self.nodes):
            server = run.Roost()
            server.flags = ["--database-url", url]
            server.name = f"{self.name}-{node}"
            os.makedirs(os.path.join(data, str(node)))
            server.start(os.path.join(data, str(node)))
            self.nodes_started.append(server)
        first = self.nodes_started[0]
        self.proc, self.base, self.headers, self.master = first.proc, first.base, first.headers, first.master
        self.port = first.port


class RoostPostgresTwoNodes(RoostPostgres):
    """Two nodes on one PostgreSQL database behind nginx, round robin (wrk talks to nginx)."""
    name = "postgres-2-nodes"
    nodes = 2

    def start(self, data):
        super().start(data)
        self.nginx_dir = tempfile.mkdtemp(prefix="bench-nginx-")
        port = run.free_port()
        upstreams = "".join(f"        server 127.0.0.1:{node.port};\n" for node in self.nodes_started)
        config = os.path.join(self.nginx_dir, "nginx.conf")
        with open(config, "w") as f:
            f.write(f"""worker_processes 1;
daemon off;
pid {self.nginx_dir}/nginx.pid;
error_log {self.nginx_dir}/error.log warn;
events {{ worker_connections 1024; }}
http {{
    access_log off;
    client_body_temp_path {self.nginx_dir}/body;
    proxy_temp_path {self.nginx_dir}/proxy;
    upstream roost {{
{upstreams}        keepalive 32;
    }}
    server {{
        listen 127.0.0.1:{port};
        client_max_body_size 20m;
        location / {{
            proxy_pass http://roost;
            proxy_http_version 1.1;
            proxy_set_header Connection "";
            proxy_set_header Host $host;
            proxy_set_header X-Forwarded-For $remote_addr;
        }}
    }}
}}
""")
        self.nginx = subprocess.Popen(["nginx", "-p", self.nginx_dir, "-c", config], stderr=subprocess.DEVNULL)
        self.base = f"http://127.0.0.1:{port}/parse"
        run.wait_until_up(self.base + "/health")

    def pids(self):
        return [node.proc.pid for node in self.nodes_started] + [self.nginx.pid]


class PgBench:
    """pgbench on the same cluster: select-only (its built-in -S, by primary key) and a jsonb insert per transaction."""
    name = "pgbench"

    def __init__(self, cluster_url):
        self.cluster_url = cluster_url

    def start(self, data):
        self.url = database(self.cluster_url, "pgbench")
        subprocess.run(["pgbench", "-i", "-q", "-s", "1", self.url], check=True, capture_output=True)
        psql(self.url, "CREATE TABLE bench_insert (id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY, data jsonb NOT NULL)")
        self.insert = os.path.join(OUT, "pgbench-insert.sql")
        with open(self.insert, "w") as f:
            f.write("""INSERT INTO bench_insert (data) VALUES ('{"title": "hello", "n": 42, "done": false}');\n""")
        self.proc = None

    def measure(self, workload, duration):
        args = ["pgbench", "-n", "-M", "prepared", "-c", "16", "-j", "2", "-T", str(duration)]
        args += ["-S"] if workload == "select" else ["-f", self.insert]
        output = subprocess.run(args + [self.url], check=True, capture_output=True, text=True).stdout
        tps = float(next(line for line in output.splitlines() if line.startswith("tps")).split("=")[1].split()[0])
        return {"rps": tps, "p50": float("nan"), "p99": float("nan"), "non2xx": 0, "steal": float("nan")}


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--duration", type=int, default=10)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--baseline", default=SEAMLESS, help="the SQLite build to compare with (a git revision)")
    parser.add_argument("--no-baseline", action="store_true", help="skip the build before the seam")
    args = parser.parse_args()
    os.makedirs(OUT, exist_ok=True)
    cluster_dir = tempfile.mktemp(prefix="bench-pg-")
    cluster_url = subprocess.run(["bash", CLUSTER, "start", cluster_dir, "--durable"], check=True, capture_output=True,
                                 text=True).stdout.strip()
    RoostSeamless.revision = args.baseline
    servers = [RoostSQLite()] + ([] if args.no_baseline else [RoostSeamless()])
    servers += [RoostPostgres(cluster_url), RoostPostgresTwoNodes(cluster_url)]
    pgbench = PgBench(cluster_url)
    data_dirs, scripts, runs = [], {}, {}
    try:
        for server in servers:
            data = tempfile.mkdtemp(prefix=f"bench-{server.name}-")
            data_dirs.append(data)
            server.start(data)
            scripts[server.name] = {w: (url, script) for w, url, script in server.workloads(server.seed())}
        pgbench.start(None)
        pids = lambda: [p for s in servers for p in (s.pids() if hasattr(s, "pids") else [s.proc.pid])]
        for _ in range(args.repeat):
            for workload in WORKLOADS:
                for server in servers:
                    run.wait_until_idle(pids())
                    result = run.wrk(*scripts[server.name][workload], args.duration)
                    runs.setdefault((server.name, workload), []).append(result)
                    print(f"  ({server.name} {workload}: {result['rps']:.0f} req/s, p99 {result['p99']:.2f} ms)", file=sys.stderr, flush=True)
            for workload in ("select", "insert"):
                run.wait_until_idle(pids())
                result = pgbench.measure(workload, args.duration)
                runs.setdefault(("pgbench", workload), []).append(result)
                print(f"  (pgbench {workload}: {result['rps']:.0f} tps)", file=sys.stderr, flush=True)
        results = {key: sorted(values, key=lambda r: r["rps"])[len(values) // 2] for key, values in runs.items()}
        for server in servers:
            rss = max(run.peak_rss_mb(p) for p in ([n.proc.pid for n in server.nodes_started] if hasattr(server, "nodes_started") else [server.proc.pid]))
            for workload in WORKLOADS:
                r = results[(server.name, workload)]
                every = "/".join(f"{x['rps']:.0f}" for x in runs[(server.name, workload)])
                print(f"{server.name:<19} {workload:<8} {r['rps']:>8.0f} req/s  p50 {r['p50']:6.2f} ms  p99 {r['p99']:6.2f} ms  "
                      f"(runs {every})  peak RSS per node {rss:5.1f} MB  non-2xx {r['non2xx']}", flush=True)
        for workload in ("select", "insert"):
            every = "/".join(f"{x['rps']:.0f}" for x in runs[("pgbench", workload)])
            print(f"{'pgbench':<19} {workload:<8} {results[('pgbench', workload)]['rps']:>8.0f} tps  (runs {every})", flush=True)
    finally:
        for server in servers:
            for node in getattr(server, "nodes_started", [server]):
                if getattr(node, "proc", None):
                    node.proc.send_signal(signal.SIGTERM)
                    node.proc.wait(timeout=30)
            if getattr(server, "nginx", None):
                server.nginx.send_signal(signal.SIGQUIT)
                server.nginx.wait(timeout=30)
                shutil.rmtree(server.nginx_dir, ignore_errors=True)
        for data in data_dirs:
            shutil.rmtree(data, ignore_errors=True)
        subprocess.run(["bash", CLUSTER, "stop", cluster_dir], check=False)

    def ratio(a, b):
        return results[a]["rps"] / results[b]["rps"] if a in results and b in results else float("nan")
    print()
    for workload in WORKLOADS:
        print(f"SQLite after / before the seam, {workload}: {ratio(('sqlite', workload), ('sqlite-before-seam', workload)):.2f}x (target: no slower)")
    for workload in ("create", "get"):
        print(f"PostgreSQL 1 node / SQLite, {workload}: {ratio(('postgres-1-node', workload), ('sqlite', workload)) * 100:.0f}% (target >= 50%)")
    print(f"PostgreSQL 1 node create / pgbench insert: {ratio(('postgres-1-node', 'create'), ('pgbench', 'insert')) * 100:.0f}% (target >= 40%)")
    print(f"PostgreSQL 1 node get / pgbench select:    {ratio(('postgres-1-node', 'get'), ('pgbench', 'select')) * 100:.0f}% (target >= 40%)")
    for workload in WORKLOADS:
        print(f"PostgreSQL 2 nodes / 1 node, {workload}: {ratio(('postgres-2-nodes', workload), ('postgres-1-node', workload)):.2f}x")



if __name__ == "__main__":
    main()
