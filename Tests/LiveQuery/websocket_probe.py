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
MASTER_KEY = "test-master-key-0123456789"


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
                {"op": "query", "requestId": 3},  # 2, no such subscription
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
    await asyncio.sleep(4.5)  # two ping rounds (the test pings every 2 s): answered, so all stay
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


def rest(port, method, path, body=None, token=None, master=False, headers=None):
    import urllib.error
    import urllib.request
    headers = {"X-Parse-Application-Id": APP_ID, "Content-Type": "application/json", **(headers or {})}
    if token:
        headers["X-Parse-Session-Token"] = token
    if master:
        headers["X-Parse-Master-Key"] = MASTER_KEY
    request = urllib.request.Request(f"http://127.0.0.1:{port}/parse{path}", method=method, headers=headers,
                                     data=json.dumps(body).encode() if body is not None else None)
    try:
        return json.loads(urllib.request.urlopen(request, timeout=30).read())
    except urllib.error.HTTPError as error:
        return json.loads(error.read())


async def live_client(port, session_token=None, master=False, **options):
    ws = await websockets.connect(url(port), **options)
    connect = {"op": "connect", "applicationId": APP_ID}
    if session_token:
        connect["sessionToken"] = session_token
    if master:
        connect["masterKey"] = MASTER_KEY
    await ws.send(json.dumps(connect))
    assert json.loads(await ws.recv())["op"] == "connected"
    return ws


async def subscribe(ws, request_id, query):
    await ws.send(json.dumps({"op": "subscribe", "requestId": request_id, "query": query}))
    return json.loads(await ws.recv())


async def drain(ws, quiet=1.0):
    """Every message until none comes for `quiet` seconds."""
    seen = []
    while True:
        try:
            seen.append(json.loads(await asyncio.wait_for(ws.recv(), quiet)))
        except asyncio.TimeoutError:
            return seen


def brief(message):
    """An event as the test compares it: op, requestId, and the objects' fields without dates."""
    out = {"op": message["op"], "requestId": message.get("requestId")}
    for key in ("object", "original"):
        if key in message:
            out[key] = {k: v for k, v in message[key].items() if k not in ("createdAt", "updatedAt")}
    if message["op"] == "error":
        out["code"] = message["code"]
    return out


async def events(port):
    """create, update, leave, enter, delete on a `where`; `keys` trims; `watch` filters."""
    ws = await live_client(port)
    await subscribe(ws, 1, {"className": "Score", "where": {"n": {"$gt": 1}}})
    await subscribe(ws, 2, {"className": "Score", "where": {"n": {"$gt": 1}}, "keys": ["n"]})
    await subscribe(ws, 3, {"className": "Score", "where": {}, "watch": ["tag"]})
    object_id = rest(port, "POST", "/classes/Score", {"n": 5, "tag": "a", "other": 1})["objectId"]
    rest(port, "PUT", f"/classes/Score/{object_id}", {"n": 6})
    rest(port, "PUT", f"/classes/Score/{object_id}", {"n": 0, "tag": "b"})
    rest(port, "PUT", f"/classes/Score/{object_id}", {"n": 3})
    rest(port, "POST", "/classes/Score", {"n": 1})  # matches only the watch subscription, which has no tag change
    rest(port, "DELETE", f"/classes/Score/{object_id}")
    seen = [brief(message) for message in await drain(ws)]
    print(json.dumps({"objectId": object_id, "events": seen}))


async def revoked(port):
    """A subscriber logs out over REST: its next event is a 209 for the subscription, then nothing of it."""
    user = rest(port, "POST", "/users", {"username": "leaver", "password": "pw"})
    ws = await live_client(port, session_token=user["sessionToken"])
    await subscribe(ws, 1, {"className": "Note", "where": {}})
    rest(port, "POST", "/classes/Note", {"text": "before"})
    before = [brief(message) for message in await drain(ws)]
    rest(port, "POST", "/logout", {}, token=user["sessionToken"])
    rest(port, "POST", "/classes/Note", {"text": "after 1"})
    rest(port, "POST", "/classes/Note", {"text": "after 2"})
    after = [brief(message) for message in await drain(ws)]
    print(json.dumps({"before": before, "after": after}))


