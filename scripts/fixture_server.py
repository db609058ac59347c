#!/usr/bin/env python3
"""Tern's fault fixture server: the misbehaving server httpbin cannot be.

Loopback only. Endpoints (all GET unless noted):
  /stall?seconds=S          accept, read the request, answer nothing for S seconds, then close
  /stall-body?seconds=S     send headers and 5 body bytes, then stall S seconds
  /drip?chunks=N&interval=I chunked body, N chunks of 8 bytes, I seconds apart
  /reset                    read the request, then reset the connection (RST)
  /truncated                Content-Length: 100 but only 10 bytes, then close
  /malformed-json           200, application/json, body '{"city": "Bei'
  /json?n=N                 200, a JSON object with N items
  /no-content-type          200, JSON body without a Content-Type header
  /latin1                   200, text/plain; charset=iso-8859-1, body 'café' in Latin-1
  /empty-json               200, application/json, empty body
  /pattern?n=N              200, N bytes where byte i is (i * 31 + 7) % 251, for integrity checks
  /slow-pattern?n=N&chunk=C&interval=I  /pattern with Content-Length, C bytes at a time, I seconds apart
  /counted?key=K&seconds=S  counts a request under K, waits S seconds, answers {"key": K, "n": count}
  /count?key=K              how many /counted requests K has received: {"key": K, "count": N}
  /counted?key=K&hold=H, /slow-pattern?...&hold=H  wait (after the count; after the first chunk)
                            until /release?key=H, at most 60 s: a test decides when the answer goes on
  /release?key=H            lets every request held under H go on (and any that comes later)
  /cached?key=K&etag=E&lm=1&cc=C&code=N  a cacheable JSON resource (see _cached), counted under K;
                        date=S age=S expires=S|raw:V lmago=S delay=S set Date, Age, Expires,
                        Last-Modified (seconds from now) and a delay before answering; hold=H
                        holds the answer until /release?key=H
  /documents/K/name=value/...  /cached with its settings in the path (no query)
  /cached-state?key=K&state=up|503|reset  makes /cached?key=K answer normally, 503, or reset
  /echo (any method)        200, JSON with method, path, query, headers, body (text)
  /redirect?status=S&to=URL&key=K (any method)  answers S with Location: URL, counted under K
  /redirect-loop?key=K      302 to itself, counted under K
  /redirect-chain?n=N&key=K 302 to /redirect-chain?n=N-1 until n=0, then 200 {"key": K, "hops": ...}; counted under K
  /flaky?key=K&fail=N&status=S&retry_after=V&mode=reset (any method)  the first N requests under K fail (status S,
                            default 503, with Retry-After: V if given; "date:D" sends an HTTP date D seconds ahead;
                            then_retry_after=V2 sends V2 from the second request on; mode=reset resets the
                            connection instead; mode=stall&seconds=S waits S seconds first),
                            then 200 {"key": K, "n": count}
  /flaky-times?key=K        the arrival times (seconds, monotonic) of K's /flaky requests: {"times": [...]}
  /huge?announce=N          200 with Content-Length: N, then zero bytes as fast as the client reads, until it hangs up
  /huge?announce=N&silent=S the head alone (Content-Length: N), then silence for S seconds
  /huge?chunked=1           200, chunked, zero bytes without end (an unannounced body; no line feed in it);
                            type=T sends Content-Type T (text/event-stream: an event that never ends)
  /gzip-bomb?mb=N            200, Content-Encoding: gzip, a ~N KB body that inflates to N MB of zeros
  POST /inflate             the body decoded by its Content-Encoding (gzip, deflate): {encoding, received,
                            length, sha256, head, content_type, body (up to 64 KB)}; 400 when it does not decode
  /zstd                      200, a 6 KB JSON document, zstd-compressed when Accept-Encoding offers zstd
  /zstd-bomb?mb=N            200, Content-Encoding: zstd, a tiny body that decodes to N MB of zeros (256)
  /reset-body               Content-Length: 1000, 100 bytes, then a reset (RST) mid-body
  /redirect-nowhere?location=none|garbage|ftp  302 with a JSON body and no Location, "http://[::1", or an ftp URL
  /framing?case=C           10 body bytes under Content-Length: 5 and 10 (conflict), 10 twice (same), "10, 10"
                            (list), -1 (negative), "ten" (text), or 5 beside Transfer-Encoding: chunked (chunked)
  /bad-chunked              chunked encoding with a chunk size that is not hexadecimal
  /wrong-type               200, text/html body (for requests that expect JSON)
  /huge-headers             200 with about 1 MB of response headers
  /basic-401               401 with WWW-Authenticate: Basic and a JSON body (any method)
  /envelope?code=C&message=M  200 {"code": C, "message": M, "data": {"city": "Beijing"}} (any method)
  /session?key=K            counted under K; 200 {"code": 1002, "message": "login required"} until /login?key=K,
                            then {"code": 0, "data": {"n": count}}; /logout?key=K ends the session again
  /auth/protected?key=K     200 {"key": K, "n": count} when Authorization is "Bearer <K's token>", else 401
                            (counted under K, 401s under "K:401"); K's token is "t0" until refreshed
  /auth/refresh?key=K&fail=1  makes a new token "t<N>" for K and answers {"token": ...} (fail=1: 500),
                            counted under "K:refresh"
  /cookie-jar/set?NAME=VALUE  302 to /cookie-jar/show with Set-Cookie: NAME=VALUE; Path=/cookie-jar
  /cookie-jar/show          200 {"cookie": the request's Cookie header}
  Transfers (downloads with Range, server-sent events, multipart uploads): see fixture_transfers.py
  /effects/NAME (Idempotency-Key honoured, effects counted): see fixture_effects.py
"""
import argparse
import json
import os
import sys
import socket
import struct
import threading
import time
import zlib
from http.server import BaseHTTPRequestHandler
from urllib.parse import urlparse, parse_qs

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import fixture_transfers  # noqa: E402
import fixture_effects  # noqa: E402
from pooled_server import PooledHTTPServer  # noqa: E402


