"""Escrow v4's pacts in stages (#55) as agents on the official Python MCP SDK's `Client` use them, in
its default mode (no `mode` given: `auto`), each agent spawning its own `agentpact mcp` over stdio,
or each reaching its own running server over streamable HTTP:

    mcp_stages.py <agentpact binary> [<mode>]   <mode>: what `Client(mode=...)` gets (default: none
                                                given, the SDK's `auto`; or 2026-07-28, pinned)
    mcp_stages.py http <seeker> <worker> <oracle-a> <oracle-b> <arbitrator>
                                                the URLs of five `agentpact mcp --http` servers, one
                                                per agent's key and role; the default mode

For ETH and then USDC, a seeker makes a pact of three stages (create-staged-pact) that a worker
accepts and starts; stage 0 is delivered, scored by both oracles, finalized and approved; stage 1
is delivered, disputed by the seeker and ruled 70/30 of its pot by the arbitrator; stage 2 is
settled at 40 % (the worker offers, the seeker accepts). The stages are read back (get-stages).

Keys: ROLE_KEY_SEEKER, ROLE_KEY_WORKER, ROLE_KEY_ORACLE_A, ROLE_KEY_ORACLE_B, ROLE_KEY_ARBITRATOR.
Inputs: FLOW_ORACLES (two addresses), FLOW_ARBITRATOR, FLOW_DEADLINE (Unix s) and the server
settings. Prints one line per check; exits non-zero at the first that fails; prints
`staged {"currency", "pactId"}` (JSON) for each pact, for the Rust test to check its credits on
chain and in GraphQL, and "stages complete".
"""

import json
import os
import sys
from contextlib import AsyncExitStack

import anyio
from mcp.client.client import Client
from steps import check, ok, server

# Each agent's role, as MCP_ROLE names it.
ROLES = {"seeker": "seeker", "worker": "worker", "oracle-a": "oracle", "oracle-b": "oracle", "arbitrator": "arbitrator"}

# Each currency's three stage amounts: ones that do not divide evenly, so rounding shows.
AMOUNTS = {"ETH": ["0.1", "0.200000000000000007", "0.300000000000000003"], "USDC": ["1", "2.500007", "3.000003"]}

DAY = 24 * 60 * 60


async def three_stages(a, currency):
    deadline = int(os.environ["FLOW_DEADLINE"])
    parts = AMOUNTS[currency]
    created = await ok(a["seeker"], "create-staged-pact", {
        "role": "buyer", "specHash": "QmThreeStageLandingPage", "deadline": deadline,
        "oracles": os.environ["FLOW_ORACLES"].split(","), "oracleWeights": [60, 40], "threshold": 70,
        "arbitrator": os.environ["FLOW_ARBITRATOR"], "currency": currency,
        "stages": [{"amount": parts[0], "deadline": deadline - 2 * DAY},
                   {"amount": parts[1], "deadline": deadline - DAY},
                   {"amount": parts[2], "deadline": deadline}],
    })
    pact = created["pactId"]
    check(created["status"] == "NEGOTIATING", f"{currency}: pact #{pact} of three stages created")
    await ok(a["worker"], "accept-pact", {"pactId": pact})
    await ok(a["worker"], "start-work", {"pactId": pact})

    # Stage 0: delivered, scored, finalized, approved.
    await ok(a["worker"], "submit-stage", {"pactId": pact, "stage": 0, "proofHash": "0x" + "51" * 32})
    for oracle, score in (("oracle-a", 90), ("oracle-b", 80)):
        await ok(a[oracle], "submit-stage-verification",
                 {"pactId": pact, "stage": 0, "score": score, "proof": "0x" + "77" * 32})
    finalized = await ok(a["oracle-a"], "finalize-stage", {"pactId": pact, "stage": 0})
    check(finalized["stageStatus"] == "PENDING_APPROVAL", f"stage 0 passed: {finalized}")
    approved = await ok(a["seeker"], "approve-stage", {"pactId": pact, "stage": 0})
    check((approved["stageStatus"], approved["status"]) == ("COMPLETED", "IN_PROGRESS"),
          f"stage 0 approved, the pact on to stage 1: {approved}")

    # Stage 1: delivered, disputed, ruled 70/30 of its pot.
    await ok(a["worker"], "submit-stage", {"pactId": pact, "stage": 1, "proofHash": "0x" + "52" * 32})
    disputed = await ok(a["seeker"], "dispute-stage",
                        {"pactId": pact, "stage": 1, "arbitrator": os.environ["FLOW_ARBITRATOR"]})
    check(disputed["status"] == "DISPUTED", f"stage 1 disputed: {disputed}")
    ruled = await ok(a["arbitrator"], "resolve-stage", {"pactId": pact, "stage": 1, "sellerShare": 7000})
    check(ruled["stageStatus"] == "SPLIT", f"stage 1 ruled 70/30: {ruled}")

    # Stage 2: the worker offers 40 %, the seeker accepts.
    offered = await ok(a["worker"], "propose-settlement", {"pactId": pact, "sellerShare": 4000})
    settled = await ok(a["seeker"], "accept-settlement", {"pactId": pact, "sellerShare": 4000})
    check(settled["status"] == "SPLIT", f"the pact settled: {settled}")
    check(settled["sellerCredited"] == offered["sellerWouldGet"],
          f"the offer said what it paid: {offered['sellerWouldGet']} {currency}")

    stages = await ok(a["worker"], "get-stages", {"pactId": pact})
    seen = [(s["status"], s["ending"]) for s in stages["stages"]]
    check(seen == [("COMPLETED", "COMPLETED"), ("SPLIT", "RULED"), ("SPLIT", "SPLIT")], f"the stages: {seen}")
    print("staged " + json.dumps({"currency": currency, "pactId": pact}), flush=True)


async def main():
    if sys.argv[1] == "http":
        targets, pinned = dict(zip(ROLES, sys.argv[2:])), {}
    else:
        targets = {agent: server(sys.argv[1], agent, role) for agent, role in ROLES.items()}
        # The SDK's default mode as its docs show it first, unless a mode is pinned.
        pinned = {"mode": sys.argv[2]} if len(sys.argv) > 2 else {}
    async with AsyncExitStack() as stack:
        agents = {}
        for agent in ROLES:
            agents[agent] = await stack.enter_async_context(
                Client(targets[agent], read_timeout_seconds=60, **pinned))
            check(agents[agent].protocol_version == "2026-07-28",
                  f"{agent} connected ({pinned or 'default mode'}): {agents[agent].protocol_version}")
        for currency in AMOUNTS:
            await three_stages(agents, currency)
    print("stages complete", flush=True)


anyio.run(main)
