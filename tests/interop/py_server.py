"""A small MCP server built on the PyPI `mcp` package (pinned in requirements.txt).

parity's interop tests run it as a real third-party peer, over stdio (the default):

    tests/interop/.venv/bin/python tests/interop/py_server.py

or over Streamable HTTP at http://127.0.0.1:PORT/mcp (the SDK's own transport, served by
uvicorn, bound to the loopback interface only):

    tests/interop/.venv/bin/python tests/interop/py_server.py --http PORT

Over stdio it must never write to stdout itself: stdout carries only MCP messages.
Diagnostics (if any) go to stderr through the SDK's logging.
"""

import argparse

import anyio
from mcp.server import MCPServer
from mcp.server.mcpserver.exceptions import ToolError

server = MCPServer(
    name="parity-interop-py",
    version="0.1.0",
    instructions="Test peer for parity: echo, add, sleep.",
)


@server.tool(description="Return the given text unchanged.")
def echo(text: str) -> str:
    return text


@server.tool(description="Add two integers.")
def add(a: int, b: int) -> int:
    return a + b


@server.tool(description="Sleep for the given number of seconds (0-60), then return how long it slept. "
                        "Negative or larger values are a tool error (isError: true).")
async def sleep(seconds: float) -> str:
    if not 0 <= seconds <= 60:
        raise ToolError("seconds must be between 0 and 60")
    await anyio.sleep(seconds)
    return f"slept {seconds}s"


def main() -> None:
    parser = argparse.ArgumentParser(description="parity interop MCP server (stdio by default)")
    parser.add_argument("--http", metavar="PORT", type=int,
                        help="serve Streamable HTTP on http://127.0.0.1:PORT/mcp instead of stdio")
    args = parser.parse_args()
    if args.http is None:
        server.run("stdio")
    else:
        # The SDK defaults (stateful sessions, SSE responses, DNS-rebinding protection that
        # allows only loopback Host and Origin values) are kept: they are what users get.
        server.run("streamable-http", host="127.0.0.1", port=args.http, streamable_http_path="/mcp")


if __name__ == "__main__":
    main()