COUNTS = {}
TIMES = {}
STATES = {}
COUNTS_LOCK = threading.Lock()
# Held requests wait on these (see /release).
RELEASES = {}
RELEASES_LOCK = threading.Lock()


def release_event(key):
    with RELEASES_LOCK:
        return RELEASES.setdefault(key, threading.Event())


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    # Seconds added to the Date header of the response being written (/cached's date=).
    date_offset = 0.0

    def log_message(self, *args):
        pass

    def date_time_string(self, timestamp=None):
        from email.utils import formatdate
        return formatdate((timestamp or time.time()) + self.date_offset, usegmt=True)

    def _query(self):
        return {k: v[-1] for k, v in parse_qs(urlparse(self.path).query).items()}

    def _send(self, status, body, content_type="application/json", extra=None):
        self.send_response(status)
        if content_type:
            self.send_header("Content-Type", content_type)
        self.send_header("Content-Length", str(len(body)))
        for k, v in (extra or {}).items():
            self.send_header(k, v)
        self.end_headers()
        self.wfile.write(body)

    def _body(self):
        if "chunked" in (self.headers.get("Transfer-Encoding") or "").lower():
            return fixture_transfers.read_chunked(self.rfile)[0]
        length = int(self.headers.get("Content-Length") or 0)
        return self.rfile.read(length) if length else b""

    def do_GET(self):
        route = urlparse(self.path).path
        q = self._query()
        if route == "/stall":
            time.sleep(float(q.get("seconds", "10")))
            self.close_connection = True
            return
        if route == "/stall-body":
            self.send_response(200)
            self.send_header("Content-Type", "text/plain")
            self.send_header("Content-Length", "100")
            self.end_headers()
            self.wfile.write(b"12345")
            self.wfile.flush()
            time.sleep(float(q.get("seconds", "10")))
            self.close_connection = True
            return
        if route == "/drip":
            chunks, interval = int(q.get("chunks", "5")), float(q.get("interval", "0.2"))
            self.send_response(200)
            self.send_header("Content-Type", "text/plain")
            self.send_header("Transfer-Encoding", "chunked")
            self.end_headers()
            for i in range(chunks):
                piece = ("chunk%03d" % i).encode()
                self.wfile.write(b"%x\r\n%s\r\n" % (len(piece), piece))
                self.wfile.flush()
                time.sleep(interval)
            self.wfile.write(b"0\r\n\r\n")
            return
        if route == "/reset":
            self.connection.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
            self.connection.close()
            self.close_connection = True
            return
        if route == "/truncated":
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", "100")
            self.end_headers()
            self.wfile.write(b'{"partial"')
            self.wfile.flush()
            self.close_connection = True
            return
        if route == "/malformed-json":
            return self._send(200, b'{"city": "Bei')
        if route == "/json":
            n = int(q.get("n", "3"))
            return self._send(200, json.dumps({"code": 0, "items": list(range(n))}).encode())
        if route == "/no-content-type":
            return self._send(200, b'{"ok": true}', content_type=None)
        if route == "/latin1":
            return self._send(200, "café".encode("latin-1"), content_type="text/plain; charset=iso-8859-1")
        if route == "/empty-json":
            return self._send(200, b"")
        if route == "/pattern":
            n = int(q.get("n", "1024"))
            body = bytes((i * 31 + 7) % 251 for i in range(n))
            return self._send(200, body, content_type="application/octet-stream")
        if route == "/slow-pattern":
            # /pattern's bytes with a Content-Length, written `chunk` bytes at a time, `interval` apart.
            n, chunk = int(q.get("n", "65536")), int(q.get("chunk", "8192"))
            interval = float(q.get("interval", "0.02"))
            body = bytes((i * 31 + 7) % 251 for i in range(n))
            self.send_response(200)
            self.send_header("Content-Type", "application/octet-stream")
            self.send_header("Content-Length", str(n))
            self.end_headers()
            for start in range(0, n, chunk):
                self.wfile.write(body[start:start + chunk])
                self.wfile.flush()
                if start == 0 and q.get("hold"):
                    release_event(q["hold"]).wait(60)
                time.sleep(interval)
            return
        if route == "/cached":
            return self._cached(q)
        if route.startswith("/effects/"):
            return self._effects(route)
        if route.startswith("/documents/"):
            # /cached without a query: the key and the settings are path segments,
            # /documents/K/name=value/... (a URL that heuristic freshness applies to).
            parts = route.split("/")[2:]
            settings = dict(part.split("=", 1) for part in parts[1:] if "=" in part)
            return self._cached({"key": parts[0], **settings})
        if route == "/varied":
            # A response with Vary: ?vary, counted under ?key, that says which values it saw.
            key = q.get("key", "")
            with COUNTS_LOCK:
                COUNTS[key] = COUNTS.get(key, 0) + 1
                n = COUNTS[key]
            names = [name.strip() for name in q.get("vary", "").split(",") if name.strip() and name.strip() != "*"]
            seen = {name.lower(): self.headers.get(name) for name in names}
            return self._send(200, json.dumps({"n": n, "seen": seen}).encode(), extra={"Vary": q.get("vary", "")})
        if route == "/cached-state":
            with COUNTS_LOCK:
                STATES[q.get("key", "")] = q.get("state", "up")
            return self._send(200, b'{"ok": true}')
        if route == "/counted":
            key = q.get("key", "")
            with COUNTS_LOCK:
                COUNTS[key] = COUNTS.get(key, 0) + 1
                n = COUNTS[key]
            if q.get("hold"):
                release_event(q["hold"]).wait(60)
            time.sleep(float(q.get("seconds", "0")))
            return self._send(200, json.dumps({"key": key, "n": n, "q": q.get("q", "")}).encode())
        if route == "/release":
            release_event(q.get("key", "")).set()
            return self._send(200, b'{"released": true}')
        if route == "/count":
            key = q.get("key", "")
            with COUNTS_LOCK:
                n = COUNTS.get(key, 0)
            return self._send(200, json.dumps({"key": key, "count": n}).encode())
        if route == "/echo":
            return self._echo()
        if route.startswith("/redirect"):
            return self._redirect(route, q)
        if route == "/flaky":
            return self._flaky(q)
        if route == "/reset-body":
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", "1000")
            self.end_headers()
            self.wfile.write(b"[" + b"1," * 49 + b"1")
            self.wfile.flush()
            time.sleep(0.05)
            self.connection.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
            self.connection.close()
            self.close_connection = True
            return
        if route == "/framing":
            return self._framing(q.get("case", ""))
        if route == "/bad-chunked":
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.send_header("Transfer-Encoding", "chunked")
            self.send_header("Connection", "close")
            self.end_headers()
            self.wfile.write(b"4\r\n[1,2\r\nzz\r\n]\r\n0\r\n\r\n")
            self.close_connection = True
            return
        if route == "/wrong-type":
            return self._send(200, b"<html><body>maintenance</body></html>", content_type="text/html")
        if route == "/huge-headers":
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            for i in range(1024):
                self.send_header("X-Filler-%d" % i, "x" * 1000)
            self.send_header("Content-Length", "2")
            self.send_header("Connection", "close")
            self.end_headers()
            self.wfile.write(b"{}")
            self.close_connection = True
            return
        if route == "/huge":
            return self._huge(q)
        if route == "/zstd":
            # zstd when the request offers it (what a server does), else as is.
            body = json.dumps({"encoded": "zstd", "text": "雨 " * 2000}, ensure_ascii=False).encode()
            if "zstd" in (self.headers.get("Accept-Encoding") or ""):
                return self._send(200, zstd_compress(body), content_type="application/json", extra={"Content-Encoding": "zstd"})
            return self._send(200, body, content_type="application/json")
        if route == "/zstd-bomb":
            body = zstd_bomb(int(q.get("mb", "256")))
            return self._send(200, body, content_type="application/octet-stream", extra={"Content-Encoding": "zstd"})
        if route == "/gzip-bomb":
            body = gzip_bomb(int(q.get("mb", "1024")))
            return self._send(200, body, content_type="application/octet-stream", extra={"Content-Encoding": "gzip"})
        if route == "/basic-401":
            return self._send(401, b'{"error": "need auth", "code": 401}', extra={"WWW-Authenticate": 'Basic realm="fixture"'})
        if route in ("/envelope", "/session", "/login", "/logout") or route.startswith("/auth/"):
            return self._session(route, q)
        if route == "/download":
            return fixture_transfers.download(self, q)
        if route == "/download-state":
            return fixture_transfers.download_state(self, q)
        if route == "/download-stats":
            return fixture_transfers.download_stats(self, q)
        if route == "/sse":
            return fixture_transfers.sse(self, q)
        if route == "/cookie-jar/set":
            # Path-scoped, so that no other test's request carries it: 302 to /cookie-jar/show.
            cookies = ["%s=%s; Path=/cookie-jar" % (k, v) for k, v in q.items()]
            self.send_response(302)
            for cookie in cookies:
                self.send_header("Set-Cookie", cookie)
            self.send_header("Location", "/cookie-jar/show")
            self.send_header("Content-Length", "0")
            self.end_headers()
            return
        if route == "/cookie-jar/show":
            return self._send(200, json.dumps({"cookie": self.headers.get("Cookie")}).encode())
        if route == "/flaky-times":
            with COUNTS_LOCK:
                times = list(TIMES.get(q.get("key", ""), []))
            return self._send(200, json.dumps({"times": times}).encode())
        self._send(404, b'{"error": "no such fixture"}')

    def _cached(self, q):
        # A cacheable resource: counts requests under K and conditional ones under "K:304"; with
        # etag=E it sends ETag "E" and answers If-None-Match "E" with 304; lm=1 adds Last-Modified;
        # cc=... sets Cache-Control (cc304=... instead on a 304); /cached-state?key=K&state=503|reset|up
        # breaks or mends it.
        key = q.get("key", "")
        etag = q.get("etag")
        with COUNTS_LOCK:
            COUNTS[key] = COUNTS.get(key, 0) + 1
            n = COUNTS[key]
            state = STATES.get(key, "up")
        if state == "reset":
            self.connection.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
            self.connection.close()
            self.close_connection = True
            return
        if state == "503":
            return self._send(503, b'{"error": "down"}')
        if q.get("delay"):
            time.sleep(float(q["delay"]))
        if q.get("hold"):
            release_event(q["hold"]).wait(60)
        try:
            self.date_offset = float(q.get("date", "0"))
            self._cached_answer(q, key, etag, n)
        finally:
            self.date_offset = 0.0

    def _cached_answer(self, q, key, etag, n):
        from email.utils import formatdate
        extra = {}
        if etag:
            extra["ETag"] = '"%s"' % etag
        if q.get("lm"):
            extra["Last-Modified"] = "Wed, 21 Oct 2015 07:28:00 GMT"
        if q.get("lmago"):
            extra["Last-Modified"] = formatdate(time.time() - float(q["lmago"]), usegmt=True)
        if q.get("cc"):
            extra["Cache-Control"] = q["cc"]
        if q.get("age"):
            extra["Age"] = q["age"]
        expires = q.get("expires")
        if expires:
            extra["Expires"] = expires[4:] if expires.startswith("raw:") else formatdate(time.time() + float(expires), usegmt=True)
        conditional = self.headers.get("If-None-Match") or self.headers.get("If-Modified-Since")
        if conditional:
            with COUNTS_LOCK:
                COUNTS[key + ":304"] = COUNTS.get(key + ":304", 0) + 1
            if (etag and self.headers.get("If-None-Match") == '"%s"' % etag) or ((q.get("lm") or q.get("lmago")) and self.headers.get("If-Modified-Since")):
                self.send_response(304)
                if q.get("cc304"):
                    extra["Cache-Control"] = q["cc304"]  # a 304 that changes what the stored response says
                for name, value in extra.items():
                    self.send_header(name, value)
                self.send_header("Content-Length", "0")
                self.end_headers()
                return
        body = json.dumps({"key": key, "n": n, "code": int(q.get("code", "0")), "q": q.get("q", "")}).encode()
        return self._send(200, body, extra=extra)

    def _framing(self, case):
        # A body of 10 bytes under Content-Length headers that conflict, are invalid, or sit beside
        # chunked encoding; the connection closes after it.
        lengths = {"conflict": ["5", "10"], "same": ["10", "10"], "list": ["10, 10"], "negative": ["-1"],
                   "text": ["ten"], "chunked": ["5"]}.get(case, ["10"])
        self.send_response(200)
        self.send_header("Content-Type", "application/octet-stream")
        for length in lengths:
            self.send_header("Content-Length", length)
        if case == "chunked":
            self.send_header("Transfer-Encoding", "chunked")
        self.send_header("Connection", "close")
        self.end_headers()
        body = b"0123456789"
        self.wfile.write(b"a\r\n" + body + b"\r\n0\r\n\r\n" if case == "chunked" else body)
        self.wfile.flush()
        self.close_connection = True

    def _flaky(self, q):
        key = q.get("key", "")
        self._body()
        with COUNTS_LOCK:
            COUNTS[key] = COUNTS.get(key, 0) + 1
            n = COUNTS[key]
            TIMES.setdefault(key, []).append(time.monotonic())
        if n <= int(q.get("fail", "0")):
            if q.get("mode") == "stall":
                time.sleep(float(q.get("seconds", "2")))
            if q.get("mode") == "reset":
                self.connection.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
                self.connection.close()
                self.close_connection = True
                return
            extra = {}
            retry_after = q.get("retry_after")
            if n > 1 and q.get("then_retry_after"):
                retry_after = q.get("then_retry_after")
            if retry_after and retry_after.startswith("date:"):
                from email.utils import formatdate
                extra["Retry-After"] = formatdate(time.time() + float(retry_after[5:]), usegmt=True)
            elif retry_after:
                extra["Retry-After"] = retry_after
            return self._send(int(q.get("status", "503")), json.dumps({"key": key, "n": n, "error": "busy"}).encode(), extra=extra)
        return self._send(200, json.dumps({"key": key, "n": n}).encode())

    def _huge(self, q):
        # A body too large to buffer: announced (Content-Length) or not (chunked), sent until the
        # client goes away.
        block = b"\0" * 65536
        self.send_response(200)
        self.send_header("Content-Type", q.get("type", "application/octet-stream"))
        chunked = bool(q.get("chunked"))
        if chunked:
            self.send_header("Transfer-Encoding", "chunked")
        else:
            self.send_header("Content-Length", q.get("announce", str(2 ** 31)))
        # URLSession on Linux has been seen to reuse a connection whose body it abandoned on
        # cancel, reading the rest as the next response ("Received HTTP/0.9"): close it.
        self.send_header("Connection", "close")
        self.end_headers()
        self.close_connection = True
        if q.get("silent"):
            # The head alone, then nothing for that many seconds: a client that refuses an
            # announced length up front is done long before.
            time.sleep(float(q["silent"]))
            return
        try:
            while True:
                # About 60 MB/s per connection: fast, but a pause lets the other fixture
                # threads run (one Python process serves every test).
                time.sleep(0.001)
                if chunked:
                    self.wfile.write(b"%x\r\n" % len(block) + block + b"\r\n")
                else:
                    self.wfile.write(block)
        except (BrokenPipeError, ConnectionResetError, OSError):
            pass

    def _count(self, key):
        with COUNTS_LOCK:
            COUNTS[key] = COUNTS.get(key, 0) + 1
            return COUNTS[key]

    def _session(self, route, q):
        # Envelopes with business codes, a login session, and bearer tokens that can be refreshed.
        key = q.get("key", "")
        self._body()
        if route == "/envelope":
            body = {"code": int(q.get("code", "0")), "message": q.get("message", ""), "data": {"city": "Beijing"}}
            return self._send(200, json.dumps(body).encode())
        if route in ("/login", "/logout"):
            with COUNTS_LOCK:
                STATES[key + ":session"] = route == "/login"
            return self._send(200, b'{"code": 0}')
        if route == "/session":
            n = self._count(key)
            with COUNTS_LOCK:
                logged_in = STATES.get(key + ":session", False)
            body = {"code": 0, "data": {"n": n}} if logged_in else {"code": 1002, "message": "login required"}
            return self._send(200, json.dumps(body).encode())
        if route == "/auth/refresh":
            self._count(key + ":refresh")
            if q.get("fail"):
                return self._send(500, b'{"error": "refresh failed"}')
            with COUNTS_LOCK:
                generation = STATES.get(key + ":generation", 0) + 1
                STATES[key + ":generation"] = generation
            return self._send(200, json.dumps({"token": "t%d" % generation}).encode())
        if route == "/auth/protected":
            n = self._count(key)
            with COUNTS_LOCK:
                token = "t%d" % STATES.get(key + ":generation", 0)
            if self.headers.get("Authorization") != "Bearer " + token:
                self._count(key + ":401")
                return self._send(401, b'{"error": "unauthorized"}')
            return self._send(200, json.dumps({"key": key, "n": n}).encode())
        self._send(404, b'{"error": "no such fixture"}')

    def _redirect(self, route, q):
        key = q.get("key", "")
        if key:
            with COUNTS_LOCK:
                COUNTS[key] = COUNTS.get(key, 0) + 1
        body = self._body()
        if route == "/redirect-nowhere":
            # A 302 with a body and no usable Location: none, one that is not a URL, or a non-HTTP one.
            location = {"none": None, "garbage": "http://[::1", "ftp": "ftp://127.0.0.1/file"}.get(q.get("location", "none"))
            return self._send(302, b'{"moved": "nowhere"}', extra={"Location": location} if location else {})
        if route == "/redirect":
            status, location = int(q.get("status", "302")), q.get("to", "/echo")
        elif route == "/redirect-loop":
            status, location = 302, "/redirect-loop?key=%s" % key
        elif route == "/redirect-chain":
            n = int(q.get("n", "3"))
            if n <= 0:
                return self._send(200, json.dumps({"key": key, "method": self.command, "body": body.decode("utf-8", "replace")}).encode())
            status, location = 302, "/redirect-chain?n=%d&key=%s" % (n - 1, key)
        else:
            return self._send(404, b'{"error": "no such fixture"}')
        self._send(status, b'{"redirect": true}', extra={"Location": location})

    def _echo(self):
        parsed = urlparse(self.path)
        body = self._body()
        payload = {
            "method": self.command,
            "path": parsed.path,
            "rawQuery": parsed.query,
            "headers": {k: v for k, v in self.headers.items()},
            "body": body.decode("utf-8", "replace"),
        }
        self._send(200, json.dumps(payload).encode())

    def _inflate(self):
        """A compressed body decoded by its Content-Encoding (gzip, deflate): what arrived and what it was."""
        import gzip
        import hashlib
        raw = self._body()
        encoding = (self.headers.get("Content-Encoding") or "").strip().lower()
        try:
            body = gzip.decompress(raw) if encoding == "gzip" else zlib.decompress(raw) if encoding == "deflate" else raw
        except Exception as error:  # a body that does not decode as it says: the test's failure
            return self._send(400, json.dumps({"error": str(error), "encoding": encoding}).encode())
        self._send(200, json.dumps({
            "encoding": encoding, "received": len(raw), "length": len(body),
            "sha256": hashlib.sha256(body).hexdigest(), "head": body[:64].decode("utf-8", "replace"),
            "content_type": self.headers.get("Content-Type"),
            "body": body.decode("utf-8", "replace") if len(body) <= 65536 else None,
        }).encode())

    def _token(self, key):
        with COUNTS_LOCK:
            return "t%d" % STATES.get(key + ":generation", 0)

    def _effects(self, route):
        return fixture_effects.handle(self, route[len("/effects/"):], self._query(), release_event, self._token)

    def _any(self):
        route = urlparse(self.path).path
        if route.startswith("/effects/"):
            return self._effects(route)
        if route.startswith("/redirect"):
            return self._redirect(route, self._query())
        if route == "/flaky":
            return self._flaky(self._query())
        if route in ("/envelope", "/session") or route.startswith("/auth/"):
            return self._session(route, self._query())
        if route == "/upload-sizes":
            return fixture_transfers.upload_sizes(self)
        if route == "/inflate":
            return self._inflate()
        if route == "/changes":
            # A change: answers with ?status (200) and the Location / Content-Location it is given.
            q = self._query()
            self._body()
            extra = {name: q[field] for name, field in (("Location", "location"), ("Content-Location", "content_location")) if q.get(field)}
            return self._send(int(q.get("status", "200")), b'{"changed": true}', extra=extra)
        return self._echo()

    do_POST = do_PUT = do_PATCH = do_DELETE = do_OPTIONS = _any

    def do_HEAD(self):
        if urlparse(self.path).path == "/download":
            return fixture_transfers.download(self, self._query())
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", "42")
        self.end_headers()


