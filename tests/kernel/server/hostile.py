#!/usr/bin/env python3
"""Hostile clients against a running podkerneld (loopback only, bounded).

Usage: hostile.py PORT PID ATTACK [ARGS...]; prints what it saw and exits 1 on
a failed expectation.  Each attack is bounded in connections and seconds.
Loopback addresses 127.0.0.2.. act as other client addresses.
"""
import json
import os
import select
import socket
import sys
import time

PORT = int(sys.argv[1])
PID = int(sys.argv[2])
TOKEN = os.environ.get("PK_TOKEN", "admintok")
# What the legitimate client of the slowloris attack asks for.
LEGIT_PATH = os.environ.get("PK_LEGIT_PATH", "/api/v1/namespaces/default/pods?limit=1")


def fail(msg):
    print("FAIL: " + msg, file=sys.stderr)
    sys.exit(1)


def rss_mb():
    with open("/proc/%d/status" % PID) as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024.0
    return 0.0


def connect(src="127.0.0.1", timeout=5.0):
    s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    s.settimeout(timeout)
    s.bind((src, 0))
    s.connect(("127.0.0.1", PORT))
    return s


def request(path, method="GET", headers=None, body=b"", src="127.0.0.1", timeout=5.0,
            token=TOKEN):
    """One request on a fresh connection; returns (status, body bytes)."""
    s = connect(src, timeout)
    h = {"Host": "127.0.0.1", "Connection": "close"}
    if token:
        h["Authorization"] = "Bearer " + token
    if body:
        h["Content-Length"] = str(len(body))
        h["Content-Type"] = "application/json"
    h.update(headers or {})
    head = "%s %s HTTP/1.1\r\n" % (method, path)
    head += "".join("%s: %s\r\n" % kv for kv in h.items()) + "\r\n"
    try:
        s.sendall(head.encode() + body)
    except (BrokenPipeError, ConnectionResetError):
        pass  # answered and closed before the body was read: read the answer
    data = b""
    try:
        while True:
            chunk = s.recv(65536)
            if not chunk:
                break
            data += chunk
    except ConnectionResetError:
        pass  # what came before the reset is the answer
    finally:
        s.close()
    global LAST_HEADERS
    LAST_HEADERS = []
    if not data:
        return 0, b""
    status = int(data.split(b" ", 2)[1])
    head, _, rest = data.partition(b"\r\n\r\n")
    LAST_HEADERS = [l.decode(errors="replace") for l in head.split(b"\r\n")[1:]]
    return status, rest


LAST_HEADERS = []


def healthz_ok(src="127.0.0.1"):
    t = time.monotonic()
    status, _ = request("/healthz", src=src, timeout=5.0, token=None)
    return status == 200, time.monotonic() - t


def closed_by_server(s, wait):
    """True when the server closes s (EOF or reset) within wait seconds."""
    s.settimeout(wait)
    try:
        return s.recv(1) == b""
    except (ConnectionResetError, BrokenPipeError):
        return True
    except socket.timeout:
        return False


def attack_idle_flood(n_per_addr, n_addrs, timeout_s):
    """n_per_addr idle connections (half a header) from each of n_addrs addresses."""
    socks = []
    for a in range(n_addrs):
        for _ in range(n_per_addr):
            try:
                s = connect("127.0.0.%d" % (a + 2))
                s.sendall(b"GET /api/v1/pods HTTP/1.1\r\nHost: x\r\n")
                socks.append(s)
            except OSError:
                pass
    time.sleep(0.5)
    ok, took = healthz_ok()
    if not ok:
        fail("/healthz not served during a flood of %d connections" % len(socks))
    print("healthz served in %.2f s beside %d idle connections from %d addresses"
          % (took, len(socks), n_addrs))
    # More than the per-address limit: the excess is closed at once.
    limit = int(os.environ.get("PK_PER_ADDR", "200"))
    if n_per_addr > limit:
        refused = sum(1 for s in socks[:n_per_addr] if closed_by_server(s, 0.05))
        if refused < n_per_addr - limit:
            fail("only %d of %d connections over the per-address limit were closed"
                 % (refused, n_per_addr - limit))
        print("%d connections over the per-address limit of %d closed" % (refused, limit))
    # Unfinished requests are closed after the idle timeout.
    if timeout_s > 0:
        time.sleep(timeout_s + 2)
        open_left = sum(1 for s in socks if not closed_by_server(s, 0.01))
        if open_left:
            fail("%d half-sent requests still open after %d s" % (open_left, timeout_s + 2))
        print("every half-sent request closed after the %d s idle timeout" % timeout_s)
    for s in socks:
        s.close()


