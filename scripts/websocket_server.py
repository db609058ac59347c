"""The reference WebSocket server for Tern's tests: the `websockets` package (an independent
RFC 6455 implementation), on 127.0.0.1 only. Paths:

  /echo                  echoes every message, text as text and binary as binary
  /push?n=N&size=S       sends N text messages of S bytes ("0…"), then waits
  /close?code=C&reason=R closes at once (or after delay=S seconds) with code C and reason R
  /headers               sends the upgrade request's headers as one JSON text message, then echoes
  /reject                answers 403 with a body instead of upgrading
  /moved                 answers 307 with Location: /echo (an upgrade a client may follow)
  /auth                  answers 401 unless the upgrade says "Authorization: Bearer fresh", then echoes
  /silent                completes the handshake, then never answers (not even pings)
  /extensions            sends the Sec-WebSocket-Extensions the server agreed to ("" for none) as one
                         text message, then echoes
Both ports offer permessage-deflate to a client that asks: the first with the package's defaults
(context takeover both ways), the second (--second-port) with no context takeover either way and
the smallest windows (server 9 bits, client 8).
Subprotocols offered by a client are chosen from "v2" and "chat", first match.
"""
import argparse
import asyncio
import json
from http import HTTPStatus
from urllib.parse import parse_qs, urlsplit

from websockets.asyncio.server import serve
from websockets.extensions.permessage_deflate import ServerPerMessageDeflateFactory


async def handler(connection):
    url = urlsplit(connection.request.path)
    query = {key: values[0] for key, values in parse_qs(url.query).items()}
    if url.path == "/push":
        size = int(query.get("size", "16"))
        for index in range(int(query.get("n", "5"))):
            await connection.send(str(index % 10) * size)
        await connection.wait_closed()
    elif url.path == "/close":
        await asyncio.sleep(float(query.get("delay", "0")))
        await connection.close(int(query.get("code", "1000")), query.get("reason", ""))
    elif url.path == "/silent":
        await asyncio.sleep(3600)
    else:
        if url.path == "/headers":
            await connection.send(json.dumps(dict(connection.request.headers.raw_items())))
        elif url.path == "/extensions":
            await connection.send(connection.response.headers.get("Sec-WebSocket-Extensions", ""))
        async for message in connection:
            await connection.send(message)


def process_request(connection, request):
    if request.path.startswith("/reject"):
        return connection.respond(HTTPStatus.FORBIDDEN, "no sockets for you\n")
    if request.path.startswith("/moved"):
        response = connection.respond(HTTPStatus.TEMPORARY_REDIRECT, "moved to /echo\n")
        response.headers["Location"] = "/echo"
        return response
    if request.path.startswith("/auth") and request.headers.get("Authorization") != "Bearer fresh":
        return connection.respond(HTTPStatus.UNAUTHORIZED, "token expired\n")
    return None


def select_subprotocol(connection, offered):
    for name in offered:
        if name in ("v2", "chat"):
            return name
    return None


async def main(port, second_port):
    common = dict(process_request=process_request, select_subprotocol=select_subprotocol, max_size=64 << 20, ping_interval=None)
    async with serve(handler, "127.0.0.1", port, **common) as server:
        if not second_port:
            await server.serve_forever()
            return
        no_takeover = ServerPerMessageDeflateFactory(
            server_no_context_takeover=True, client_no_context_takeover=True, server_max_window_bits=9, client_max_window_bits=8)
        async with serve(handler, "127.0.0.1", second_port, extensions=[no_takeover], **common) as second:
            await asyncio.gather(server.serve_forever(), second.serve_forever())


if __name__ == "__main__":
    parser = argparse.ArgumentParser()
    parser.add_argument("--port", type=int, required=True)
    parser.add_argument("--second-port", type=int)
    arguments = parser.parse_args()
    asyncio.run(main(arguments.port, arguments.second_port))
