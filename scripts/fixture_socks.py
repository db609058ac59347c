#!/usr/bin/env python3
"""A SOCKS5 proxy on loopback for Tern's proxy tests (RFC 1928, no authentication, CONNECT only).

It resolves names itself, as a SOCKS5 proxy asked with `socks5h://` does: any name ending in
`.tern.test` (which no DNS knows) and `localhost` lead to 127.0.0.1, so a request to such a name
only succeeds through the proxy. IPv4 targets are accepted for 127.0.0.1 only; anything else is
refused (reply 2, not allowed). Every connection it relays is counted; `GET /socks-stats` on the
same port (plain HTTP, no SOCKS greeting) answers {"connections": n, "names": [...]}.
"""
import argparse
import json
import socket
import struct
import threading

lock = threading.Lock()
stats = {"connections": 0, "names": []}


def target_address(kind, conn):
    if kind == 1:
        address = socket.inet_ntoa(read_exactly(conn, 4))
        return address if address == "127.0.0.1" else None, address
    if kind == 3:
        name = read_exactly(conn, read_exactly(conn, 1)[0]).decode("ascii", "replace")
        allowed = name.lower() == "localhost" or name.lower().endswith(".tern.test")
        return ("127.0.0.1" if allowed else None), name
    return None, "unsupported address type %d" % kind


def read_exactly(conn, count):
    data = b""
    while len(data) < count:
        chunk = conn.recv(count - len(data))
        if not chunk:
            raise ConnectionError("closed")
        data += chunk
    return data


def pipe(source, destination):
    try:
        while True:
            data = source.recv(65536)
            if not data:
                break
            destination.sendall(data)
    except OSError:
        pass
    finally:
        for end in (source, destination):
            try:
                end.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass


def serve(conn):
    try:
        first = conn.recv(1, socket.MSG_PEEK)
        if first == b"G":  # GET /socks-stats
            conn.recv(65536)
            with lock:
                body = json.dumps(stats).encode()
            conn.sendall(b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nConnection: close\r\n"
                         b"Content-Length: %d\r\n\r\n" % len(body) + body)
            return conn.close()
        version, methods = read_exactly(conn, 2)
        offered = read_exactly(conn, methods)
        if version != 5 or 0 not in offered:
            conn.sendall(b"\x05\xff")
            return conn.close()
        conn.sendall(b"\x05\x00")
        version, command, _, kind = read_exactly(conn, 4)
        address, name = target_address(kind, conn)
        port = struct.unpack("!H", read_exactly(conn, 2))[0]
        if version != 5 or command != 1 or address is None:
            conn.sendall(b"\x05\x02\x00\x01" + b"\0" * 6)
            return conn.close()
        upstream = socket.create_connection((address, port), timeout=10)
        upstream.settimeout(None)
        with lock:
            stats["connections"] += 1
            stats["names"].append(name)
        conn.sendall(b"\x05\x00\x00\x01" + socket.inet_aton("127.0.0.1") + struct.pack("!H", port))
        threading.Thread(target=pipe, args=(upstream, conn), daemon=True).start()
        pipe(conn, upstream)
    except (OSError, ConnectionError):
        conn.close()


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--port", type=int, required=True)
    args = parser.parse_args()
    listener = socket.socket()
    listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    listener.bind(("127.0.0.1", args.port))
    listener.listen(128)
    while True:
        conn, _ = listener.accept()
        threading.Thread(target=serve, args=(conn,), daemon=True).start()


if __name__ == "__main__":
    main()