async def revoked_subscribe(port):
    """A client connected with a session that is then revoked (logged out elsewhere): its next subscribe, even
    with `since`, is answered 209 and replays nothing."""
    user = rest(port, "POST", "/users", {"username": "stolen", "password": "pw"})
    rest(port, "POST", "/classes/Note", {"text": "private", "ACL": {user["objectId"]: {"read": True}}})
    ws = await live_client(port, session_token=user["sessionToken"])
    rest(port, "POST", "/logout", {}, token=user["sessionToken"])
    answer = await subscribe_since(ws, 1, {"className": "Note", "where": {}}, since=0)
    rest(port, "POST", "/classes/Note", {"text": "later"})
    after = [brief(message) for message in await drain(ws)]
    print(json.dumps({"answer": [answer.get("op"), answer.get("code"), answer.get("reconnect")], "after": after}))


async def access(port):
    """ACL with users and roles decides who sees what; a CLP that refuses find refuses the subscription."""
    ann = rest(port, "POST", "/users", {"username": "ann", "password": "pw-ann"})
    bob = rest(port, "POST", "/users", {"username": "bob", "password": "pw-bob"})
    rest(port, "POST", "/roles", {"name": "editors", "ACL": {"*": {"read": True}},
                                   "users": {"__op": "AddRelation", "objects": [
                                       {"__type": "Pointer", "className": "_User", "objectId": ann["objectId"]}]}},
         master=True)
    clients = {"ann": await live_client(port, ann["sessionToken"]), "bob": await live_client(port, bob["sessionToken"]),
               "anonymous": await live_client(port), "master": await live_client(port, master=True)}
    for ws in clients.values():
        await subscribe(ws, 7, {"className": "Note", "where": {}})
    only_bob = {bob["objectId"]: {"read": True, "write": True}}
    first = rest(port, "POST", "/classes/Note", {"text": "bob's", "ACL": only_bob})["objectId"]
    rest(port, "POST", "/classes/Note", {"text": "editors'", "ACL": {"role:editors": {"read": True}}})
    rest(port, "PUT", f"/classes/Note/{first}", {"ACL": {bob["objectId"]: {"read": True, "write": True},
                                                      ann["objectId"]: {"read": True}}}, token=bob["sessionToken"])
    rest(port, "PUT", f"/classes/Note/{first}", {"ACL": only_bob}, token=bob["sessionToken"])
    rest(port, "PUT", f"/classes/Note/{first}", {"text": "bob's, edited"}, token=bob["sessionToken"])
    received = {name: await drain(ws, 0.5) for name, ws in clients.items()}
    seen = {name: [[message["op"], message.get("object", {}).get("text")] for message in messages]
            for name, messages in received.items()}
    enter_original = [sorted(message["original"].keys()) for message in received["ann"] if message["op"] == "enter"]
    await subscribe(clients["bob"], 9, {"className": "_User", "where": {}})
    await subscribe(clients["ann"], 10, {"className": "_User", "where": {"objectId": ann["objectId"]}})
    rest(port, "PUT", f"/users/{ann['objectId']}", {"email": "ann@example.com", "ACL": {
        "*": {"read": True}, ann["objectId"]: {"read": True, "write": True}}}, token=ann["sessionToken"])
    user_event = json.loads(await asyncio.wait_for(clients["bob"].recv(), 10))
    own_event = json.loads(await asyncio.wait_for(clients["ann"].recv(), 10))
    rest(port, "PUT", "/schemas/Secret", {"classLevelPermissions": {"find": {}, "get": {}}}, master=True) \
        if rest(port, "POST", "/schemas/Secret", {"className": "Secret"}, master=True) else None
    refused = await subscribe(clients["ann"], 8, {"className": "Secret", "where": {}})
    allowed = await subscribe(clients["master"], 8, {"className": "Secret", "where": {}})
    print(json.dumps({"seen": seen, "enterOriginal": enter_original, "refused": brief(refused), "allowed": allowed["op"],
                      "userEvent": [user_event["op"], sorted(user_event["object"].keys())],
                      "ownUserEvent": [own_event["op"], own_event["object"].get("email")]}))


