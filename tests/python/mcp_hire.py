"""Seed 000's example usage, done by agents on the official Python MCP SDK's `Client` in its default
mode (no `mode` given: `auto`, `server/discover` first), each spawning its own `agentpact mcp` over
stdio:

    mcp_hire.py <agentpact binary>

A seeker that never registered anything finds a logo designer under 10 USDC, negotiates seed 004's
five messages through the relay at HIRE_RELAY_URL (proposal, the worker's questions, the seeker's
answers, the worker's counter, the seeker's acceptance, all in USDC), signs; the designer (which
registered in AgentRegistry and in ERC-8004 with `erc8004: true`) signs the same contract, works,
two oracles score it, the seeker approves and rates the designer five stars. The rating is read
back from the market (get_agent) and as ERC-8004 feedback grounded in the pact.

Keys: ROLE_KEY_SEEKER, ROLE_KEY_DESIGNER, ROLE_KEY_ORACLE_A, ROLE_KEY_ORACLE_B. Inputs: FLOW_ORACLES
(two addresses), FLOW_ARBITRATOR, FLOW_DEADLINE (Unix s), HIRE_RELAY_URL and the server settings.
Prints one line per check; exits non-zero at the first that fails; its last lines are
`hired {"pactId", "agentId", "seeker", "designer"}` (JSON, for the ERC-8004 SDK's reading) and
"hire complete".
"""

import json
import os
import sys
from contextlib import AsyncExitStack
from datetime import datetime, timezone

import anyio
from mcp.client.client import Client
from steps import check, ok, server

# Each agent's role, as MCP_ROLE names it.
ROLES = {"seeker": "seeker", "designer": "worker", "oracle-a": "oracle", "oracle-b": "oracle"}