_bombs = {}
_bombs_lock = threading.Lock()


def gzip_bomb(megabytes):
    """gzip of `megabytes` MB of zeros (about 1 KB per MB), made once per size."""
    import zlib
    with _bombs_lock:
        if megabytes not in _bombs:
            packer = zlib.compressobj(9, zlib.DEFLATED, 31)  # 31: a gzip header and trailer
            block = b"\0" * (1 << 20)
            _bombs[megabytes] = b"".join(packer.compress(block) for _ in range(megabytes)) + packer.flush()
        return _bombs[megabytes]


def zstd_compress(data):
    import zstandard
    return zstandard.ZstdCompressor(level=3).compress(data)


def zstd_bomb(megabytes):
    """zstd of `megabytes` MB of zeros (a few hundred bytes), made once per size."""
    import zstandard
    with _bombs_lock:
        key = ("zstd", megabytes)
        if key not in _bombs:
            packer = zstandard.ZstdCompressor(level=3).compressobj()
            block = b"\0" * (1 << 20)
            _bombs[key] = b"".join(packer.compress(block) for _ in range(megabytes)) + packer.flush()
        return _bombs[key]


class Server(PooledHTTPServer):
    """Accepts at the suite's pace: see pooled_server.py."""


if __name__ == "__main__":
    parser = argparse.ArgumentParser()
    parser.add_argument("--port", type=int, required=True)
    args = parser.parse_args()
    gzip_bomb(1024)  # made before serving: building it mid-suite would hold the GIL for seconds
    Server(("127.0.0.1", args.port), Handler).serve_forever()
