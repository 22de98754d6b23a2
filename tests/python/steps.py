"""What every agent script under tests/python does at each step: check a condition (one printed
line per check, exit non-zero at the first that fails) and call a tool that must succeed, and how
it spawns an agent's `agentpact mcp` over stdio. Imported by the scripts beside it (Python puts a
script's own directory on the import path)."""

import os

from mcp.client.stdio import StdioServerParameters

# What a server gets from this process's environment besides its key and role.
SERVER_SETTINGS = [
    "RPC_URL", "CHAIN_ID", "AGENT_PACT_ADDRESS", "ORACLE_REGISTRY_ADDRESS", "AGENT_REGISTRY_ADDRESS",
    "ERC8004_IDENTITY_ADDRESS", "ERC8004_REPUTATION_ADDRESS", "DATABASE_URL", "INDEX_WAIT_MS", "RUST_LOG",
    "HIRE_RELAY_URL",
]


def server(binary, agent, role):
    """`agentpact mcp` over stdio as `agent` (its key in ROLE_KEY_<AGENT>) in `role`."""
    env = {k: os.environ[k] for k in SERVER_SETTINGS if k in os.environ}
    env["PRIVATE_KEY"] = os.environ[f"ROLE_KEY_{agent.upper().replace('-', '_')}"]
    env["MCP_ROLE"] = role
    return StdioServerParameters(command=binary, args=["mcp"], env=env)


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