def attack_anonymous_bodies(n, size, token=None, want=401):
    """n requests (anonymous, or with a token that may not write) declaring
    size-byte bodies: refused (want) before any body byte."""
    before = rss_mb()
    socks = []
    auth = "Authorization: Bearer %s\r\n" % token if token else ""
    for i in range(n):
        s = connect("127.0.0.%d" % (2 + i % 4))
        s.sendall(("POST /api/v1/namespaces/default/pods HTTP/1.1\r\nHost: x\r\n%s"
                   "Content-Type: application/json\r\nContent-Length: %d\r\n\r\n"
                   % (auth, size)).encode())
        socks.append(s)
    for s in socks:
        s.settimeout(5)
        head = s.recv(4096)
        if not head.startswith(b"HTTP/1.1 %d" % want):
            fail("request with an unsent body answered %r, want %d" % (head[:40], want))
    # Sending the bodies now gets nowhere: the server does not read them.
    sent = 0
    chunk = b"x" * 65536
    for s in socks:
        s.setblocking(False)
        try:
            while sent < size * n:
                sent += s.send(chunk)
        except (BlockingIOError, OSError):
            pass
    grew = rss_mb() - before
    for s in socks:
        s.close()
    print("%d %s %d-byte bodies: %d before the body, RSS grew %.0f MB"
          % (n, "read-only" if token else "anonymous", size, want, grew))
    if grew > 64:
        fail("RSS grew %.0f MB for bodies that should never be read" % grew)


def attack_writer_bodies(n, size):
    """n requests of a user who may write, declaring size-byte bodies and
    sending them slowly: the bodies in flight are capped per user, so most
    are answered 429 before their bytes are read, and RSS stays bounded."""
    before = rss_mb()
    socks = []
    for i in range(n):
        s = connect("127.0.0.%d" % (2 + i % 4))
        s.sendall(("POST /api/v1/namespaces/default/pods HTTP/1.1\r\nHost: x\r\n"
                   "Authorization: Bearer %s\r\nContent-Type: application/json\r\n"
                   "Content-Length: %d\r\n\r\n" % (TOKEN, size)).encode())
        socks.append(s)
    busy = 0
    for s in socks:
        s.setblocking(False)
    time.sleep(1)
    waiting = []
    for s in socks:
        try:
            head = s.recv(4096)
        except BlockingIOError:
            waiting.append(s)
            continue
        if head.startswith(b"HTTP/1.1 429"):
            busy += 1
            if b"Retry-After" not in head:
                fail("429 without Retry-After: %r" % head[:200])
        else:
            fail("a body in flight answered %r" % head[:40])
    # Those let in send most of their bodies: the buffers grow to the cap.
    chunk = b"x" * 65536
    for s in waiting:
        sent = 0
        try:
            while sent < size - 65536:
                sent += s.send(chunk)
        except (BlockingIOError, OSError):
            pass
    time.sleep(1)
    grew = rss_mb() - before
    for s in socks:
        s.close()
    print("%d %d-byte bodies of one writer: %d answered 429 at once, %d let in, RSS grew %.0f MB"
          % (n, size, busy, len(waiting), grew))
    limit_mb = float(os.environ.get("PK_BODY_USER_MB", "32"))
    if len(waiting) * size > (limit_mb + size / 1048576.0) * 1048576:
        fail("%d bodies of %d bytes let in at once (cap %.0f MB)" % (len(waiting), size, limit_mb))
    if grew > limit_mb * 3 + 32:
        fail("RSS grew %.0f MB for bodies capped at %.0f MB" % (grew, limit_mb))