async def ordering(port):
    """Concurrent increments of one counter: the events come in commit order (1, 2, 3...)."""
    import concurrent.futures
    ws = await live_client(port)
    object_id = rest(port, "POST", "/classes/Counter", {"n": 0})["objectId"]
    await subscribe(ws, 1, {"className": "Counter", "where": {}})
    with concurrent.futures.ThreadPoolExecutor(8) as pool:
        list(pool.map(lambda _: rest(port, "PUT", f"/classes/Counter/{object_id}", {"n": {"__op": "Increment", "amount": 1}}),
                      range(40)))
    seen = await drain(ws)
    print(json.dumps({"values": [message["object"]["n"] for message in seen], "ops": sorted({m["op"] for m in seen})}))


async def batches(port):
    """A batch's writes send events; a transactional batch that fails sends none."""
    ws = await live_client(port)
    await subscribe(ws, 1, {"className": "Item", "where": {}})
    ok = rest(port, "POST", "/batch", {"requests": [
        {"method": "POST", "path": "/parse/classes/Item", "body": {"k": 1}},
        {"method": "POST", "path": "/parse/classes/Item", "body": {"k": 2}}]})
    failed = rest(port, "POST", "/batch", {"transaction": True, "requests": [
        {"method": "POST", "path": "/parse/classes/Item", "body": {"k": 3}},
        {"method": "POST", "path": "/parse/classes/Item", "body": {"k": {"__op": "Bogus"}}}]})
    partial = rest(port, "POST", "/batch", {"requests": [
        {"method": "POST", "path": "/parse/classes/Item", "body": {"k": 4}},
        {"method": "POST", "path": "/parse/classes/Item", "body": {"k": {"__op": "Bogus"}}},
        {"method": "POST", "path": "/parse/classes/Item", "body": {"k": 5}}]})
    once = {"X-Parse-Request-Id": "create-k6-once"}
    replies = [rest(port, "POST", "/classes/Item", {"k": 6}, headers=once)["objectId"] for _ in range(2)]
    seen = [[message["op"], message["object"]["k"]] for message in await drain(ws)]
    print(json.dumps({"seen": seen, "ok": len(ok), "failed": "error" in json.dumps(failed), "replayed": replies[0] == replies[1],
                      "partial": ["success" in item for item in partial]}))


async def operators(port):
    """Subscriptions match with the REST query semantics, subqueries and $regex included."""
    ws = await live_client(port)
    team = rest(port, "POST", "/classes/Team", {"name": "reds", "active": True})["objectId"]
    await subscribe(ws, 1, {"className": "Player", "where": {"team": {"$inQuery": {"className": "Team", "where": {"active": True}}}}})
    await subscribe(ws, 2, {"className": "Player", "where": {"name": {"$regex": "^an", "$options": "i"}}})
    await subscribe(ws, 3, {"className": "Player", "where": {"$or": [{"tags": "x"}, {"score": {"$in": [7, 8]}}]}})
    pointer = {"__type": "Pointer", "className": "Team", "objectId": team}
    rest(port, "POST", "/classes/Player", {"name": "Ann", "team": pointer, "tags": ["x", "y"]})
    rest(port, "POST", "/classes/Player", {"name": "Bob", "score": 8})
    rest(port, "POST", "/classes/Player", {"name": "Cy", "score": 1})
    seen = sorted([message["requestId"], message["object"]["name"]] for message in await drain(ws))
    print(json.dumps({"seen": seen}))


async def quiet(port, seconds):
    """A socket quiet for longer than the HTTP deadlines (and not pinging) stays open: they are for requests."""
    ws = await websockets.connect(url(port), ping_interval=None)
    await ws.send(json.dumps({"op": "connect", "applicationId": APP_ID}))
    first = json.loads(await ws.recv())["op"]
    await asyncio.sleep(seconds)
    await ws.send(json.dumps({"op": "subscribe", "requestId": 1, "query": {"className": "A", "where": {}}}))
    print(json.dumps({"first": first, "after": json.loads(await ws.recv())["op"]}))


async def flood(port, count):
    """One client sends `count` messages at once: each is answered, in order, and another client is served meanwhile."""
    flooder = await live_client(port)
    other = await websockets.connect(url(port))

    async def send_all():
        for request_id in range(count):
            await flooder.send(json.dumps({"op": "unsubscribe", "requestId": request_id}))

    async def read_all():
        return [json.loads(await flooder.recv()).get("error", "").split("subscriptionId ")[1].split(".")[0]
                for _ in range(count)]

    async def other_connects():
        await other.send(json.dumps({"op": "connect", "applicationId": APP_ID}))
        return json.loads(await other.recv())["op"]

    _, answered, other_op = await asyncio.wait_for(asyncio.gather(send_all(), read_all(), other_connects()), 60)
    print(json.dumps({"inOrder": answered == [str(i) for i in range(count)], "answered": len(answered), "other": other_op}))


