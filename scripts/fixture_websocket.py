"""A hostile WebSocket server for Tern's tests: what a conformant server (the websockets package,
scripts/websocket_server.py) never sends. Raw asyncio streams on 127.0.0.1; the path picks the
fault:

  /rsv /opcode /masked /bigping /badutf8 /badclose   one malformed frame after the handshake
  /fragmented       a text message in three fragments with a ping between them; after the pong
                    (checked against the ping's payload) a text message "pong ok"
  /badaccept /noupgrade /extension /subprotocol      a 101 that breaks the handshake's rules
  /stall            half a frame header, then silence (pings are never answered)
  /eof              the connection closed without a close frame
  /nohandshake      reads the upgrade request and never answers it
  /halfhead         answers with the first line of a 101 head, then silence
  /deaf             completes the handshake, then reads and never answers (not even a close)
  /flood?id=X       a frame with a reserved bit set, then text frames without pause until the
                    client's close frame arrives (answered, then the connection closed); the
                    close code it carried is kept for X
  /report?id=X      sends one text message: the close code kept for X, or "none"
With permessage-deflate agreed (the answer says so whatever the client offered):
  /deflatehello     "hello" compressed (RSV1), then "plain" uncompressed
  /deflatebomb      one compressed binary message that inflates to 1 GiB of zeros (~1 MB sent)
  /deflategarbage   RSV1 on bytes that are not deflate data
  /deflatecontinuation  a compressed message whose continuation frame also has RSV1
  /deflatebadparam  agrees with server_max_window_bits=20, outside 8-15
"""
import argparse
import asyncio
import base64
import hashlib
import struct
import zlib

GUID = "258EAFA5-E914-47DA-95CA-C5AB0DC85B11"


def frame(opcode, payload=b"", fin=True, rsv=0, mask=None, length=None):
    first = (0x80 if fin else 0) | rsv | opcode
    n = len(payload) if length is None else length
    head = bytes([first])
    mask_bit = 0x80 if mask else 0
    if n < 126:
        head += bytes([mask_bit | n])
    elif n < 65536:
        head += bytes([mask_bit | 126]) + struct.pack("!H", n)
    else:
        head += bytes([mask_bit | 127]) + struct.pack("!Q", n)
    if mask:
        payload = bytes(b ^ mask[i % 4] for i, b in enumerate(payload))
        head += mask
    return head + payload


async def read_frame(reader):
    first, second = await reader.readexactly(2)
    n = second & 0x7F
    if n == 126:
        (n,) = struct.unpack("!H", await reader.readexactly(2))
    elif n == 127:
        (n,) = struct.unpack("!Q", await reader.readexactly(8))
    mask = await reader.readexactly(4) if second & 0x80 else b"\0\0\0\0"
    payload = bytes(b ^ mask[i % 4] for i, b in enumerate(await reader.readexactly(n)))
    return first & 0x0F, payload


def deflated(data):
    """`data` as a permessage-deflate payload: raw deflate, flushed, without the 00 00 FF FF tail."""
    compressor = zlib.compressobj(9, zlib.DEFLATED, -15)
    return (compressor.compress(data) + compressor.flush(zlib.Z_SYNC_FLUSH))[:-4]


bomb_payload = None


def deflate_bomb():
    """1 GiB of zeros deflated, made once (a few seconds) and kept."""
    global bomb_payload
    if bomb_payload is None:
        compressor = zlib.compressobj(9, zlib.DEFLATED, -15)
        zeros = bytes(1 << 20)
        parts = [compressor.compress(zeros) for _ in range(1024)]
        bomb_payload = (b"".join(parts) + compressor.flush(zlib.Z_SYNC_FLUSH))[:-4]
    return bomb_payload


# The close code each /flood connection received, by its id ("none" until one arrives).
received_close_codes = {}


async def flood(reader, writer, flood_id):
    """Sends frames without pause after a violation until the client's close frame is read."""
    received_close_codes[flood_id] = "none"
    writer.write(frame(0x1, b"hi", rsv=0x40))
    chunk = frame(0x1, b"x" * 4000) * 16
    closed = asyncio.Event()

    async def keep_sending():
        while not closed.is_set():
            writer.write(chunk)
            await writer.drain()
            await asyncio.sleep(0)

    sender = asyncio.ensure_future(keep_sending())
    try:
        # Sends for a while before reading anything, as a busy server does: a client that closed
        # at once has answered the flood with a reset by then.
        await asyncio.sleep(0.05)
        while True:
            opcode, payload = await read_frame(reader)
            if opcode == 0x8:
                received_close_codes[flood_id] = str(struct.unpack("!H", payload[:2])[0]) if len(payload) >= 2 else "empty"
                closed.set()
                await asyncio.gather(sender, return_exceptions=True)
                writer.write(frame(0x8, payload[:2]))
                await writer.drain()
                return
    finally:
        closed.set()
        sender.cancel()


