#!/usr/bin/env python3
"""Drives Roost's LiveQuery WebSocket with a real client library (Python's `websockets`, Debian's
python3-websockets) and with raw sockets, for LiveQueryWebSocketTests. Each scenario prints one JSON
line with what it saw; the Swift test decides whether that is right.

usage: websocket_probe.py <scenario> <port> [server pid]"""
import asyncio
import base64
import json
import os
import socket
import struct
import sys

import websockets

APP_ID = "test-app"


def url(port, path="/parse"):
    return f"ws://127.0.0.1:{port}{path}"


async def protocol(port):
    """A whole conversation, on /parse and on /: every answer, in order."""
    seen = []
    for path in ("/parse", "/"):
        async with websockets.connect(url(port, path)) as ws:
            for message in (
                {"op": "subscribe", "requestId": 1, "query": {"className": "A", "where": {}}},  # before connect: 2
                {"op": "connect", "applicationId": "wrong"},  # 4
                {"op": "connect", "applicationId": APP_ID, "extra": 1},  # 1, unknown field
                {"op": "connect"},  # 1, missing applicationId
                {"op": "connect", "applicationId": APP_ID, "installationId": "inst-1"},
                {"op": "subscribe", "requestId": 1, "query": {"className": "A", "where": {"n": {"$gt": 1}}, "fields": ["n"]}},
                {"op": "subscribe", "requestId": 2, "query": {"className": "A", "where": {}, "keys": []}},  # 1
                {"op": "update", "requestId": 1, "query": {"className": "A", "where": {"n": 2}}},
                {"op": "unsubscribe", "requestId": 1},
                {"op": "unsubscribe", "requestId": 1},  # 2, no such subscription
                {"op": "query", "requestId": 3},  # 1, not an op parse-server's schema knows
            ):
                await ws.send(json.dumps(message))
                seen.append(json.loads(await ws.recv()))
            await ws.send("not json")  # ignored, as parse-server does
            await ws.send(json.dumps({"op": "connect", "applicationId": APP_ID, "sessionToken": "r:nope"}))
            seen.append(json.loads(await ws.recv()))
    print(json.dumps(seen))


async def fragmented(port):
    """A message sent in three fragments arrives whole; pings between fragments are answered."""
    async with websockets.connect(url(port)) as ws:
        text = json.dumps({"op": "connect", "applicationId": APP_ID, "installationId": "x" * 3000})
        await ws.send([text[:10], text[10:2000], text[2000:]])
        reply = json.loads(await ws.recv())
        pong = await ws.ping(b"hello")
        await asyncio.wait_for(pong, 5)
        print(json.dumps({"op": reply.get("op"), "installationId": len(reply.get("installationId", "")), "pong": True}))


async def oversized(port):
    """A message over 64 KB closes the socket with 1009; a new socket still works."""
    code = None
    async with websockets.connect(url(port), max_size=None) as ws:
        await ws.send("x" * (70 * 1024))
        try:
            await ws.recv()
        except websockets.exceptions.ConnectionClosed as closed:
            code = closed.rcvd.code if closed.rcvd else None
    async with websockets.connect(url(port)) as ws:
        await ws.send(json.dumps({"op": "connect", "applicationId": APP_ID}))
        after = json.loads(await ws.recv())["op"]
    print(json.dumps({"code": code, "after": after}))


def raw_upgrade(port, path="/parse"):
    """A raw socket after a hand-made handshake (for what a library will not send), and the 101 head."""
    sock = socket.create_connection(("127.0.0.1", port), timeout=10)
    key = base64.b64encode(os.urandom(16)).decode()
    sock.sendall((f"GET {path} HTTP/1.1\r\nHost: 127.0.0.1\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
                  f"Sec-WebSocket-Key: {key}\r\nSec-WebSocket-Version: 13\r\n\r\n").encode())
    head = b""
    while b"\r\n\r\n" not in head:
        chunk = sock.recv(1)
        if not chunk:
            break
        head += chunk
    return sock, head.decode()


def read_frame(sock):
    """(opcode, payload) of one server frame, or None at end of stream."""
    def exactly(count):
        data = b""
        while len(data) < count:
            chunk = sock.recv(count - len(data))
            if not chunk:
                return None
            data += chunk
        return data
    header = exactly(2)
    if header is None:
        return None
    length = header[1] & 0x7F
    if length == 126:
        length = struct.unpack("!H", exactly(2))[0]
    elif length == 127:
        length = struct.unpack("!Q", exactly(8))[0]
    return header[0] & 0x0F, exactly(length) if length else b""


def masked(opcode, payload, final=True):
    mask = os.urandom(4)
    head = bytes([(0x80 if final else 0) | opcode])
    length = len(payload)
    head += bytes([0x80 | length]) if length < 126 else bytes([0x80 | 126]) + struct.pack("!H", length)
    return head + mask + bytes(b ^ mask[i % 4] for i, b in enumerate(payload))


