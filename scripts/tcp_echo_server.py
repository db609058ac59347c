"""A plain TCP echo server on 127.0.0.1 (asyncio, like the websockets package's server): the
floor the WebSocket benchmark compares Tern's echo rate with — the same bytes, no framing."""
import argparse
import asyncio


class Echo(asyncio.Protocol):
    def connection_made(self, transport):
        self.transport = transport

    def data_received(self, data):
        self.transport.write(data)


async def main(port):
    loop = asyncio.get_running_loop()
    server = await loop.create_server(Echo, "127.0.0.1", port)
    async with server:
        await server.serve_forever()


if __name__ == "__main__":
    parser = argparse.ArgumentParser()
    parser.add_argument("--port", type=int, required=True)
    asyncio.run(main(parser.parse_args().port))
