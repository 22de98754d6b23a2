"""Calls one tool of `agentpact mcp` the way the official Python MCP SDK's docs show first:
`Client(...)` in its default mode (`auto`), the SDK spawning the server over stdio with this
process's environment.

    mcp_call.py <agentpact binary> <tool> <arguments as JSON>

Prints `answer {"isError": …, "text": …, "structured": …}` (one line of JSON after the word), so a
test reads what the SDK itself received. Anything else (a closed connection, a protocol error) is
a traceback and a non-zero exit.
"""

import json
import os
import sys

import anyio
from mcp.client.client import Client
from mcp.client.stdio import StdioServerParameters


async def main() -> None:
    binary, tool, arguments = sys.argv[1], sys.argv[2], json.loads(sys.argv[3])
    server = StdioServerParameters(command=binary, args=["mcp"], env=dict(os.environ))
    async with Client(server, read_timeout_seconds=60) as client:
        result = await client.call_tool(tool, arguments)
        text = " ".join(getattr(c, "text", "") for c in result.content)
        answer = {"isError": bool(result.is_error), "text": text, "structured": result.structured_content}
        print("answer " + json.dumps(answer))


anyio.run(main)
