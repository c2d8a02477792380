"""A small MCP stdio server built on the PyPI `mcp` package (pinned in requirements.txt).

parity's interop tests run it as a real third-party peer:

    tests/interop/.venv/bin/python tests/interop/py_server.py

It must never write to stdout itself: stdout carries only MCP messages.
Diagnostics (if any) go to stderr through the SDK's logging.
"""

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


if __name__ == "__main__":
    server.run("stdio")
