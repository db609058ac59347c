#!/usr/bin/env python3
"""The weather API of Tern's `weather` showcase over real HTTP, loopback only.

usage: weather_server.py DATASET.json [--port N] [--malformed] [--radar IMAGE]
DATASET.json is what `weather export-data` prints. Prints "PORT <n>" once listening (port 0 picks
a free one). Endpoints, as the showcase's embedded server:
  GET /v1/weather?city=<id>    {"code": 0, "city": {...}}            (404 for an unknown city)
  GET /v1/forecast?city=<id>   {"code": 0, "city": {...}, "days": [...]}
  GET /v1/search?q=<text>      {"code": 0, "cities": [...]}          (name, pinyin prefix or province)
  GET /v1/radar                IMAGE (what `weather export-radar IMAGE` wrote), 16 KB every 20 ms, with an
                               ETag; `Range: bytes=N-` with a matching `If-Range` gets the rest (206)
With --malformed every answer is truncated JSON, to show the app's error message.
"""
import argparse
import json
import os
import signal
import sys
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from urllib.parse import parse_qs, urlparse

RADAR_ETAG = '"radar-1"'


def main():
    # A child started from a thread of a Swift (libdispatch) process inherits its blocked signals:
    # unblock SIGTERM and SIGINT so that Process.terminate() really stops this server.
    signal.pthread_sigmask(signal.SIG_UNBLOCK, [signal.SIGTERM, signal.SIGINT])
    signal.signal(signal.SIGTERM, lambda *_: os._exit(0))
    parser = argparse.ArgumentParser()
    parser.add_argument("dataset")
    parser.add_argument("--port", type=int, default=0)
    parser.add_argument("--malformed", action="store_true")
    parser.add_argument("--radar")
    parser.add_argument("--min-version", type=float, default=0.0,
                        help="answer older app versions with business code 1003 (HTTP 200)")
    args = parser.parse_args()
    entries = json.load(open(args.dataset, encoding="utf-8"))
    by_id = {entry["city"]["id"]: entry for entry in entries}

    changes = set()

    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def log_message(self, *_):
            pass

        def answer(self, status, payload):
            body = json.dumps(payload, ensure_ascii=False).encode()
            if args.malformed:
                body = body[: max(1, len(body) // 2)]
            self.send_response(status)
            self.send_header("Content-Type", "application/json; charset=utf-8")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def do_POST(self):
            # Favourite changes from a device: one change per Idempotency-Key however often it is sent.
            length = int(self.headers.get("Content-Length") or 0)
            self.rfile.read(length)
            if urlparse(self.path).path != "/v1/favourites":
                return self.answer(404, {"code": 404, "message": "not found"})
            key = self.headers.get("Idempotency-Key") or ""
            replayed = bool(key) and key in changes
            changes.add(key)
            return self.answer(201, {"code": 0, "replayed": replayed})

        def do_GET(self):
            url = urlparse(self.path)
            query = {k: v[-1] for k, v in parse_qs(url.query).items()}
            # Every request names its device and app version; the service may retire old versions.
            if url.path.startswith("/v1/") and not query.get("device_id"):
                return self.answer(200, {"code": 1001, "message": "missing device id"})
            try:
                version = float(query.get("app_version", "0"))
            except ValueError:
                version = 0.0
            if url.path.startswith("/v1/") and version < args.min_version:
                return self.answer(200, {"code": 1003, "message": "app version %s is no longer served; please upgrade" % query.get("app_version", "?")})
            if url.path in ("/v1/weather", "/v1/forecast"):
                entry = by_id.get(query.get("city", ""))
                if entry is None:
                    return self.answer(404, {"code": 404, "message": "unknown city"})
                if url.path == "/v1/weather":
                    return self.answer(200, {"code": 0, "city": entry["city"], "observed": time.strftime("%H:%M:%S")})
                return self.answer(200, entry)
            if url.path == "/v1/search":
                text = query.get("q", "").lower()
                cities = [e["city"] for e in entries if text and (
                    text in e["city"]["name"] or e["city"]["pinyin"].lower().startswith(text) or text in e["city"]["province"])]
                return self.answer(200, {"code": 0, "cities": cities})
            if url.path == "/v1/radar" and args.radar:
                image = open(args.radar, "rb").read()
                first = 0
                asked = self.headers.get("Range", "")
                if asked.startswith("bytes=") and asked.endswith("-") and self.headers.get("If-Range") == RADAR_ETAG:
                    first = int(asked[6:-1]) if asked[6:-1].isdigit() else 0
                    first = first if first < len(image) else 0
                self.send_response(206 if first else 200)
                self.send_header("Content-Type", "image/x-portable-graymap")
                self.send_header("Content-Length", str(len(image) - first))
                self.send_header("ETag", RADAR_ETAG)
                if first:
                    self.send_header("Content-Range", "bytes %d-%d/%d" % (first, len(image) - 1, len(image)))
                self.end_headers()
                for start in range(first, len(image), 16384):
                    self.wfile.write(image[start:start + 16384])
                    self.wfile.flush()
                    time.sleep(0.02)
                return
            self.answer(404, {"code": 404, "message": "no such endpoint"})

    server = ThreadingHTTPServer(("127.0.0.1", args.port), Handler)
    server.daemon_threads = True

    # Exit with the process that started this server (a test runner that crashed or was killed
    # must not leave servers behind holding its output open).
    parent = os.getppid()

    def watch_parent():
        while os.getppid() == parent:
            time.sleep(0.5)
        os._exit(0)

    threading.Thread(target=watch_parent, daemon=True).start()
    print(f"PORT {server.server_address[1]}", flush=True)
    server.serve_forever()


if __name__ == "__main__":
    sys.exit(main())
