"""Connects to `agentpact mcp` the way the official Python MCP SDK's docs show first: `Client(...)`,
in the mode given (its default is `auto`: `server/discover`, then the `initialize` fallback).

    mcp_connect.py <mode> stdio <agentpact binary>   the SDK spawns `agentpact mcp` with this
                                                     process's environment
    mcp_connect.py <mode> http <url>                 a running `agentpact mcp --http`

Prints `connected <protocol version>: <n> tools; <get-pact-count's text>` when the session works,
or `refused <code>: <message>` when the server answered the first call with a JSON-RPC error (a
mode it does not serve). Anything else (a closed connection, a timeout) is a traceback and a
non-zero exit.
"""

import os
import sys

import anyio
from mcp.client.client import Client
from mcp.client.stdio import StdioServerParameters
from mcp.shared.exceptions import MCPError


def innermost(error: BaseException) -> BaseException:
    while isinstance(error, BaseExceptionGroup) and error.exceptions:
        error = error.exceptions[0]
    return error


async def main() -> None:
    mode, transport, target = sys.argv[1], sys.argv[2], sys.argv[3]
    server = StdioServerParameters(command=target, args=["mcp"], env=dict(os.environ)) if transport == "stdio" else target
    try:
        async with Client(server, mode=mode, read_timeout_seconds=60) as client:
            tools = await client.list_tools()
            count = await client.call_tool("get-pact-count", {})
            text = " ".join(getattr(c, "text", "") for c in count.content)
            print(f"connected {client.protocol_version}: {len(tools.tools)} tools; {text}")
    except BaseException as raised:  # noqa: BLE001 - the innermost error is the answer
        error = innermost(raised)
        if isinstance(error, MCPError):
            print(f"refused {error.code}: {error}")
            return
        raise


anyio.run(main)
