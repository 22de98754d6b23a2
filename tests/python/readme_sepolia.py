"""Steps 5-7 of README.md's "On Base Sepolia", done by four agents on the official Python MCP SDK's
`Client` in its default mode (no `mode` given), each starting its own `agentpact mcp` over stdio
from the `mcpServers` entry `agentpact deploy` printed, completed as the README says (DATABASE_URL,
HIRE_RELAY_URL, MCP_ROLE, PRIVATE_KEY), in a working directory that holds no deployments file:

    readme_sepolia.py

An oracle registers; a worker lists a capability at 5 USDC; the seeker finds both, proposes; the
worker finds the proposal with get_conversations and accepts it; both sign; the worker delivers,
the oracle scores, the seeker approves and both withdraw. Every id goes back into the next tool
exactly as the last one answered it.

Inputs (environment): RECIPE_ENTRY (the printed entry's JSON), RECIPE_CWD, DATABASE_URL,
HIRE_RELAY_URL, SEEKER_KEY, WORKER_KEY, ORACLE_KEY, ARBITRATOR. Prints one line per check; exits
non-zero at the first that fails; its last lines are `paid {"pactId", "seeker", "worker"}` and
"recipe complete".
"""

import json
import os
import time
from contextlib import AsyncExitStack
from datetime import datetime, timezone

import anyio
from mcp.client.client import Client
from mcp.client.stdio import StdioServerParameters
from steps import check, ok

# Each agent: its MCP_ROLE and the variable holding its key.
AGENTS = {"seeker": ("seeker", "SEEKER_KEY"), "worker": ("worker", "WORKER_KEY"), "oracle": ("oracle", "ORACLE_KEY")}


def server(agent):
    """The printed entry, completed for `agent` the way README's step 5 says."""
    entry = json.loads(os.environ["RECIPE_ENTRY"])["mcpServers"]["agentpact"]
    role, key = AGENTS[agent]
    env = dict(entry["env"])
    env.update(DATABASE_URL=os.environ["DATABASE_URL"], HIRE_RELAY_URL=os.environ["HIRE_RELAY_URL"],
               MCP_ROLE=role, PRIVATE_KEY=os.environ[key])
    return StdioServerParameters(command=entry["command"], args=entry["args"], env=env, cwd=os.environ["RECIPE_CWD"])


def iso(seconds):
    return datetime.fromtimestamp(seconds, timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")


async def recipe(a):
    me = {name: (await ok(agent, "get-my-address", {}))["address"] for name, agent in a.items()}

    # Step 6: a fresh deployment has no oracles; one registers with the least stake.
    await ok(a["oracle"], "register-oracle", {"capabilities": ["logo-design"], "stakeEth": "0.01"})

    # Step 7.1: the worker lists a capability at 5 USDC.
    await ok(a["worker"], "register_agent", {
        "name": "DesignBot", "description": "Logos for tech startups", "endpoint": "https://designbot.example/mcp",
        "wallet": me["worker"], "capabilities": [{"name": "logo-design", "description": "SVG logos", "price": "5"}],
    })

    # Step 7.2: the seeker finds the worker under 10 USDC and the oracle, and proposes.
    found = (await ok(a["seeker"], "search_agents", {"capability": "logo-design", "max_price": "10"}))["agents"]
    check([f["id"] for f in found] == [me["worker"]], f"the seeker finds the worker: {[f['id'] for f in found]}")
    oracles = (await ok(a["seeker"], "search_oracles", {"capability": "logo-design"}))["oracles"]
    oracle = oracles[0]["address"] if oracles else None
    check(oracle == me["oracle"], f"the seeker finds the oracle: {oracle}")
    proposed = await ok(a["seeker"], "send_proposal", {
        "worker_id": found[0]["id"], "task": "logo design", "requirements": ["SVG format"], "budget": "5 USDC",
        "deadline": iso(int(time.time()) + 2 * 86400),
    })

    # Step 7.3: the worker, checking its conversations, finds the proposal and accepts its terms.
    waiting = (await ok(a["worker"], "get_conversations", {}))["conversations"]
    check([c["conversationId"] for c in waiting] == [proposed["conversationId"]],
          f"the worker sees the proposal: {[c['conversationId'] for c in waiting]}")
    terms = waiting[0]
    accepted = await ok(a["worker"], "respond_negotiation", {
        "conversation_id": terms["conversationId"], "type": "accept",
        "message": {"accepted_terms": {"price": terms["price"], "deadline": iso(terms["deadline"])}},
    })
    check(accepted["status"] == "CONTRACTED", f"agreed: {accepted['status']}")

    # Step 7.4: both sign; the seeker pays 5 USDC into the escrow.
    signed = await ok(a["seeker"], "sign_contract", {
        "conversation_id": terms["conversationId"], "arbitrator": os.environ["ARBITRATOR"],
        "oracles": [oracle], "oracle_weights": [100],
    })
    check((signed["currency"], signed["payment"]) == ("USDC", "5"), f"pact {signed['pactId']}: {signed['deposited']}")
    countersigned = await ok(a["worker"], "sign_contract", {"conversation_id": terms["conversationId"]})
    check((countersigned["pactId"], countersigned["status"]) == (signed["pactId"], "FUNDED"),
          f"the worker signed the same pact: {countersigned['pactId']} {countersigned['status']}")
    pact = signed["pactId"]

    # Step 7.5-7.6: work, score, approve, withdraw.
    await ok(a["worker"], "start-work", {"pactId": pact})
    await ok(a["worker"], "submit-work", {"pactId": pact, "proofHash": "0x" + "5a" * 32})
    await ok(a["oracle"], "submit-verification", {"pactId": pact, "score": 90, "proof": "0x" + "77" * 32})
    finalized = await ok(a["oracle"], "finalize-verification", {"pactId": pact})
    check(finalized["status"] == "PENDING_APPROVAL", f"scored: {finalized['status']}")
    approved = await ok(a["seeker"], "approve-work", {"pactId": pact})
    check(approved["status"] == "COMPLETED", f"approved: {approved['status']}")
    for agent in ("seeker", "worker"):
        withdrawn = await ok(a[agent], "withdraw", {})
        check(withdrawn["withdrawn"], f"the {agent} withdrew {withdrawn['withdrawn']}")
        print(f"{agent} holds {json.dumps(await ok(a[agent], 'get-my-address', {}))}", flush=True)

    print("paid " + json.dumps({"pactId": pact, "seeker": me["seeker"], "worker": me["worker"]}), flush=True)


async def main():
    async with AsyncExitStack() as stack:
        agents = {}
        for agent in AGENTS:
            # The SDK's default mode, as its docs show it first.
            agents[agent] = await stack.enter_async_context(Client(server(agent), read_timeout_seconds=60))
        await recipe(agents)
    print("recipe complete", flush=True)


anyio.run(main)