async def subscribe_since(ws, request_id, query, since=None):
    """A subscribe, with Roost's `since` when given: the `subscribed` answer."""
    message = {"op": "subscribe", "requestId": request_id, "query": query}
    if since is not None:
        message["since"] = since
    await ws.send(json.dumps(message))
    return json.loads(await ws.recv())


def event_line(message):
    """An event as the resume tests compare them: op, requestId, seq, objectId and the `text` field."""
    return [message["op"], message.get("requestId"), message.get("seq"), message.get("object", {}).get("objectId"),
            message.get("object", {}).get("text")]


async def resume(port):
    """A client drops, misses a create, an update and a delete (and another class's writes), and resumes with
    the last seq it saw: the missed events come once, in order, before the next live one."""
    ws = await live_client(port)
    subscribed = await subscribe_since(ws, 1, {"className": "Note", "where": {}})
    first = rest(port, "POST", "/classes/Note", {"text": "one"})["objectId"]
    seen_before = [json.loads(await asyncio.wait_for(ws.recv(), 10))]
    last = seen_before[-1]["seq"]
    await ws.close()
    second = rest(port, "POST", "/classes/Note", {"text": "two"})["objectId"]
    rest(port, "POST", "/classes/Other", {"text": "elsewhere"})
    rest(port, "PUT", f"/classes/Note/{first}", {"text": "one, edited"})
    rest(port, "DELETE", f"/classes/Note/{second}")
    ws = await live_client(port)
    resumed = await subscribe_since(ws, 1, {"className": "Note", "where": {}}, since=last)
    replayed = await drain(ws, 1.0)
    third = rest(port, "POST", "/classes/Note", {"text": "three"})["objectId"]
    live = await drain(ws, 1.0)
    # A resume from the head itself replays nothing; one from 0 replays everything still logged.
    again = await live_client(port)
    at_head = await subscribe_since(again, 5, {"className": "Note", "where": {}}, since=resumed["seq"])
    at_head_events = await drain(again, 0.5)
    await ws.close()
    await again.close()
    print(json.dumps({"ids": [first, second, third], "firstSubscribed": subscribed, "before": [event_line(m) for m in seen_before],
                      "resumed": resumed, "replayed": [event_line(m) for m in replayed], "live": [event_line(m) for m in live],
                      "atHead": at_head, "atHeadEvents": at_head_events}))


async def restart_before(port):
    """Phase one of a resume across a restart: subscribe, see one event, leave, miss two writes."""
    ws = await live_client(port)
    await subscribe_since(ws, 1, {"className": "Note", "where": {}})
    first = rest(port, "POST", "/classes/Note", {"text": "one"})["objectId"]
    last = json.loads(await asyncio.wait_for(ws.recv(), 10))["seq"]
    await ws.close()
    rest(port, "POST", "/classes/Note", {"text": "two"})
    rest(port, "PUT", f"/classes/Note/{first}", {"text": "one, edited"})
    print(json.dumps({"since": last}))


async def restart_after(port, since):
    """Phase two, on the restarted server: the two missed writes arrive, then a new write's seq is larger."""
    ws = await live_client(port)
    resumed = await subscribe_since(ws, 1, {"className": "Note", "where": {}}, since=since)
    replayed = await drain(ws, 1.0)
    rest(port, "POST", "/classes/Note", {"text": "three"})
    live = await drain(ws, 1.0)
    await ws.close()
    print(json.dumps({"resumed": resumed, "replayed": [event_line(m) for m in replayed], "live": [event_line(m) for m in live]}))


