"""A small MCP server built on FastMCP (PyPI `fastmcp`, pinned in requirements-corpus.txt),
written the way FastMCP's README writes one: a `FastMCP` instance, `@mcp.tool` functions, `run()`.

parity's interop tests run it as a real third-party peer, over stdio (the default):

    tests/interop/.venv/bin/python tests/interop/py_fastmcp_server.py

or over Streamable HTTP at http://127.0.0.1:PORT/mcp (FastMCP's `http` transport under uvicorn,
bound to the loopback interface only):

    tests/interop/.venv/bin/python tests/interop/py_fastmcp_server.py --http PORT

Two settings differ from a bare `mcp.run()`, both so that the run stays off the network and
stdout stays clean: FastMCP's start-up banner is off, and with it the update check the banner
makes against the package index (`FASTMCP_CHECK_FOR_UPDATES=off` as well, set before FastMCP
reads its settings). Nothing else is configured: FastMCP's defaults are what users get.
"""

import argparse
import asyncio
import os

os.environ.setdefault("FASTMCP_CHECK_FOR_UPDATES", "off")

from fastmcp import FastMCP  # noqa: E402  (after the environment above)
from fastmcp.exceptions import ToolError  # noqa: E402

mcp = FastMCP(name="parity-interop-fastmcp", instructions="Test peer for parity: echo, add, sleep.")


@mcp.tool
def echo(text: str) -> str:
    """Return the given text unchanged."""
    return text


@mcp.tool
def add(a: int, b: int) -> int:
    """Add two integers."""
    return a + b


@mcp.tool
async def sleep(seconds: float) -> str:
    """Sleep for the given number of seconds (0-60), then return how long it slept."""
    if not 0 <= seconds <= 60:
        raise ToolError("seconds must be between 0 and 60")
    await asyncio.sleep(seconds)
    return f"slept {seconds}s"


def main() -> None:
    parser = argparse.ArgumentParser(description="parity interop FastMCP server (stdio by default)")
    parser.add_argument("--http", metavar="PORT", type=int,
                        help="serve Streamable HTTP on http://127.0.0.1:PORT/mcp instead of stdio")
    args = parser.parse_args()
    if args.http is None:
        mcp.run(show_banner=False)
    else:
        mcp.run(transport="http", host="127.0.0.1", port=args.http, path="/mcp", show_banner=False)


if __name__ == "__main__":
    main()