def attack_patch_bomb(node):
    """A node's own token: 26 JSON-patch copy ops on its Node status, each
    doubling it (2^26 times 1.5 KB).  Refused with 413 at the object limit;
    RSS stays small."""
    before = rss_mb()
    ops = [{"op": "add", "path": "/status/nodeInfo", "value": {"pad": "x" * 1400}}]
    for i in range(26):
        ops.append({"op": "copy", "from": "/status/nodeInfo",
                    "path": "/status/nodeInfo/c%d" % i})
    t0 = time.monotonic()
    status, body = request("/api/v1/nodes/%s/status" % node, method="PATCH",
                           headers={"Content-Type": "application/json-patch+json"},
                           body=json.dumps(ops).encode(), timeout=60)
    took = time.monotonic() - t0
    grew = rss_mb() - before
    print("26-op copy patch (%d bytes): %d in %.2f s, RSS grew %.0f MB"
          % (len(json.dumps(ops)), status, took, grew))
    if status != 413:
        fail("the copy-doubling patch answered %d: %s" % (status, body[:300]))
    if grew > 64:
        fail("RSS grew %.0f MB for a refused patch" % grew)


def varint(n):
    out = b""
    while True:
        b = n & 0x7F
        n >>= 7
        if n:
            out += bytes([b | 0x80])
        else:
            return out + bytes([b])


def field(num, payload):
    return varint(num << 3 | 2) + varint(len(payload)) + payload


def attack_proto_amplify(node, n, want):
    """A Node status of n empty conditions in protobuf: two bytes each on the
    wire, hundreds once unpacked.  Refused (want) before it is decoded; RSS
    stays small."""
    status_msg = field(4, b"") * n                  # NodeStatus.conditions
    raw = field(3, status_msg)                      # Node.status
    typemeta = field(1, b"v1") + field(2, b"Node")
    body = b"k8s\0" + field(1, typemeta) + field(2, raw)
    before = rss_mb()
    status, resp = request("/api/v1/nodes/%s/status" % node, method="PUT",
                           headers={"Content-Type": "application/vnd.kubernetes.protobuf"},
                           body=body, timeout=60)
    grew = rss_mb() - before
    print("protobuf Node of %d empty conditions (%d bytes): %d, RSS grew %.0f MB"
          % (n, len(body), status, grew))
    if status != want:
        fail("the amplifying protobuf body answered %d, want %d: %s" % (status, want, resp[:300]))
    if grew > 64:
        fail("RSS grew %.0f MB for a %d-byte protobuf body" % (grew, len(body)))


def attack_dup_warnings(method, path, ctype, n, want):
    """A body repeating one label key n times under fieldValidation=Warn: an
    answer (want) with the warnings capped at 4 KiB and the rest counted."""
    labels = ",".join('"k":"%d"' % i for i in range(n))
    body = ('{"apiVersion":"v1","kind":"%s","metadata":{"name":"%s","labels":{%s}}%s}'
            % ("Node" if "/nodes/" in path else "Pod", path.rstrip("/").split("/")[-1]
               if "/nodes/" in path else "dups", labels,
               "" if "/nodes/" in path else
               ',"spec":{"containers":[{"name":"c","image":"busybox"}]}')).encode()
    status, resp = request(path, method=method, headers={"Content-Type": ctype}, body=body,
                           timeout=60)
    warns = [h for h in LAST_HEADERS if h.lower().startswith("warning:")]
    size = sum(len(h) for h in warns)
    print("%d duplicate keys (%d bytes): %d, %d warning headers, %d bytes"
          % (n, len(body), status, len(warns), size))
    if status != want:
        fail("%d duplicate keys answered %d, want %d: %s" % (n, status, want, resp[:300]))
    if status < 300 and (size > 6000 or not any("more warnings were not shown" in h for h in warns)):
        fail("warnings not capped: %d headers, %d bytes" % (len(warns), size))


