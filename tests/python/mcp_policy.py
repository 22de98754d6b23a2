"""Spends one wallet through `agentpact mcp --http` with the official Python MCP SDK's `Client` in its
default mode (`auto`), as agents would, for the wallet-policy tests (tests/tests/wallet_policy.rs).

    mcp_policy.py burst <url> <calls> <terms JSON>
        <calls> create-pact calls at once, each through a `Client` of its own (its own connections:
        behind a round-robin proxy they spread over every process)
    mcp_policy.py until-refused <url> <workers> <limit> <terms JSON>
        <workers> agents calling create-pact over and over at once, each a new `Client` per call,
        each stopping at its first FORBIDDEN answer (or when <limit> calls were made in all): a
        burst that lasts until the policy stops it, however fast or slow the machine is
    mcp_policy.py call <url> <tool> <arguments JSON>
        one call

Prints one line per call: `answer {"isError", "code", "text", "structured"}` (JSON after the word,
what the SDK itself received; a call the SDK could not make has "exception" instead), then
`policy complete`.
"""

import json
import sys

import anyio
from mcp.client.client import Client

#: How long one call may wait for its answer (a bound for a hung run: the server answers sooner).
READ_TIMEOUT = 120


def answer_of(result):
    """What a test reads from a tool result: the error flag, the error code, the text, the data."""
    text = " ".join(getattr(c, "text", "") for c in result.content)
    structured = result.structured_content
    code = ((structured or {}).get("error") or {}).get("code") if isinstance(structured, dict) else None
    return {"isError": bool(result.is_error), "code": code, "text": text, "structured": structured}


async def call(url, tool, arguments):
    """One call through a `Client` of its own; its answer, or the exception that stopped it."""
    try:
        async with Client(url, read_timeout_seconds=READ_TIMEOUT) as client:
            return answer_of(await client.call_tool(tool, arguments))
    except Exception as error:  # noqa: BLE001 - reported to the test, which fails on it
        return {"isError": True, "code": None, "text": "", "structured": None, "exception": repr(error)}


def show(answer):
    print("answer " + json.dumps(answer), flush=True)


async def burst(url, calls, terms):
    """`calls` create-pact calls at once."""
    async with anyio.create_task_group() as group:
        for _ in range(calls):
            async def one():
                show(await call(url, "create-pact", terms))

            group.start_soon(one)


async def until_refused(url, workers, limit, terms):
    """`workers` agents calling create-pact until each is refused (FORBIDDEN), `limit` calls at most."""
    made = 0

    async def worker():
        nonlocal made
        while made < limit:
            made += 1
            answer = await call(url, "create-pact", terms)
            show(answer)
            if answer["code"] == "FORBIDDEN" or "exception" in answer:
                return

    async with anyio.create_task_group() as group:
        for _ in range(workers):
            group.start_soon(worker)


async def main():
    command = sys.argv[1]
    if command == "burst":
        await burst(sys.argv[2], int(sys.argv[3]), json.loads(sys.argv[4]))
    elif command == "until-refused":
        await until_refused(sys.argv[2], int(sys.argv[3]), int(sys.argv[4]), json.loads(sys.argv[5]))
    elif command == "call":
        show(await call(sys.argv[2], sys.argv[3], json.loads(sys.argv[4])))
    else:
        raise SystemExit(f"unknown command {command!r}: burst, until-refused or call")
    print("policy complete", flush=True)


anyio.run(main)
