"""Transfer endpoints of Tern's fixture server (imported by fixture_server.py).

  /download?key=K&size=N    N bytes of the pattern (byte i is (i * 31 + 7) % 251), with ETag (and
                            Last-Modified); honours Range: bytes=a- validated by If-Range. Counts
                            requests and body bytes served under K.
  /download-state?key=K&etag=E&weak=1&ranges=0|1&drop=N&pace=B&validator=etag|date|none&if_range=0|1&shift=S&skew=D&unasked=U
                            sets K's ETag (weak=1: a weak one, W/"E"), whether Range is honoured, a one-time connection drop
                            after N body bytes, a pace of B bytes per second, which validator is sent;
                            if_range=0 honours Range whatever If-Range says (a server that ignores it),
                            shift=S serves another version (byte i is pattern byte i + S), skew=D
                            answers a range request from D bytes further on (a lying Content-Range),
                            unasked=U answers a request without Range with a 206 from byte U
  /download-stats?key=K&size=N  {"requests", "bytes", "starts": [first byte of each response],
                            "sha256": of the N-byte pattern}
  /sse?script=NAME          a server-sent events stream (see SSE_SCRIPTS); split=1 cuts it mid-line
  POST /upload-sizes        parses a multipart/form-data (or raw) body and answers its shape:
                            {"contentLength", "chunked", "fields": {name: value},
                            "files": {name: {"filename", "contentType", "size", "sha256"}}, "size", "sha256"}
"""
import hashlib
import json
import re
import threading
import time
from email.utils import formatdate

PERIOD = 251
BLOCK = bytes((i * 31 + 7) % PERIOD for i in range(PERIOD)) * 4096  # about 1 MB, whole periods
STATE = {}
LOCK = threading.Lock()
DIGESTS = {}


def _state(key):
    return STATE.setdefault(key, {"etag": '"v1"', "ranges": True, "drop": None, "pace": 0,
                                  "validator": "etag", "if_range": True, "shift": 0, "skew": 0, "unasked": 0,
                                  "requests": 0, "bytes": 0, "starts": []})


def _pattern_digest(size):
    with LOCK:
        if size in DIGESTS:
            return DIGESTS[size]
    digest = hashlib.sha256()
    sent = 0
    while sent < size:
        piece = BLOCK[: min(len(BLOCK), size - sent)]
        digest.update(piece)
        sent += len(piece)
    with LOCK:
        DIGESTS[size] = digest.hexdigest()
    return DIGESTS[size]


def download(handler, q):
    key, size = q.get("key", ""), int(q.get("size", "1048576"))
    with LOCK:
        s = _state(key)
        s["requests"] += 1
        etag, ranges, pace, validator = s["etag"], s["ranges"], s["pace"], s["validator"]
        honours_if_range, shift, skew, unasked = s["if_range"], s["shift"], s["skew"], s["unasked"]
        drop, s["drop"] = s["drop"], None
    last_modified = formatdate(1700000000 + sum(map(ord, etag)), usegmt=True)
    start = 0
    header_range = handler.headers.get("Range")
    if_range = handler.headers.get("If-Range")
    current = {"etag": etag, "date": last_modified}.get(validator)
    if ranges and header_range:
        match = re.match(r"bytes=(\d+)-$", header_range.strip())
        if match and (if_range is None or if_range == current or not honours_if_range):
            start = int(match.group(1)) + skew
    elif not header_range and unasked:
        start = unasked  # a 206 that nobody asked for
    if start >= size and start > 0:
        handler.send_response(416)
        handler.send_header("Content-Range", "bytes */%d" % size)
        handler.send_header("Content-Length", "0")
        handler.end_headers()
        return
    handler.send_response(206 if start else 200)
    handler.send_header("Content-Type", "application/octet-stream")
    handler.send_header("Content-Length", str(size - start))
    if start:
        handler.send_header("Content-Range", "bytes %d-%d/%d" % (start, size - 1, size))
    if ranges:
        handler.send_header("Accept-Ranges", "bytes")
    if validator == "etag":
        handler.send_header("ETag", etag)
    if validator == "date":
        handler.send_header("Last-Modified", last_modified)
    handler.end_headers()
    with LOCK:
        s["starts"].append(start)
    if handler.command == "HEAD":
        return
    position, written = start, 0
    began = time.monotonic()
    try:
        while position < size:
            offset = (position + shift) % PERIOD
            piece = BLOCK[offset: offset + min(65536, size - position)]
            if drop is not None and written + len(piece) > drop:
                piece = piece[: drop - written]
                handler.wfile.write(piece)
                written += len(piece)
                handler.wfile.flush()
                handler.close_connection = True
                return
            handler.wfile.write(piece)
            position += len(piece)
            written += len(piece)
            if pace:
                ahead = written / pace - (time.monotonic() - began)
                if ahead > 0:
                    time.sleep(ahead)
    except (BrokenPipeError, ConnectionResetError, OSError):
        handler.close_connection = True
    finally:
        with LOCK:
            s["bytes"] += written


def download_state(handler, q):
    with LOCK:
        s = _state(q.get("key", ""))
        if "etag" in q:
            s["etag"] = '"%s"' % q["etag"]
        if "weak" in q:
            s["etag"] = "W/" + s["etag"].lstrip("W/")
        if "ranges" in q:
            s["ranges"] = q["ranges"] == "1"
        if "drop" in q:
            s["drop"] = int(q["drop"])
        if "pace" in q:
            s["pace"] = int(q["pace"])
        if "validator" in q:
            s["validator"] = q["validator"]
        if "if_range" in q:
            s["if_range"] = q["if_range"] == "1"
        if "shift" in q:
            s["shift"] = int(q["shift"])
        if "skew" in q:
            s["skew"] = int(q["skew"])
        if "unasked" in q:
            s["unasked"] = int(q["unasked"])
    handler._send(200, b'{"ok": true}')