async def trimmed(port):
    """With a 1 s window: a class whose changes were trimmed since `since` answers resumed:false (no replay);
    a quiet class resumes."""
    ws = await live_client(port)
    busy = await subscribe_since(ws, 1, {"className": "Busy", "where": {}})
    quiet = await subscribe_since(ws, 2, {"className": "Quiet", "where": {}})
    await ws.close()
    rest(port, "POST", "/classes/Busy", {"text": "missed"})
    await asyncio.sleep(3.5)  # the trimmer runs every second; the change is older than the window by then
    ws = await live_client(port)
    busy_again = await subscribe_since(ws, 1, {"className": "Busy", "where": {}}, since=busy["seq"])
    quiet_again = await subscribe_since(ws, 2, {"className": "Quiet", "where": {}}, since=quiet["seq"])
    after = await drain(ws, 0.5)
    result = None
    if busy_again.get("resumed") is False:
        await ws.send(json.dumps({"op": "query", "requestId": 1}))
        result = json.loads(await asyncio.wait_for(ws.recv(), 10))
    await ws.close()
    print(json.dumps({"busy": busy_again, "quiet": quiet_again, "after": after,
                      "result": [o["text"] for o in result["results"]] if result else None}))


async def query_op(port):
    """`query` answers `result` with what the subscription's session may see, keys applied, and the log's seq."""
    ann = rest(port, "POST", "/users", {"username": "ann", "password": "pw-ann"})
    bob = rest(port, "POST", "/users", {"username": "bob", "password": "pw-bob"})
    rest(port, "POST", "/classes/Card", {"name": "public", "color": "red", "n": 1})
    rest(port, "POST", "/classes/Card", {"name": "ann's", "color": "blue", "n": 2,
                                        "ACL": {ann["objectId"]: {"read": True}}})
    rest(port, "POST", "/classes/Card", {"name": "bob's", "color": "green", "n": 3,
                                        "ACL": {bob["objectId"]: {"read": True}}})
    rest(port, "POST", "/classes/Card", {"name": "small", "color": "red", "n": 0})
    errors = []
    raw = await websockets.connect(url(port))
    await raw.send(json.dumps({"op": "query", "requestId": 1}))
    errors.append(json.loads(await raw.recv()))
    ws = await live_client(port, ann["sessionToken"])
    await ws.send(json.dumps({"op": "query", "requestId": 9}))
    errors.append(json.loads(await ws.recv()))
    await ws.send(json.dumps({"op": "query", "requestId": 9, "extra": True}))
    errors.append(json.loads(await ws.recv()))
    await subscribe_since(ws, 9, {"className": "Card", "where": {"n": {"$gte": 1}}, "keys": ["name"]})
    await ws.send(json.dumps({"op": "query", "requestId": 9}))
    result = json.loads(await ws.recv())
    anonymous = await live_client(port)
    await subscribe_since(anonymous, 1, {"className": "Card", "where": {}})
    await anonymous.send(json.dumps({"op": "query", "requestId": 1}))
    anonymous_result = json.loads(await anonymous.recv())
    for socket_ in (raw, ws, anonymous):
        await socket_.close()
    print(json.dumps({"errors": [brief(e) | {"error": e["error"]} for e in errors], "result": result,
                      "anonymous": sorted(o["name"] for o in anonymous_result["results"])}))


async def limits(port):
    """--live-query-max-subscriptions 3, --live-query-classes Note,Other, --live-query-max-connections-per-ip 4,
    --live-query-max-message 4096: refusals are Parse-style errors and never touch the other client."""
    ws = await live_client(port)
    other = await live_client(port)
    answers = [await subscribe_since(ws, n, {"className": "Note", "where": {}}) for n in range(1, 5)]
    replaced = await subscribe_since(ws, 2, {"className": "Other", "where": {}})  # replacing one is not one more
    not_live = await subscribe_since(other, 1, {"className": "Secret", "where": {}})
    other_ok = await subscribe_since(other, 2, {"className": "Note", "where": {}})
    rest(port, "POST", "/classes/Secret", {"text": "hidden"})
    rest(port, "POST", "/classes/Note", {"text": "shown"})
    # The Note's event first (a loaded machine may take seconds to deliver it), then anything else for half a second:
    # the Secret's create, had it leaked, was committed before it.
    first = json.loads(await asyncio.wait_for(other.recv(), 60))
    other_events = [event_line(m) for m in [first] + await drain(other, 0.5)]
    third = await websockets.connect(url(port))
    fourth = await websockets.connect(url(port))
    refused = "accepted"
    try:
        await websockets.connect(url(port))
    except Exception as error:  # InvalidStatus / InvalidStatusCode, by websockets version
        response = getattr(error, "response", None)
        refused = getattr(response, "status_code", None) or getattr(error, "status_code", None) or repr(error)
    code = None
    try:
        await third.send("x" * 5000)
        await third.recv()
    except websockets.exceptions.ConnectionClosed as closed:
        code = closed.rcvd.code if closed.rcvd else None
    await fourth.close()
    for socket_ in (ws, other, third):
        await socket_.close()
    print(json.dumps({"answers": [brief(a) if a["op"] == "error" else a["op"] for a in answers],
                      "maxError": answers[3].get("error"), "replaced": replaced["op"], "notLive": brief(not_live),
                      "notLiveError": not_live.get("error"), "otherOk": other_ok["op"], "otherEvents": other_events,
                      "refused": refused, "oversized": code}))