def iso(seconds):
    return datetime.fromtimestamp(seconds, timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")


async def hire(a):
    seeker = (await ok(a["seeker"], "get-my-address", {}))["address"]
    designer = (await ok(a["designer"], "get-my-address", {}))["address"]
    unknown = await a["seeker"].call_tool("get_agent", {"agent_id": seeker})
    check(unknown.is_error, f"the seeker never registered: {unknown.content[0].text}")

    # The designer lists logo design at 5 (USDC, the market's currency) in both registries.
    listed = await ok(a["designer"], "register_agent", {
        "name": "DesignBot Pro", "description": "Logos for tech startups", "endpoint": "https://designbot.example/mcp",
        "wallet": designer, "capabilities": [{"name": "logo-design", "description": "SVG logos", "price": "5"}],
        "erc8004": True,
    })
    check(listed["erc8004Status"] == "registered", f"the designer is ERC-8004 agent #{listed['erc8004AgentId']}")
    agent_id = listed["erc8004AgentId"]

    # "Find me a logo designer under 10 USDC."
    found = await ok(a["seeker"], "search_agents", {"capability": "logo-design", "max_price": 10})
    best = found["agents"][0]
    price = best["pricing"]
    check(best["id"].lower() == designer.lower() and (price["price"], price["currency"]) == ("5", "USDC"),
          f"the seeker finds the designer at 5 USDC: {best['name']}, {price['price']} {price['currency']}")
    check(best["erc8004AgentId"] == agent_id, f"... with its ERC-8004 id {best['erc8004AgentId']}")

    # Seed 004's five messages, through the relay, in USDC.
    # As in the seed, the worker's counter promises delivery before the proposal's deadline and the
    # seeker accepts that date.
    deadline = int(os.environ["FLOW_DEADLINE"])
    delivery = iso(deadline - 3600)
    proposed = await ok(a["seeker"], "send_proposal", {
        "worker_id": designer, "task": "logo design",
        "requirements": ["SVG format", "3 variations", "tech startup style"], "budget": "5 USDC",
        "deadline": iso(deadline),
    })
    conversation = proposed["conversationId"]
    said = [proposed["status"]]
    for agent, kind, message in [
        ("designer", "clarification", {"questions": ["What colors should I use?", "Any specific style references?"]}),
        ("seeker", "clarification", {"answers": ["Colors: #FF5733, #333333", "Style: minimalist, modern"]}),
        ("designer", "counter", {"accepted_requirements": ["SVG format", "3 variations"], "price": "5 USDC",
                                 "estimated_delivery": delivery}),
        ("seeker", "accept", {"accepted_terms": {"price": "5 USDC", "deadline": delivery}}),
    ]:
        answer = await ok(a[agent], "respond_negotiation",
                          {"conversation_id": conversation, "type": kind, "message": message})
        said.append(answer["status"])
    check(said == ["NEGOTIATING"] * 4 + ["CONTRACTED"], f"five messages, then contracted: {said}")

    signed = await ok(a["seeker"], "sign_contract", {
        "conversation_id": conversation, "arbitrator": os.environ["FLOW_ARBITRATOR"],
        "oracles": os.environ["FLOW_ORACLES"].split(","), "oracle_weights": [60, 40],
    })
    accepted = await ok(a["designer"], "sign_contract", {"conversation_id": conversation})
    check((signed["currency"], signed["payment"], signed["role"]) == ("USDC", "5", "BUYER"),
          f"the seeker paid 5 USDC into pact #{signed['pactId']}: {signed['deposited']}")
    check((accepted["pactId"], accepted["status"]) == (signed["pactId"], "FUNDED"),
          f"the designer signed the same contract: {accepted['pactId']} {accepted['status']}")
    pact = int(signed["pactId"])

    await ok(a["designer"], "start-work", {"pactId": pact})
    await ok(a["designer"], "submit-work", {"pactId": pact, "proofHash": "0x" + "5a" * 32})
    for oracle, score in [("oracle-a", 90), ("oracle-b", 95)]:
        await ok(a[oracle], "submit-verification", {"pactId": pact, "score": score, "proof": "0x" + "77" * 32})
    finalized = await ok(a["oracle-a"], "finalize-verification", {"pactId": pact})
    check(finalized["status"] == "PENDING_APPROVAL", f"verified: {finalized['status']}")
    approved = await ok(a["seeker"], "approve-work", {"pactId": pact})
    check(approved["status"] == "COMPLETED", f"approved: {approved['status']}")

    rated = await ok(a["seeker"], "submit_feedback",
                     {"contract_id": str(pact), "rating": 5, "comment": "three clean variations", "tags": ["logo"]})
    given = rated.get("erc8004") or {}
    check(given.get("agentId") == agent_id and given.get("feedbackUri", "").startswith("data:application/json"),
          f"the rating also went to ERC-8004 agent #{given.get('agentId')}: {rated.get('erc8004Skipped')}")

    # Read back as any agent would: the market's rating and the grounded ERC-8004 feedback.
    profile = await ok(a["seeker"], "get_agent", {"agent_id": designer})
    feedback = profile["reputation"]["feedback"]
    check((feedback["count"], feedback["meanRating"]) == (1, 5), f"AgentPact holds the rating: {feedback}")
    e = profile["erc8004"]
    check((e["agentId"], e["feedback"], e["grounded"], e["rawMeanValue"], e["ungroundedShare"]) == (agent_id, 1, 1, 100, 0),
          f"ERC-8004 shows it grounded: {e}")

    print("hired " + json.dumps({"pactId": pact, "agentId": agent_id, "seeker": seeker, "designer": designer}),
          flush=True)


async def main():
    binary = sys.argv[1]
    async with AsyncExitStack() as stack:
        agents = {}
        for agent in ROLES:
            # The SDK's default mode, as its docs show it first.
            agents[agent] = await stack.enter_async_context(Client(server(binary, agent, ROLES[agent]), read_timeout_seconds=60))
            check(agents[agent].protocol_version == "2026-07-28",
                  f"{agent} connected in the default mode: {agents[agent].protocol_version}")
        await hire(agents)
    print("hire complete", flush=True)


anyio.run(main)
