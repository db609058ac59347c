"""The echo servers the WebSocket benchmark's floor runs against, on 127.0.0.1, in one asyncio
process (the websockets package's own server style): a plain TCP echo on --port, and on
--websocket-port a minimal WebSocket echo written the same way — the handshake, then each frame
echoed unmasked with its own opcode, a ping answered, a close returned. Against the websockets
package's server, it takes the server's protocol work out of the comparison between Tern's
WebSocket and Tern's plain byte stream."""
import argparse
import asyncio
import base64
import hashlib

GUID = b"258EAFA5-E914-47DA-95CA-C5AB0DC85B11"


class Echo(asyncio.Protocol):
    def connection_made(self, transport):
        self.transport = transport

    def data_received(self, data):
        self.transport.write(data)


def unmask(payload, key):
    """The payload XOR its four-byte key, as one big-integer operation (fast for a megabyte)."""
    if not payload:
        return b""
    count = len(payload)
    stream = (key * (count // 4 + 1))[:count]
    return (int.from_bytes(payload, "big") ^ int.from_bytes(stream, "big")).to_bytes(count, "big")


def frame_header(first, count):
    if count < 126:
        return bytes([first, count])
    if count < 1 << 16:
        return bytes([first, 126]) + count.to_bytes(2, "big")
    return bytes([first, 127]) + count.to_bytes(8, "big")


class WebSocketEcho(asyncio.Protocol):
    def connection_made(self, transport):
        self.transport = transport
        self.buffer = bytearray()
        self.upgraded = False

    def data_received(self, data):
        self.buffer += data
        if not self.upgraded and not self.upgrade():
            return
        while self.echo_frame():
            pass

    def upgrade(self):
        end = self.buffer.find(b"\r\n\r\n")
        if end < 0:
            return False
        lines = bytes(self.buffer[:end]).split(b"\r\n")
        del self.buffer[: end + 4]
        key = next((line.split(b":", 1)[1].strip() for line in lines if line.lower().startswith(b"sec-websocket-key:")), b"")
        accept = base64.b64encode(hashlib.sha1(key + GUID).digest())
        self.transport.write(
            b"HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
            b"Sec-WebSocket-Accept: " + accept + b"\r\n\r\n")
        self.upgraded = True
        return True

    def echo_frame(self):
        """Echoes one whole frame from the buffer; False when none is complete."""
        buffer = self.buffer
        if len(buffer) < 2:
            return False
        first, count, start = buffer[0], buffer[1] & 0x7F, 2
        if count == 126:
            if len(buffer) < 4:
                return False
            count, start = int.from_bytes(buffer[2:4], "big"), 4
        elif count == 127:
            if len(buffer) < 10:
                return False
            count, start = int.from_bytes(buffer[2:10], "big"), 10
        if len(buffer) < start + 4 + count:
            return False
        key = bytes(buffer[start:start + 4])
        payload = unmask(bytes(buffer[start + 4:start + 4 + count]), key)
        del buffer[: start + 4 + count]
        opcode = first & 0x0F
        if opcode == 0x9:
            first = 0x8A  # a ping's pong
        self.transport.write(frame_header(first, len(payload)) + payload)
        if opcode == 0x8:
            self.transport.close()
        return True


async def main(port, websocket_port):
    loop = asyncio.get_running_loop()
    servers = [await loop.create_server(Echo, "127.0.0.1", port)]
    if websocket_port:
        servers.append(await loop.create_server(WebSocketEcho, "127.0.0.1", websocket_port))
    await asyncio.gather(*(server.serve_forever() for server in servers))


if __name__ == "__main__":
    parser = argparse.ArgumentParser()
    parser.add_argument("--port", type=int, required=True)
    parser.add_argument("--websocket-port", type=int, default=0)
    arguments = parser.parse_args()
    asyncio.run(main(arguments.port, arguments.websocket_port))