async def write_paths(port):
    """Events from relation changes on an owning object, user sign-up, update and delete."""
    ws = await live_client(port, master=True)
    await subscribe_since(ws, 1, {"className": "Team", "where": {}})
    await subscribe_since(ws, 2, {"className": "_User", "where": {}})
    team = rest(port, "POST", "/classes/Team", {"name": "reds"})["objectId"]
    user = rest(port, "POST", "/users", {"username": "cy", "password": "pw-cy"})
    pointer = {"__type": "Pointer", "className": "_User", "objectId": user["objectId"]}
    rest(port, "PUT", f"/classes/Team/{team}", {"members": {"__op": "AddRelation", "objects": [pointer]}})
    rest(port, "PUT", f"/classes/Team/{team}", {"members": {"__op": "RemoveRelation", "objects": [pointer]}})
    rest(port, "PUT", f"/users/{user['objectId']}", {"nickname": "c"}, token=user["sessionToken"])
    rest(port, "DELETE", f"/users/{user['objectId']}", token=user["sessionToken"])
    seen = await drain(ws, 1.0)
    seqs = [m["seq"] for m in seen]
    await ws.close()
    print(json.dumps({"seen": [[m["op"], m["requestId"], m["object"].get("name") or m["object"].get("username")] for m in seen],
                      "increasing": seqs == sorted(seqs) and len(set(seqs)) == len(seqs),
                      "password": any("password" in m["object"] for m in seen)}))


COUNT = 95  # ~3.8 MB of events: more than the kernel buffers, less than the 4 MB slow-reader limit


def closing(port):
    """A client with a tiny receive buffer subscribes, stops reading while ~1.2 MB of events pile up, then sends
    close: with the only LiveQuery slot of its address held, how long until a new socket is let in."""
    import time
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
    sock.settimeout(10)
    sock.connect(("127.0.0.1", port))
    key = base64.b64encode(os.urandom(16)).decode()
    sock.sendall((f"GET /parse HTTP/1.1\r\nHost: 127.0.0.1\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
                  f"Sec-WebSocket-Key: {key}\r\nSec-WebSocket-Version: 13\r\n\r\n").encode())
    head = b""
    while b"\r\n\r\n" not in head:
        head += sock.recv(1)
    sock.sendall(masked(0x1, json.dumps({"op": "connect", "applicationId": APP_ID}).encode()))
    read_frame(sock)
    sock.sendall(masked(0x1, json.dumps({"op": "subscribe", "requestId": 1,
                                         "query": {"className": "Big", "where": {}}}).encode()))
    read_frame(sock)
    for _ in range(COUNT):
        rest(port, "POST", "/classes/Big", {"text": "x" * 40_000})
    sock.sendall(masked(0x8, struct.pack("!H", 1000)))
    started = time.monotonic()
    status = None
    while time.monotonic() - started < 20:
        probe, head = raw_upgrade(port)
        status = head.split("\r\n")[0]
        probe.close()
        if "101" in status:
            break
        time.sleep(0.2)
    print(json.dumps({"status": status, "seconds": time.monotonic() - started}))
    sock.close()


async def capped(port):
    """With --live-query-replay-events 2: three changes while away; resuming from before the first (trimmed)
    answers resumed:false, from the first itself replays the other two."""
    ws = await live_client(port)
    start = (await subscribe_since(ws, 1, {"className": "Busy", "where": {}}))["seq"]
    await ws.close()
    for n in range(3):
        rest(port, "POST", "/classes/Busy", {"text": f"n{n}"})
    await asyncio.sleep(2.5)  # the trimmer runs every second
    ws = await live_client(port)
    too_old = await subscribe_since(ws, 1, {"className": "Busy", "where": {}}, since=start)
    recent = await subscribe_since(ws, 2, {"className": "Busy", "where": {}}, since=start + 1)
    replayed = [event_line(m) for m in await drain(ws, 0.5)]
    await ws.close()
    print(json.dumps({"start": start, "tooOld": too_old.get("resumed"), "recent": recent.get("resumed"),
                      "replayed": [[r[0], r[1], r[2] - start, r[4]] for r in replayed]}))