def download_stats(handler, q):
    with LOCK:
        s = dict(_state(q.get("key", "")))
    body = {"requests": s["requests"], "bytes": s["bytes"], "starts": s["starts"]}
    if "size" in q:
        body["sha256"] = _pattern_digest(int(q["size"]))
    handler._send(200, json.dumps(body).encode())


def read_chunked(stream):
    """A chunked body (RFC 9112 §7.1), decoded; the number of chunks beside it."""
    body, chunks = bytearray(), 0
    while True:
        size = int(stream.readline().split(b";")[0].strip(), 16)
        if size == 0:
            while stream.readline() not in (b"\r\n", b"\n", b""):
                pass  # trailer fields
            return bytes(body), chunks
        body += stream.read(size)
        stream.read(2)  # the CRLF after the chunk
        chunks += 1


def upload_sizes(handler):
    pause = float(handler._query().get("pause", "0"))
    if pause:
        time.sleep(pause)  # before reading a byte: the client's sending is held back meanwhile
    chunked = "chunked" in (handler.headers.get("Transfer-Encoding") or "").lower()
    length = handler.headers.get("Content-Length")
    chunks = 0
    if chunked:
        body, chunks = read_chunked(handler.rfile)
    else:
        body = handler.rfile.read(int(length)) if length else b""
    result = {"contentLength": int(length) if length else None, "chunked": chunked, "chunks": chunks, "size": len(body),
              "sha256": hashlib.sha256(body).hexdigest(), "fields": {}, "files": {},
              "contentType": handler.headers.get("Content-Type")}
    match = re.search(r'boundary="?([^";]+)"?', handler.headers.get("Content-Type") or "")
    if match:
        boundary = b"--" + match.group(1).encode()
        for part in body.split(boundary)[1:]:
            if part.startswith(b"--"):
                break
            head, _, content = part[2:].partition(b"\r\n\r\n")
            content = content[:-2]  # the CRLF before the next boundary
            headers = {}
            for line in head.decode("utf-8").split("\r\n"):
                name, _, value = line.partition(":")
                headers[name.strip().lower()] = value.strip()
            disposition = headers.get("content-disposition", "")
            name = re.search(r'; name="([^"]*)"', disposition)
            filename = re.search(r'; filename="([^"]*)"', disposition)
            filename_star = re.search(r"; filename\*=UTF-8''([^;]*)", disposition)
            name = name.group(1) if name else ""
            if filename or filename_star:
                from urllib.parse import unquote
                result["files"][name] = {
                    "filename": filename.group(1) if filename else None,
                    "filenameStar": unquote(filename_star.group(1)) if filename_star else None,
                    "contentType": headers.get("content-type"), "size": len(content),
                    "sha256": hashlib.sha256(content).hexdigest()}
            else:
                result["fields"][name] = content.decode("utf-8")
    handler._send(200, json.dumps(result, ensure_ascii=False).encode("utf-8"))


# Server-sent event streams: each is a list of (bytes, pause in seconds after them).
SSE_SCRIPTS = {
    # Events split across writes, a comment, a retry, an id, multi-line data, CRLF and CR endings,
    # an event with a name, an unknown field, and a last event without its blank line (dropped).
    "basic": [
        (b"\xef\xbb\xbf: a comment, ignored\n\n", 0.02),
        (b"data: first\n\n", 0.02),
        (b"event: update\nid: 7\nda", 0.05),
        (b"ta: sec", 0.05),
        (b"ond\r\n\r\n", 0.02),
        (b"retry: 1500\ndata: line one\ndata: line two\n\n", 0.02),
        (b"data:no space\rid\r\r", 0.02),
        (b"unknown: x\ndata: fourth\n\n", 0.02),
        (b"data: never dispatched", 0),
    ],
    # One event, then silence: a stall the deadline must end.
    "stall": [(b"data: one\n\n", 30)],
    # Line-delimited JSON with a character split across writes and a CRLF, the last line unterminated.
    "ndjson": [
        (b'{"n": 1, "city": "\xe5\x8c', 0.02),
        (b'\x97\xe4\xba\xac"}\n{"n": 2}\r', 0.02),
        (b'\n{"n": 3}', 0),
    ],
    # CRLF line ends throughout (each one line end, never two), and an invalid retry field
    # after a valid one (ignored: the stream keeps 1500).
    "crlf-retry": [
        (b"retry: 1500\r\ndata: a\r\ndata: b\r\n\r\n", 0.02),
        (b"retry: 12x\r\ndata: c\r\n\r\n", 0),
    ],
    # One event of 40 short data lines (4 KB of data, no line over 106 bytes), then a small one.
    "many-lines": [(b"data: " + b"x" * 100 + b"\n", 0)] * 40 + [(b"\ndata: small\n\n", 0)],
    # Events forever, 50 ms apart: cancelled mid-stream.
    "endless": [(b"data: tick\n\n", 0.05)] * 2000,
}


def sse(handler, q):
    script = SSE_SCRIPTS.get(q.get("script", "basic"), [])
    handler.send_response(int(q.get("status", "200")))
    handler.send_header("Content-Type", "text/event-stream")
    handler.send_header("Cache-Control", "no-cache")
    handler.send_header("Transfer-Encoding", "chunked")
    handler.end_headers()
    try:
        for piece, pause in script:
            handler.wfile.write(b"%x\r\n%s\r\n" % (len(piece), piece))
            handler.wfile.flush()
            if pause:
                time.sleep(pause)
        handler.wfile.write(b"0\r\n\r\n")
    except (BrokenPipeError, ConnectionResetError, OSError):
        handler.close_connection = True