async def handle(reader, writer):
    try:
        head = await reader.readuntil(b"\r\n\r\n")
        lines = head.decode("latin-1").split("\r\n")
        target = lines[0].split(" ")[1]
        path, _, query = target.partition("?")
        params = dict(item.split("=", 1) for item in query.split("&") if "=" in item)
        if path == "/nohandshake":
            await reader.read()
            return
        if path == "/halfhead":
            writer.write(b"HTTP/1.1 101 Switching Protocols\r\n")
            await writer.drain()
            await reader.read()
            return
        headers = {}
        for line in lines[1:]:
            if ":" in line:
                name, value = line.split(":", 1)
                headers[name.strip().lower()] = value.strip()
        accept = base64.b64encode(hashlib.sha1((headers.get("sec-websocket-key", "") + GUID).encode()).digest()).decode()
        response = {"Upgrade": "websocket", "Connection": "Upgrade", "Sec-WebSocket-Accept": accept}
        if path == "/badaccept":
            response["Sec-WebSocket-Accept"] = base64.b64encode(b"x" * 20).decode()
        elif path == "/noupgrade":
            del response["Upgrade"]
        elif path == "/extension":
            response["Sec-WebSocket-Extensions"] = "permessage-deflate"
        elif path == "/subprotocol":
            response["Sec-WebSocket-Protocol"] = "never-offered"
        elif path == "/deflatebadparam":
            response["Sec-WebSocket-Extensions"] = "permessage-deflate; server_max_window_bits=20"
        elif path.startswith("/deflate"):
            response["Sec-WebSocket-Extensions"] = "permessage-deflate"
        text = "HTTP/1.1 101 Switching Protocols\r\n" + "".join(f"{k}: {v}\r\n" for k, v in response.items()) + "\r\n"
        writer.write(text.encode())
        faults = {
            "/rsv": frame(0x1, b"hi", rsv=0x40),
            "/opcode": frame(0x3, b"hi"),
            "/masked": frame(0x1, b"hi", mask=b"abcd"),
            "/bigping": frame(0x9, b"x" * 126),
            "/badutf8": frame(0x1, b"\xc0\x80"),
            "/badclose": frame(0x8, struct.pack("!H", 1005)),
            "/deflatehello": frame(0x1, deflated(b"hello"), rsv=0x40) + frame(0x1, b"plain"),
            "/deflategarbage": frame(0x1, b"\xff\xfe\xfd not deflate", rsv=0x40),
            "/deflatecontinuation": frame(0x1, deflated(b"he"), fin=False, rsv=0x40) + frame(0x0, deflated(b"llo"), rsv=0x40),
        }
        if path == "/deflatebomb":
            faults[path] = frame(0x2, deflate_bomb(), rsv=0x40)
        if path in faults:
            writer.write(faults[path])
        elif path == "/fragmented":
            writer.write(frame(0x1, "北".encode(), fin=False) + frame(0x9, b"ping-1") + frame(0x0, "京".encode(), fin=False)
                         + frame(0x0, b"!", fin=True))
            await writer.drain()
            while True:
                opcode, payload = await read_frame(reader)
                if opcode == 0xA:
                    writer.write(frame(0x1, b"pong ok" if payload == b"ping-1" else b"wrong pong"))
                    break
        elif path == "/stall":
            writer.write(bytes([0x81]))
        elif path == "/eof":
            await writer.drain()
            writer.close()
            return
        elif path == "/flood":
            await flood(reader, writer, params.get("id", ""))
            return
        elif path == "/report":
            writer.write(frame(0x1, received_close_codes.get(params.get("id", ""), "none").encode()))
        elif path == "/deaf":
            await writer.drain()
            await reader.read()
            return
        await writer.drain()
        # Answer a close frame with the same code, then close; otherwise wait for the client.
        while True:
            opcode, payload = await read_frame(reader)
            if opcode == 0x8:
                if path != "/stall":
                    writer.write(frame(0x8, payload[:2]))
                    await writer.drain()
                break
    except (asyncio.IncompleteReadError, ConnectionError, asyncio.LimitOverrunError):
        pass
    finally:
        writer.close()


async def main(ports):
    # Each port is its own host to a client's one-connect-per-host rule (RFC 6455 §4.1): tests
    # that stall their openings on purpose use the second, and hold no other test's turn.
    servers = [await asyncio.start_server(handle, "127.0.0.1", port) for port in ports]
    await asyncio.gather(*(server.serve_forever() for server in servers))


if __name__ == "__main__":
    parser = argparse.ArgumentParser()
    parser.add_argument("--port", type=int, required=True)
    parser.add_argument("--second-port", type=int)
    arguments = parser.parse_args()
    asyncio.run(main([port for port in (arguments.port, arguments.second_port) if port]))
