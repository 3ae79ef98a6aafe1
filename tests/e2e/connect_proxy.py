#!/usr/bin/env python3
"""A CONNECT proxy for the kubeconfig tests: it tunnels each connection to
the host and port it is asked for and logs every request line, so a test
can tell that a client went through it.  Writes its port to --port-file."""
import argparse
import os
import socket
import threading


def pipe(src, dst):
    try:
        while True:
            data = src.recv(65536)
            if not data:
                break
            dst.sendall(data)
    except OSError:
        pass
    for s in (src, dst):
        try:
            s.shutdown(socket.SHUT_RDWR)
        except OSError:
            pass


def handle(client, log):
    head = b""
    while b"\r\n\r\n" not in head:
        data = client.recv(4096)
        if not data:
            client.close()
            return
        head += data
    line = head.split(b"\r\n", 1)[0].decode("latin-1")
    with open(log, "a") as f:
        f.write(line + "\n")
    parts = line.split()
    if len(parts) < 2 or parts[0] != "CONNECT":
        client.sendall(b"HTTP/1.1 405 Method Not Allowed\r\nContent-Length: 0\r\n\r\n")
        client.close()
        return
    host, port = parts[1].rsplit(":", 1)
    try:
        upstream = socket.create_connection((host.strip("[]"), int(port)), timeout=10)
    except OSError:
        client.sendall(b"HTTP/1.1 502 Bad Gateway\r\nContent-Length: 0\r\n\r\n")
        client.close()
        return
    upstream.settimeout(None)
    client.sendall(b"HTTP/1.1 200 Connection established\r\n\r\n")
    threading.Thread(target=pipe, args=(client, upstream), daemon=True).start()
    pipe(upstream, client)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--port-file", required=True)
    ap.add_argument("--log", required=True)
    args = ap.parse_args()
    srv = socket.socket()
    srv.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    srv.bind(("127.0.0.1", 0))
    srv.listen(16)
    with open(args.port_file + ".tmp", "w") as f:
        f.write(str(srv.getsockname()[1]))
    os.rename(args.port_file + ".tmp", args.port_file)
    while True:
        client, _ = srv.accept()
        threading.Thread(target=handle, args=(client, args.log), daemon=True).start()


if __name__ == "__main__":
    main()