async def boundary(port):
    """200 creates run from 4 threads while a client reconnects and resumes five times: every create's event
    arrives exactly once across the replay/live boundaries (the class's seqs, consecutive here, none twice)."""
    import concurrent.futures
    import threading
    total = 200
    done = threading.Event()

    def write_all():
        with concurrent.futures.ThreadPoolExecutor(4) as pool:
            list(pool.map(lambda n: rest(port, "POST", "/classes/Seq", {"n": n}), range(total)))
        done.set()

    # No queue limit: the library stops reading past 32 unread messages, and then never sees the server's close.
    ws = await live_client(port, max_queue=None)
    start = (await subscribe_since(ws, 1, {"className": "Seq", "where": {}}))["seq"]
    last = start
    seen = []
    writer = threading.Thread(target=write_all)
    writer.start()
    reconnects = 0
    while True:
        try:
            message = json.loads(await asyncio.wait_for(ws.recv(), 0.05 if reconnects < 5 else 2.0))
            if message["op"] == "create":
                seen.append(message["seq"])
                last = max(last, message["seq"])
        except asyncio.TimeoutError:
            if reconnects >= 5 and done.is_set():
                break
        if reconnects < 5 and len(seen) >= (reconnects + 1) * 25:
            await ws.close()
            await asyncio.sleep(0.1)  # creates go on while it is away
            ws = await live_client(port, max_queue=None)
            answer = await subscribe_since(ws, 1, {"className": "Seq", "where": {}}, since=last)
            if answer.get("resumed") is not True:
                print(json.dumps({"error": answer}))
                return
            reconnects += 1
    writer.join()
    await ws.close()
    print(json.dumps({"count": len(seen), "distinct": len(set(seen)), "reconnects": reconnects,
                      "exact": sorted(seen) == list(range(start + 1, start + total + 1)), "ordered": seen == sorted(seen)}))


async def purged(port):
    """A class purge and a removed field change objects without events: a resume across either answers
    resumed:false (the client re-queries); another class still resumes."""
    rest(port, "POST", "/classes/Note", {"text": "one", "tag": "a"})
    rest(port, "POST", "/classes/Keep", {"text": "kept"})
    ws = await live_client(port)
    note = (await subscribe_since(ws, 1, {"className": "Note", "where": {}}))["seq"]
    keep = (await subscribe_since(ws, 2, {"className": "Keep", "where": {}}))["seq"]
    await ws.close()
    rest(port, "PUT", "/schemas/Keep", {"fields": {"text": {"__op": "Delete"}}}, master=True)
    rest(port, "DELETE", "/purge/Note", master=True)
    ws = await live_client(port)
    after_purge = await subscribe_since(ws, 1, {"className": "Note", "where": {}}, since=note)
    after_field = await subscribe_since(ws, 2, {"className": "Keep", "where": {}}, since=keep)
    other = await subscribe_since(ws, 3, {"className": "Quiet", "where": {}}, since=note)
    await ws.close()
    print(json.dumps({"purge": after_purge.get("resumed"), "field": after_field.get("resumed"), "other": other.get("resumed")}))


async def subscribe_flood(port):
    """One client sends 2,000 subscribes at once (past the limit of 100) while another subscribes and gets
    an event: the flooder gets every answer in order, the other client is served meanwhile."""
    flooder = await live_client(port, max_queue=None)
    other = await live_client(port)
    count = 2000

    async def send_all():
        for request_id in range(1, count + 1):
            await flooder.send(json.dumps({"op": "subscribe", "requestId": request_id,
                                           "query": {"className": "Flood", "where": {"n": request_id}}}))

    async def read_all():
        answers = [json.loads(await flooder.recv()) for _ in range(count)]
        return [[a["op"], a.get("requestId"), a.get("code")] for a in answers]

    async def other_client():
        subscribed = await subscribe_since(other, 1, {"className": "Calm", "where": {}})
        await asyncio.to_thread(rest, port, "POST", "/classes/Calm", {"text": "hello"})
        event = json.loads(await asyncio.wait_for(other.recv(), 30))
        return [subscribed["op"], event["op"], event["object"]["text"]]

    _, answers, seen = await asyncio.wait_for(asyncio.gather(send_all(), read_all(), other_client()), 120)
    expected = [["subscribed", n, None] for n in range(1, 101)] + [["error", n, 155] for n in range(101, count + 1)]
    print(json.dumps({"answersInOrder": answers == expected, "answered": len(answers), "other": seen}))


