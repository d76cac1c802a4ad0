#!/usr/bin/env python3
"""`$regex` at scale: a class of 100,000 strings, queried over HTTP with patterns that backtrack without
end and with an ordinary prefix, against one roost binary or two side by side (interleaved, same data).

    bench/regex.py --binary .build/release/roost [--baseline OLD_BINARY] [--objects 100000] [--rounds 5]

Reports each query's median wall time and, with a baseline, the ratio new / baseline.
Targets (issue 18): the catastrophic patterns answer within 1 s; the prefix regex is no slower than the baseline.
Only the standard library (Python 3.9+); loopback only.
"""
import argparse
import json
import os
import statistics
import sys
import time
import urllib.parse

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from attack import MASTER_KEY, Server  # noqa: E402  (the same way of starting a server)


def seed(server, count):
    """`count` strings: most "item N", every 100th a run of `a`s that nested quantifiers backtrack on."""
    for first in range(0, count, 50):
        requests = []
        for i in range(first, min(first + 50, count)):
            text = "a" * 40 + "!" if i % 100 == 99 else f"item {i}"
            requests.append({"method": "POST", "path": "/parse/classes/Word", "body": {"s": text}})
        status, _ = server.request("POST", "/batch", {"requests": requests})
        if status != 200:
            raise RuntimeError(f"seeding failed: {status}")


QUERIES = [
    ("catastrophic (a+)+$", {"s": {"$regex": "(a+)+$"}}, 1.0),
    ("catastrophic ^(a|aa)+$", {"s": {"$regex": "^(a|aa)+$"}}, 1.0),
    ("prefix ^item 4", {"s": {"$regex": "^item 4"}}, None),
    ("case-insensitive ITEM 12", {"s": {"$regex": "ITEM 12", "$options": "i"}}, None),
]


def timed(server, where):
    query = urllib.parse.urlencode({"where": json.dumps(where), "count": 1, "limit": 0})
    started = time.monotonic()
    status, body = server.request("GET", "/classes/Word?" + query, headers={"X-Parse-Master-Key": MASTER_KEY})
    outcome = body.get("count") if status == 200 else f"{status} {body.get('code') if isinstance(body, dict) else ''}"
    return time.monotonic() - started, outcome


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--binary", default=os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), ".build/release/roost"))
    parser.add_argument("--baseline", help="another roost binary to compare with")
    parser.add_argument("--objects", type=int, default=100_000)
    parser.add_argument("--rounds", type=int, default=5)
    options = parser.parse_args()

    binaries = {"roost": options.binary, **({"baseline": options.baseline} if options.baseline else {})}
    servers = {}
    for name, binary in binaries.items():
        servers[name] = Server(binary)
        started = time.monotonic()
        seed(servers[name], options.objects)
        print(f"{name}: seeded {options.objects} strings in {time.monotonic() - started:.1f} s ({binary})")

    times = {(name, label): [] for name in servers for label, _, _ in QUERIES}
    outcomes = {}
    for _ in range(options.rounds):
        for label, where, _ in QUERIES:
            for name, server in servers.items():  # Interleaved, so load on the machine hits both alike.
                seconds, outcome = timed(server, where)
                times[(name, label)].append(seconds)
                outcomes[(name, label)] = outcome

    failed = False
    print(f"\n{'query':28} {'binary':9} {'median':>9}  answer        verdict")
    for label, _, target in QUERIES:
        for name in servers:
            median = statistics.median(times[(name, label)])
            verdict = ""
            if name == "roost" and target is not None:
                verdict = f"≤ {target:.0f} s: " + ("met" if median <= target else "MISSED")
                failed |= median > target
            if name == "roost" and "baseline" in servers:
                ratio = median / statistics.median(times[("baseline", label)])
                verdict += f"{' ' if verdict else ''}{ratio:.2f} x baseline"
            print(f"{label:28} {name:9} {median * 1000:7.1f} ms  {str(outcomes[(name, label)]):12}  {verdict}")
    for server in servers.values():
        server.stop()
    sys.exit(1 if failed else 0)


if __name__ == "__main__":
    main()
