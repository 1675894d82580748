"""A real MCP server for the tests, written with the same SDK kioku's client uses.

    python -m tests.fakes.mcp_server            # stdio
    python tests/fakes/mcp_server.py --http     # streamable HTTP on 127.0.0.1, port 0;
                                                # prints its URL as the first stdout line

Tools: echo, add, slow (sleeps), crash (the process exits), big (100 KB of text),
image (a caption and a PNG), fail (the tool reports an error), env (reads a variable),
grow (adds a tool `extra` and tells the client the list changed).
It imports only the SDK and the standard library, so it runs from any directory.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import socket
import sys

from mcp.server.fastmcp import Context, FastMCP, Image

PNG = bytes.fromhex(
    "89504e470d0a1a0a0000000d4948445200000001000000010806000000"
    "1f15c4890000000d49444154789c63600000000200015e2a4f0d0000000049454e44ae426082"
)

server = FastMCP("kioku-fake", log_level="WARNING")


@server.tool()
def echo(text: str) -> str:
    """Return the text unchanged."""
    return text


@server.tool()
def add(a: int, b: int) -> int:
    """Add two integers."""
    return a + b


@server.tool()
async def slow(seconds: float) -> str:
    """Sleep, then answer."""
    await asyncio.sleep(seconds)
    return f"slept {seconds} s"


@server.tool()
def crash() -> str:
    """End the server process at once, as a crashing server would."""
    os._exit(3)


@server.tool()
def big(size: int = 100_000) -> str:
    """Return `size` characters of text."""
    return "x" * size


@server.tool(structured_output=False)
def image() -> list[str | Image]:
    """A caption and a picture."""
    return ["a red dot", Image(data=PNG, format="png")]


@server.tool()
def fail(message: str) -> str:
    """Report an error with `message`."""
    raise ValueError(message)


@server.tool()
def env(name: str) -> str:
    """The value of an environment variable, or '(unset)'."""
    return os.environ.get(name, "(unset)")


def extra() -> str:
    """A tool that exists only after `grow`."""
    return "extra here"


@server.tool()
async def grow(ctx: Context) -> str:
    """Add the tool `extra` and notify the client that the tool list changed."""
    server.add_tool(extra)
    await ctx.session.send_tool_list_changed()
    return "grown"


async def serve_http() -> None:
    """Streamable HTTP on a free port; the URL goes to stdout before serving starts."""
    import uvicorn

    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.bind(("127.0.0.1", 0))
    port = sock.getsockname()[1]
    config = uvicorn.Config(server.streamable_http_app(), log_level="warning", lifespan="on")
    print(f"http://127.0.0.1:{port}/mcp", flush=True)
    await uvicorn.Server(config).serve(sockets=[sock])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--http", action="store_true", help="streamable HTTP instead of stdio")
    if parser.parse_args().http:
        asyncio.run(serve_http())
    else:
        server.run("stdio")
    sys.exit(0)


if __name__ == "__main__":
    main()
