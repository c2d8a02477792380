"""Drives an MCP stdio server with the PyPI `mcp` client, as a real client would.

Used to record the shipped transcript `scenarios/mcp/recorded/py-mcp-client-session.jsonl`:

    PATH="$PWD/target/debug:$PATH" tests/interop/.venv/bin/python tests/interop/record_session.py \
        parity record --out scenarios/mcp/recorded/py-mcp-client-session.jsonl -- parity reference mcp
"""

import asyncio
import sys

from mcp import ClientSession, StdioServerParameters
from mcp.client.stdio import stdio_client


async def main() -> None:
    params = StdioServerParameters(command=sys.argv[1], args=sys.argv[2:])
    async with stdio_client(params) as (read, write):
        async with ClientSession(read, write) as session:
            await session.initialize()
            await session.list_tools()
            await session.call_tool("read_file", {"path": "README.md"})
            await session.call_tool("list_dir", {"path": "notes"})
            await session.call_tool("write_file", {"path": "notes/new.txt", "content": "hi\n"})
            await session.call_tool("read_file", {"path": "notes/new.txt"})
            await session.call_tool("read_file", {"path": "../outside.txt"})
            await session.call_tool("exec", {"argv": ["ls"]})


asyncio.run(main())
