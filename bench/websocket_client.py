"""The `websockets` package as a WebSocket client, for tern-bench's WebSocket rows: `--sockets`
connections, each sending `--count` binary messages of `--size` bytes to an echo server and
waiting for each echo. Connecting is not timed; prints the seconds the round trips took."""
import argparse
import asyncio
import time

from websockets.asyncio.client import connect


async def main(url, sockets, count, size):
    payload = bytes(index % 251 for index in range(size))
    connections = [await connect(url, max_size=None, ping_interval=None, compression=None) for _ in range(sockets)]

    async def echo(connection):
        for _ in range(count):
            await connection.send(payload)
            reply = await connection.recv()
            if len(reply) != size:
                raise SystemExit("short echo: %d of %d bytes" % (len(reply), size))

    started = time.perf_counter()
    await asyncio.gather(*(echo(connection) for connection in connections))
    elapsed = time.perf_counter() - started
    for connection in connections:
        await connection.close()
    print("%.6f" % elapsed)


if __name__ == "__main__":
    parser = argparse.ArgumentParser()
    parser.add_argument("url")
    parser.add_argument("--sockets", type=int, default=1)
    parser.add_argument("--count", type=int, required=True)
    parser.add_argument("--size", type=int, required=True)
    arguments = parser.parse_args()
    asyncio.run(main(arguments.url, arguments.sockets, arguments.count, arguments.size))
