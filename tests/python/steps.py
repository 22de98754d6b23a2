"""What every agent script under tests/python does at each step: check a condition (one printed
line per check, exit non-zero at the first that fails) and call a tool that must succeed. Imported
by the scripts beside it (Python puts a script's own directory on the import path)."""


def check(condition, what):
    if not condition:
        print(f"FAILED: {what}", flush=True)
        raise SystemExit(1)
    print(f"ok: {what}", flush=True)


async def ok(agent, tool, args):
    """Calls `tool` through the SDK's `Client`; its structured answer, or exits naming the error."""
    result = await agent.call_tool(tool, args)
    text = " ".join(getattr(c, "text", "") for c in result.content)
    check(not result.is_error, f"{tool}: {text}")
    return result.structured_content