def attack_unread_watches(n, path):
    """n watches that never read, over a large object: RSS stays bounded."""
    before = rss_mb()
    socks = []
    for i in range(n):
        s = connect("127.0.0.%d" % (2 + i % 4))
        s.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
        s.sendall(("GET %s HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer %s\r\n\r\n"
                   % (path, TOKEN)).encode())
        socks.append(s)
    time.sleep(3)
    grew = rss_mb() - before
    t = time.monotonic()
    # Served, not fast: timing belongs to benchmarks (the sanitizer build and a
    # shared machine make the 300 initial events slow to produce).
    status, _ = request("/api/v1/namespaces/default/pods?limit=1", timeout=60)
    took = time.monotonic() - t
    for s in socks:
        s.close()
    print("%d unread watches: RSS grew %.0f MB, a list took %.2f s" % (n, grew, took))
    if status != 200:
        fail("list beside unread watches answered %d" % status)
    limit = float(os.environ.get("PK_WATCH_RSS_MB", "160"))
    if grew > limit:
        fail("RSS grew %.0f MB (> %.0f) for %d unread watches" % (grew, limit, n))


def cpu_seconds():
    with open("/proc/%d/stat" % PID) as f:
        fields = f.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / float(os.sysconf("SC_CLK_TCK"))


