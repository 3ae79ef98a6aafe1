#!/usr/bin/env python3
"""A minimal Kubernetes API server for podagent's publishing tests.

Serves GET/POST /api/v1/nodes[/NAME] and PATCH of NAME and NAME/status, and
GET/POST/PATCH of coordination.k8s.io/v1 Leases
(/apis/coordination.k8s.io/v1/namespaces/NS/leases[/NAME]), with JSON merge
patch
(RFC 7386; any other Content-Type is 415).  Bearer tokens are checked
against --tokens FILE (one per line, re-read on every request; absent file:
no auth).  --tls-cert/--tls-key serve https.  --fail-first N answers the first N requests with 503.  Every
request is appended to --log as one JSON line {method, path, auth, ctype,
status, body, agent (the User-Agent)}; the nodes are written to --state after each change.

  fake_apiserver.py --port-file F --log L --state S [--seed NODES.json]
"""
import argparse, json, os, ssl, sys, threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

lock = threading.Lock()
nodes = {}
leases = {}   # "NS/NAME" -> Lease
args = None
count = 0


def merge(target, patch):
    if not isinstance(patch, dict):
        return patch
    if not isinstance(target, dict):
        target = {}
    for k, v in patch.items():
        if v is None:
            target.pop(k, None)
        else:
            target[k] = merge(target.get(k), v)
    return target


def tokens():
    try:
        with open(args.tokens) as f:
            return {l.strip() for l in f if l.strip()}
    except (OSError, TypeError):
        return None


class Handler(BaseHTTPRequestHandler):
    def log_message(self, *a):
        pass

    def reply(self, status, obj, body=None):
        data = json.dumps(obj).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)
        with open(args.log, "a") as f:
            f.write(json.dumps({"method": self.command, "path": self.path,
                                "auth": self.headers.get("Authorization"),
                                "ctype": self.headers.get("Content-Type"),
                                "status": status, "body": body,
                                "agent": self.headers.get("User-Agent")}) + "\n")
        with open(args.state + ".tmp", "w") as f:
            json.dump(nodes, f)
        with open(args.state + ".leases.tmp", "w") as f:
            json.dump(leases, f)
        os.replace(args.state + ".leases.tmp", args.state + ".leases")
        os.replace(args.state + ".tmp", args.state)

    def handle_any(self):
        global count
        n = int(self.headers.get("Content-Length") or 0)
        raw = self.rfile.read(n) if n else b""
        body = json.loads(raw) if raw else None
        with lock:
            count += 1
            if count <= args.fail_first:
                return self.reply(503, {"kind": "Status", "message": "warming up"}, body)
            ok = tokens()
            if ok is not None and self.headers.get("Authorization", "")[7:] not in ok:
                return self.reply(401, {"kind": "Status", "message": "Unauthorized"}, body)
            parts = self.path.split("/")
            if parts[:4] == ["", "apis", "coordination.k8s.io", "v1"]:
                return self.lease(parts, body)
            if self.path == "/api/v1/nodes" and self.command == "POST":
                name = body["metadata"]["name"]
                if name in nodes:
                    return self.reply(409, {"kind": "Status", "message": "exists"}, body)
                nodes[name] = body
                return self.reply(201, body, body)
            sub = parts[5] if len(parts) == 6 else None
            if len(parts) not in (5, 6) or parts[:4] != ["", "api", "v1", "nodes"] or \
                    sub not in (None, "status"):
                return self.reply(404, {"kind": "Status", "message": "no route"}, body)
            name = parts[4]
            if name not in nodes:
                return self.reply(404, {"kind": "Status", "message": "not found"}, body)
            if self.command == "GET":
                return self.reply(200, nodes[name], body)
            if self.command == "PATCH":
                if self.headers.get("Content-Type") != "application/merge-patch+json":
                    return self.reply(415, {"kind": "Status", "message": "media"}, body)
                if sub == "status":   # the subresource changes status only
                    body = {"status": body.get("status")}
                elif "status" in body:
                    del body["status"]
                nodes[name] = merge(nodes[name], body)
                return self.reply(200, nodes[name], body)
            return self.reply(405, {"kind": "Status", "message": "method"}, body)

    def lease(self, parts, body):
        # ["", "apis", "coordination.k8s.io", "v1", "namespaces", NS, "leases"[, NAME]]
        if len(parts) not in (7, 8) or parts[4] != "namespaces" or parts[6] != "leases":
            return self.reply(404, {"kind": "Status", "message": "no route"}, body)
        ns = parts[5]
        if len(parts) == 7:
            if self.command != "POST":
                return self.reply(405, {"kind": "Status", "message": "method"}, body)
            key = ns + "/" + body["metadata"]["name"]
            if key in leases:
                return self.reply(409, {"kind": "Status", "message": "exists"}, body)
            leases[key] = body
            return self.reply(201, body, body)
        key = ns + "/" + parts[7]
        if key not in leases:
            return self.reply(404, {"kind": "Status", "message": "not found"}, body)
        if self.command == "GET":
            return self.reply(200, leases[key], body)
        if self.command == "PATCH":
            leases[key] = merge(leases[key], body)
            return self.reply(200, leases[key], body)
        return self.reply(405, {"kind": "Status", "message": "method"}, body)

    do_GET = do_POST = do_PATCH = handle_any


def main():
    global args
    p = argparse.ArgumentParser()
    p.add_argument("--port-file", required=True)
    p.add_argument("--log", required=True)
    p.add_argument("--state", required=True)
    p.add_argument("--seed")
    p.add_argument("--tokens")
    p.add_argument("--fail-first", type=int, default=0)
    p.add_argument("--tls-cert")
    p.add_argument("--tls-key")
    args = p.parse_args()
    if args.seed:
        with open(args.seed) as f:
            for n in json.load(f):
                nodes[n["metadata"]["name"]] = n
    srv = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    if args.tls_cert:
        ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
        ctx.load_cert_chain(args.tls_cert, args.tls_key)
        srv.socket = ctx.wrap_socket(srv.socket, server_side=True)
    with open(args.port_file + ".tmp", "w") as f:
        f.write(str(srv.server_address[1]))
    os.replace(args.port_file + ".tmp", args.port_file)
    srv.serve_forever()


if __name__ == "__main__":
    main()
