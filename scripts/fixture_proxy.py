#!/usr/bin/env python3
"""A forward HTTP proxy on loopback for Tern's proxy tests: plain-HTTP requests in absolute form
(`GET http://127.0.0.1:P/path HTTP/1.1`) are forwarded to loopback targets only, and every
response it relays carries `Via: 1.1 tern-fixture-proxy` and `X-Proxied-Count: N` (requests
relayed so far); the request it forwards carries the same `Via`. Anything else (CONNECT, other hosts) gets 403.
"""
import argparse
import http.client
import itertools
import threading
from http.server import BaseHTTPRequestHandler
from urllib.parse import urlsplit

from pooled_server import PooledHTTPServer

counter = itertools.count(1)
lock = threading.Lock()


class Proxy(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    disable_nagle_algorithm = True

    def log_message(self, *args):
        pass

    def _relay(self):
        target = urlsplit(self.path)
        if target.scheme != "http" or target.hostname not in ("127.0.0.1", "localhost"):
            self.send_error(403, "loopback http targets only")
            return
        length = int(self.headers.get("Content-Length") or 0)
        body = self.rfile.read(length) if length else None
        headers = {k: v for k, v in self.headers.items() if k.lower() not in ("proxy-connection", "connection", "keep-alive")}
        headers["Via"] = "1.1 tern-fixture-proxy"
        upstream = http.client.HTTPConnection(target.hostname, target.port or 80, timeout=30)
        path = target.path + ("?" + target.query if target.query else "")
        upstream.request(self.command, path or "/", body=body, headers=headers)
        reply = upstream.getresponse()
        data = reply.read()
        with lock:
            n = next(counter)
        self.send_response(reply.status)
        for name, value in reply.getheaders():
            if name.lower() not in ("transfer-encoding", "connection", "content-length", "keep-alive", "server", "date"):
                self.send_header(name, value)
        self.send_header("Via", "1.1 tern-fixture-proxy")
        self.send_header("X-Proxied-Count", str(n))
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)
        upstream.close()

    do_GET = do_POST = do_PUT = do_DELETE = do_PATCH = do_HEAD = _relay

    def do_CONNECT(self):
        self.send_error(403, "no tunnels here")


class Server(PooledHTTPServer):
    """Accepts at the suite's pace: see pooled_server.py."""


if __name__ == "__main__":
    parser = argparse.ArgumentParser()
    parser.add_argument("--port", type=int, required=True)
    Server(("127.0.0.1", parser.parse_args().port), Proxy).serve_forever()