def unmasked(port):
    """An unmasked frame is a protocol error: close 1002. Also: bad UTF-8 (1007), a long ping (1002)."""
    results = {}
    for name, frame in (
        ("unmasked", bytes([0x81, 2]) + b"{}"),
        ("bad_utf8", masked(0x1, b"\xff\xfe")),
        ("long_ping", masked(0x9, b"x" * 126)),
        ("fragmented_ping", masked(0x9, b"x", final=False)),
        ("binary", masked(0x2, b"{}")),
    ):
        sock, head = raw_upgrade(port)
        sock.sendall(frame)
        reply = read_frame(sock)
        code = struct.unpack("!H", reply[1][:2])[0] if reply and reply[0] == 8 else None
        after = read_frame(sock)  # the server closes the socket after its close frame
        results[name] = {"status": head.split("\r\n")[0], "code": code, "closed": after is None}
        sock.close()
    print(json.dumps(results))


def abrupt(port, count):
    """`count` sockets (the per-address cap) dropped without a close frame give their slots back."""
    def open_all():
        sockets = []
        for _ in range(count):
            sock, head = raw_upgrade(port)
            sockets.append((sock, head.split("\r\n")[0]))
        return sockets
    first = open_all()
    refused = socket.create_connection(("127.0.0.1", port), timeout=10)
    refused.sendall(b"GET /parse/health HTTP/1.1\r\nHost: x\r\n\r\n")
    over_cap = refused.recv(200).decode().split("\r\n")[0]
    refused.close()
    for sock, _ in first:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))  # RST, no close frame
        sock.close()
    import time
    statuses = []
    for _ in range(50):  # the server notices the resets within moments; allow a loaded machine 5 s
        time.sleep(0.1)
        try:
            second = open_all()
        except OSError:
            continue
        statuses = [status for _, status in second]
        for sock, _ in second:
            sock.close()
        if all("101" in status for status in statuses):
            break
    print(json.dumps({"first": [status for _, status in first], "overCap": over_cap, "second": statuses}))


async def idle(port, pid, count):
    """`count` idle LiveQuery clients, and how many threads the server had before and while they were open."""
    def threads():
        return len(os.listdir(f"/proc/{pid}/task"))
    before = threads()
    sockets = []
    for _ in range(count):
        ws = await websockets.connect(url(port))
        await ws.send(json.dumps({"op": "connect", "applicationId": APP_ID}))
        sockets.append(ws)
    connected = 0
    for ws in sockets:
        if json.loads(await ws.recv())["op"] == "connected":
            connected += 1
    during = threads()
    await asyncio.sleep(1.5)  # a few ping rounds (the test pings every 300 ms): answered, so all stay
    alive = 0
    for ws in sockets:
        try:
            await asyncio.wait_for(ws.ping(), 5)
            alive += 1
        except Exception:
            pass
    for ws in sockets:
        await ws.close()
    print(json.dumps({"before": before, "during": during, "connected": connected, "alive": alive}))


def silent(port):
    """A client that never answers pings is dropped after missing one (the test pings every 300 ms)."""
    import time
    sock, head = raw_upgrade(port)
    started = time.monotonic()
    pings = 0
    while True:
        frame = read_frame(sock)
        if frame is None:
            break
        if frame[0] == 9:
            pings += 1
    print(json.dumps({"pings": pings, "seconds": time.monotonic() - started}))


async def stop(port, pid):
    """SIGTERM with sockets open: each gets close 1001 (going away) at once."""
    import signal
    sockets = [await websockets.connect(url(port)) for _ in range(3)]
    os.kill(pid, signal.SIGTERM)
    codes = []
    for ws in sockets:
        try:
            await asyncio.wait_for(ws.recv(), 10)
        except websockets.exceptions.ConnectionClosed as closed:
            codes.append(closed.rcvd.code if closed.rcvd else None)
    print(json.dumps({"codes": codes}))


def main():
    scenario, port = sys.argv[1], int(sys.argv[2])
    if scenario == "protocol":
        asyncio.run(protocol(port))
    elif scenario == "fragmented":
        asyncio.run(fragmented(port))
    elif scenario == "oversized":
        asyncio.run(oversized(port))
    elif scenario == "unmasked":
        unmasked(port)
    elif scenario == "abrupt":
        abrupt(port, int(sys.argv[3]))
    elif scenario == "idle":
        asyncio.run(idle(port, int(sys.argv[3]), int(sys.argv[4])))
    elif scenario == "stop":
        asyncio.run(stop(port, int(sys.argv[3])))
    elif scenario == "silent":
        silent(port)


if __name__ == "__main__":
    main()