async def resume_access(port):
    """A resume is judged with the subscriber's access: what ann may not read is not replayed, a note that
    became readable to her replays as an enter (its earlier version only as an identity), keys still apply."""
    ann = rest(port, "POST", "/users", {"username": "ann", "password": "pw-ann"})
    bob = rest(port, "POST", "/users", {"username": "bob", "password": "pw-bob"})
    only_bob = {bob["objectId"]: {"read": True, "write": True}}
    ws = await live_client(port, ann["sessionToken"])
    since = (await subscribe_since(ws, 1, {"className": "Note", "where": {}, "keys": ["text"]}))["seq"]
    await ws.close()
    rest(port, "POST", "/classes/Note", {"text": "bob's", "secret": 1, "ACL": only_bob}, token=bob["sessionToken"])
    shared = rest(port, "POST", "/classes/Note", {"text": "later shared", "ACL": only_bob}, token=bob["sessionToken"])["objectId"]
    rest(port, "POST", "/classes/Note", {"text": "public", "secret": 2})
    rest(port, "PUT", f"/classes/Note/{shared}", {"ACL": {bob["objectId"]: {"read": True, "write": True},
                                                       ann["objectId"]: {"read": True}}}, token=bob["sessionToken"])
    ws = await live_client(port, ann["sessionToken"])
    resumed = await subscribe_since(ws, 1, {"className": "Note", "where": {}, "keys": ["text"]}, since=since)
    replayed = await drain(ws, 0.5)
    await ws.close()
    print(json.dumps({"resumed": resumed.get("resumed"),
                      "replayed": [[m["op"], m["object"].get("text"), "secret" in m["object"],
                                    sorted(m.get("original", {}).keys())] for m in replayed]}))


async def update_since(port):
    """`update` with `since` replaces the subscription and replays, under the new query, what came after `since`."""
    ws = await live_client(port)
    start = (await subscribe_since(ws, 1, {"className": "Note", "where": {"n": 1}}))["seq"]
    rest(port, "POST", "/classes/Note", {"text": "two", "n": 2})
    quiet = await drain(ws, 0.5)  # n: 2 does not match the first query
    await ws.send(json.dumps({"op": "update", "requestId": 1, "since": start, "query": {"className": "Note", "where": {"n": 2}}}))
    answer = json.loads(await ws.recv())
    replayed = [event_line(m) for m in await drain(ws, 0.5)]
    await ws.close()
    print(json.dumps({"quiet": quiet, "answer": [answer["op"], answer.get("resumed"), answer.get("seq") - start],
                      "replayed": [[r[0], r[1], r[2] - start, r[4]] for r in replayed]}))


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
    elif scenario == "flood":
        asyncio.run(flood(port, int(sys.argv[3])))
    elif scenario == "quiet":
        asyncio.run(quiet(port, float(sys.argv[3])))
    elif scenario == "stop":
        asyncio.run(stop(port, int(sys.argv[3])))
    elif scenario == "restart_after":
        asyncio.run(restart_after(port, int(sys.argv[3])))
    elif scenario == "query":
        asyncio.run(query_op(port))
    elif scenario in ("events", "access", "ordering", "batches", "operators", "revoked", "resume", "restart_before", "trimmed", "capped", "boundary", "purged", "subscribe_flood",
                      "resume_access", "update_since", "revoked_subscribe",
                      "limits", "write_paths"):
        asyncio.run(globals()[scenario](port))
        # Sockets a scenario left open would each wait out the library's 10 s close timeout at exit.
        sys.stdout.flush()
        os._exit(0)
    elif scenario == "closing":
        closing(port)
    elif scenario == "silent":
        silent(port)


if __name__ == "__main__":
    main()