def fill_namespace(ns, pods):
    """The namespace and `pods` small pods in it, over one kept-alive connection."""
    import http.client
    c = http.client.HTTPConnection("127.0.0.1", PORT, timeout=30)
    h = {"Authorization": "Bearer " + TOKEN, "Content-Type": "application/json"}
    c.request("POST", "/api/v1/namespaces", json.dumps(
        {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": ns}}), h)
    c.getresponse().read()
    for i in range(pods):
        c.request("POST", "/api/v1/namespaces/%s/pods" % ns, json.dumps(
            {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p%d" % i},
             "spec": {"containers": [{"name": "c", "image": "busybox"}]}}), h)
        r = c.getresponse()
        r.read()
        if r.status != 201:
            fail("creating pod %d answered %d" % (i, r.status))
    c.close()


def attack_unread_namespaced_watches(n, ns, pods, reader_token):
    """n watches of a namespace of `pods` pods from a read-only token, never read:
    /healthz and a write are answered within their deadlines meanwhile, and
    once the client leaves the server goes idle."""
    fill_namespace(ns, pods)
    socks = []
    for i in range(n):
        s = connect("127.0.0.%d" % (2 + i % 4))
        s.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
        s.sendall(("GET /api/v1/namespaces/%s/pods?watch=1 HTTP/1.1\r\nHost: x\r\n"
                   "Authorization: Bearer %s\r\n\r\n" % (ns, reader_token)).encode())
        socks.append(s)
    time.sleep(1)
    worst = 0.0
    for _ in range(5):
        ok, took = healthz_ok()
        worst = max(worst, took)
        if not ok:
            fail("/healthz beside %d unread watches failed (%.1f s)" % (n, took))
        time.sleep(0.2)
    body = json.dumps({"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "writer"},
                       "spec": {"containers": [{"name": "c", "image": "busybox"}]}})
    status, _ = request("/api/v1/namespaces/%s/pods" % ns, method="POST",
                        body=body.encode(), timeout=10)
    if status != 201:
        fail("a write beside %d unread watches answered %d" % (n, status))
    for s in socks:
        s.close()
    # Idle (under a tenth of a CPU over a second) soon after the client left:
    # what was already being produced may finish, nothing goes on for minutes.
    left = time.monotonic()
    while True:
        before = cpu_seconds()
        time.sleep(1)
        busy = cpu_seconds() - before
        if busy < 0.1:
            break
        if time.monotonic() - left > 30:
            fail("the server still works 30 s after the watches closed (%.2f CPU s in 1 s)"
                 % busy)
    print("%d unread watches of %d pods: /healthz within %.2f s, a write served, idle "
          "%.0f s after they closed" % (n, pods, worst, time.monotonic() - left))


def attack_stalled_watch(path, wait_s):
    """A watch whose client stops reading with more pending than the sockets
    hold: the server must have closed it after wait_s (the client relists)."""
    s = connect()
    s.sendall(("GET %s HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer %s\r\n\r\n"
               % (path, TOKEN)).encode())
    time.sleep(wait_s)
    s.settimeout(5)
    got = 0
    try:
        while True:
            chunk = s.recv(1 << 20)
            if not chunk:
                break
            got += len(chunk)
    except socket.timeout:
        fail("a watch that stopped reading was still open after %d s (%d bytes read)"
             % (wait_s, got))
    finally:
        s.close()
    print("a watch that stopped reading was closed (%d bytes were in the sockets)" % got)


def attack_watch_true(path):
    """watch=True (the Python client's spelling) streams events, not a List."""
    s = connect()
    s.sendall(("GET %s HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer %s\r\n\r\n"
               % (path, TOKEN)).encode())
    data = b""
    deadline = time.monotonic() + 5
    while b'"type":"ADDED"' not in data and time.monotonic() < deadline:
        data += s.recv(65536)
    s.close()
    if b'"type":"ADDED"' not in data or b'"kind":"PodList"' in data:
        fail("%s did not stream watch events: %r" % (path, data[:200]))
    print("%s streams watch events" % path)


class Trickler:
    """Sockets that send a request line, then one header byte at a time and
    never finish; each reopened when the server closes it.  Records how long
    each lived (seconds from connect to the server's close)."""

    def __init__(self, n_per_addr, n_addrs, path="/api/v1/pods"):
        self.slots = [("127.0.0.%d" % (2 + a), None, 0.0)
                      for a in range(n_addrs) for _ in range(n_per_addr)]
        self.path = path
        self.lifetimes = []
        self.refused = 0

    def _open(self, i):
        src = self.slots[i][0]
        try:
            s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
            s.bind((src, 0))
            s.settimeout(2)
            s.connect(("127.0.0.1", PORT))
            s.sendall(("GET %s HTTP/1.1\r\nHost: x\r\n" % self.path).encode())
            s.setblocking(False)
            self.slots[i] = (src, s, time.monotonic())
        except OSError:
            self.refused += 1
            self.slots[i] = (src, None, 0.0)

    def _closed(self, i):
        src, s, t0 = self.slots[i]
        self.lifetimes.append(time.monotonic() - t0)
        s.close()
        self.slots[i] = (src, None, 0.0)

    def step(self):
        """Reopen closed slots, send a byte on each open one, note closes."""
        for i, (src, s, t0) in enumerate(self.slots):
            if s is None:
                self._open(i)
                continue
            try:
                s.recv(1)  # EOF or an answer: the server ended the request
                self._closed(i)
                continue
            except BlockingIOError:
                pass
            except OSError:
                self._closed(i)
                continue
            try:
                s.send(b"X")
            except BlockingIOError:
                pass
            except OSError:
                self._closed(i)

    def open_count(self):
        return sum(1 for _, s, _ in self.slots if s is not None)

    def close(self):
        for _, s, _ in self.slots:
            if s is not None:
                s.close()


def attack_slowloris(n_per_addr, n_addrs, seconds, header_timeout):
    """Slowloris: sockets trickling header bytes fill the connection cap and
    are reopened as soon as they are closed.  Meanwhile a client sends whole
    requests: every one is answered, and no trickling socket outlives the
    header deadline (plus the reaper's tick and this loop's)."""
    t = Trickler(n_per_addr, n_addrs)
    served = asked = 0
    slowest = 0.0
    t.step()
    lease = os.environ.get("PK_NODE_LEASE")
    if lease:  # the node's only heartbeat, once the sockets fill the cap
        t.step()
        status, _ = request("/apis/coordination.k8s.io/v1/namespaces/kube-node-lease/leases",
                            method="POST", body=json.dumps({
                                "apiVersion": "coordination.k8s.io/v1", "kind": "Lease",
                                "metadata": {"name": lease},
                                "spec": {"holderIdentity": lease}}).encode())
        if status != 201:
            fail("creating the Lease of %s answered %s" % (lease, status))
    end = time.monotonic() + seconds
    next_ask = time.monotonic() + 0.5
    while time.monotonic() < end:
        t.step()
        if time.monotonic() >= next_ask:
            asked += 1
            t0 = time.monotonic()
            try:
                status, _ = request(LEGIT_PATH, timeout=5.0,
                                    token=None if LEGIT_PATH == "/healthz" else TOKEN)
            except OSError as e:
                status = "%s" % e
            took = time.monotonic() - t0
            slowest = max(slowest, took)
            if status == 200:
                served += 1
            else:
                print("legitimate request %d: %s after %.2f s" % (asked, status, took))
            next_ask = time.monotonic() + 0.5
        time.sleep(0.2)
    must = os.environ.get("PK_MUST_EXIST")
    if must:  # still there at the end of the flood
        status, _ = request(must, timeout=5.0)
        if status != 200:
            fail("%s answered %s at the end of the flood" % (must, status))
    still_open = t.open_count()
    t.close()
    longest = max(t.lifetimes) if t.lifetimes else 0.0
    print("slowloris %d x %d sockets for %d s: %d reopened, %d refused at connect, "
          "%d/%d legitimate requests served (slowest %.2f s), longest trickler %.1f s"
          % (n_per_addr, n_addrs, seconds, len(t.lifetimes), t.refused, served, asked,
             slowest, longest))
    if served != asked:
        fail("%d of %d legitimate requests not served during the slowloris"
             % (asked - served, asked))
    if not t.lifetimes:
        fail("no trickling socket was ever closed (%d still open)" % still_open)
    # (the margin is this loop's own pace on a loaded machine)
    if longest > header_timeout + 5.0:
        fail("a socket trickling header bytes stayed open %.1f s (header deadline %.1f s)"
             % (longest, header_timeout))


def attack_cap_closes(n):
    """n watches fill a cap of n connections; one more connection is closed
    at once (not left in the backlog) and a request on it gets nothing."""
    socks = []
    for i in range(n):
        s = connect("127.0.0.%d" % (2 + i % 8))
        s.sendall(("GET /api/v1/namespaces/default/pods?watch=1 HTTP/1.1\r\nHost: x\r\n"
                   "Authorization: Bearer %s\r\n\r\n" % TOKEN).encode())
        socks.append(s)
    time.sleep(1)
    t0 = time.monotonic()
    s = connect("127.0.0.20")
    s.sendall(b"GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n")
    closed = closed_by_server(s, 3.0)
    took = time.monotonic() - t0
    s.close()
    for w in socks:
        w.close()
    print("connection %d beside %d watches: %s after %.2f s"
          % (n + 1, n, "closed" if closed else "still open", took))
    if not closed:
        fail("a connection past the cap was left waiting instead of closed")


def main():
    attack = sys.argv[3]
    args = sys.argv[4:]
    if attack == "idle-flood":
        attack_idle_flood(int(args[0]), int(args[1]), int(args[2]))
    elif attack == "slowloris":
        attack_slowloris(int(args[0]), int(args[1]), int(args[2]), float(args[3]))
    elif attack == "cap-closes":
        attack_cap_closes(int(args[0]))
    elif attack == "anonymous-bodies":
        attack_anonymous_bodies(int(args[0]), int(args[1]))
    elif attack == "read-only-bodies":
        attack_anonymous_bodies(int(args[0]), int(args[1]), token=args[2], want=403)
    elif attack == "writer-bodies":
        attack_writer_bodies(int(args[0]), int(args[1]))
    elif attack == "patch-bomb":
        attack_patch_bomb(args[0])
    elif attack == "unread-watches":
        attack_unread_watches(int(args[0]), args[1])
    elif attack == "unread-namespaced-watches":
        attack_unread_namespaced_watches(int(args[0]), args[1], int(args[2]), args[3])
    elif attack == "stalled-watch":
        attack_stalled_watch(args[0], int(args[1]))
    elif attack == "watch-true":
        attack_watch_true(args[0])
    elif attack == "proto-amplify":
        attack_proto_amplify(args[0], int(args[1]), int(args[2]))
    elif attack == "dup-warnings":
        attack_dup_warnings(args[0], args[1], args[2], int(args[3]), int(args[4]))
    elif attack == "request":
        # request METHOD PATH [BODY]: prints "STATUS BODY"
        status, body = request(args[1], method=args[0],
                               body=args[2].encode() if len(args) > 2 else b"")
        print(status, body.decode(errors="replace"))
    else:
        fail("unknown attack " + attack)


if __name__ == "__main__":
    main()
