"""Each part of seed 002's flows as its own agent: one `agentpact mcp` per role, each driven by the
official Python MCP SDK's `Client` in the mode given (`auto`, its default, or `2026-07-28`).

    mcp_roles.py <mode> stdio <agentpact binary>     the SDK spawns one server per role, each with
                                                     its key (ROLE_KEY_<ROLE>) and MCP_ROLE
    mcp_roles.py <mode> http <seeker> <worker> <oracle-a> <oracle-b> <arbitrator>
                                                     the URLs of five running servers

The seeker is a wallet that never registered anything (a buyer lists nothing to hire): it walks
seed 000's whole path without a registration anywhere: search_agents, get_agent, send_proposal,
respond_negotiation, sign_contract (through the relay at HIRE_RELAY_URL), approve-work,
submit_feedback; and proposes terms in stages, which the worker reads on the table and declines. The worker registers itself in the market and signs the same contract, whose
answer has the seeker's very fields; both oracles score; the arbitrator settles a dispute. Each
agent sees only its role's tools and is refused another role's step. Inputs: FLOW_ORACLES (two
addresses), FLOW_ARBITRATOR, FLOW_DEADLINE (Unix s), HIRE_RELAY_URL.
Prints one line per check; exits non-zero at the first that fails; ends with "roles complete".
"""

import os
import sys
from contextlib import AsyncExitStack
from datetime import datetime, timezone

import anyio
from mcp.client.client import Client
from mcp.client.stdio import StdioServerParameters
from steps import check, ok

ROLES = ["seeker", "worker", "oracle-a", "oracle-b", "arbitrator"]

# What a stdio server gets from this process's environment besides its key and role.
SERVER_SETTINGS = [
    "RPC_URL", "CHAIN_ID", "AGENT_PACT_ADDRESS", "ORACLE_REGISTRY_ADDRESS", "AGENT_REGISTRY_ADDRESS",
    "DATABASE_URL", "INDEX_WAIT_MS", "RUST_LOG", "HIRE_RELAY_URL", "WEBHOOK_ALLOW_TARGETS",
]

# What docs/mcp.md §Outputs lists for sign_contract: the seeker's and the worker's answer alike.
SIGNED_FIELDS = {
    "contractId", "conversationId", "currency", "currencyAddress", "deposited", "hash", "pactId", "payment",
    "role", "status", "termsDocument", "txHash",
}


def server(transport, targets, index, role):
    if transport == "http":
        return targets[index]
    env = {k: os.environ[k] for k in SERVER_SETTINGS if k in os.environ}
    env["PRIVATE_KEY"] = os.environ[f"ROLE_KEY_{role.upper().replace('-', '_')}"]
    env["MCP_ROLE"] = role.split("-")[0]
    return StdioServerParameters(command=targets[0], args=["mcp"], env=env)


async def refused(agent, tool, args, code):
    result = await agent.call_tool(tool, args)
    got = (result.structured_content or {}).get("error", {}).get("code")
    check(result.is_error and got == code, f"{tool} refused as {code} (got {got})")


async def deliver(a, pact, scores):
    """The worker starts and submits; both oracles score; oracle A finalizes."""
    await ok(a["worker"], "start-work", {"pactId": pact})
    await ok(a["worker"], "submit-work", {"pactId": pact, "proofHash": "0x" + "51" * 32})
    for oracle, score in zip(["oracle-a", "oracle-b"], scores):
        await ok(a[oracle], "submit-verification", {"pactId": pact, "score": score, "proof": "0x" + "77" * 32})
    return await ok(a["oracle-a"], "finalize-verification", {"pactId": pact})


async def webhooks(a):
    """Every role may ask to be told while it sleeps: each subscribes (signed with its own key,
    WEBHOOK_ALLOW_TARGETS opening loopback), sees only its own subscription, and cancels it."""
    ids = {}
    for role, agent in a.items():
        made = await ok(agent, "subscribe_webhook", {"url": f"http://127.0.0.1:9/{role}?token=t", "alarms": True})
        check(made["url"] == f"http://127.0.0.1:9/{role}" and made["mode"] == "instant", f"{role} subscribed: {made}")
        ids[role] = made["subscriptionId"]
    for role, agent in a.items():
        listed = (await ok(agent, "list_webhooks", {}))["webhooks"]
        check([w["subscriptionId"] for w in listed] == [ids[role]], f"{role} lists its own subscription only")
        other = next(r for r in a if r != role)
        await refused(agent, "cancel_webhook", {"subscriptionId": ids[other]}, "INVALID_INPUT")
        await ok(agent, "cancel_webhook", {"subscriptionId": ids[role]})


async def roles(a, mode):
    version = "2026-07-28"
    for role, agent in a.items():
        check(agent.protocol_version == version, f"{role} speaks {agent.protocol_version} in mode {mode}")
    tools = {role: {t.name for t in (await agent.list_tools()).tools} for role, agent in a.items()}
    check({"create-pact", "approve-work", "search_agents"} <= tools["seeker"]
          and not {"submit-work", "register_agent", "resolve-dispute"} & tools["seeker"], "the seeker's tools")
    check({"accept-pact", "submit-work", "register_agent"} <= tools["worker"]
          and "approve-work" not in tools["worker"], "the worker's tools")
    check("submit-verification" in tools["oracle-a"] and "create-pact" not in tools["oracle-a"], "the oracle's tools")
    check("resolve-dispute" in tools["arbitrator"] and "raise-dispute" not in tools["arbitrator"],
          "the arbitrator's tools")
    await refused(a["seeker"], "submit-work", {"pactId": 0, "proofHash": "0x" + "51" * 32}, "FORBIDDEN")
    await webhooks(a)

    seeker = (await ok(a["seeker"], "get-my-address", {}))["address"]
    worker = (await ok(a["worker"], "get-my-address", {}))["address"]
    unknown = await a["seeker"].call_tool("get_agent", {"agent_id": seeker})
    check(unknown.is_error, f"the seeker never registered: {unknown.content[0].text}")
    await ok(a["worker"], "register_agent", {
        "name": "Role Worker", "description": "works every role flow", "endpoint": "https://worker.example/mcp",
        "wallet": worker, "capabilities": [{"name": "landing-page", "description": "a page", "price": "5"}],
    })
    found = await ok(a["seeker"], "search_agents", {"capability": "landing-page"})
    check(any(x["id"].lower() == worker.lower() for x in found["agents"]), "the seeker finds the worker")
    profile = await ok(a["seeker"], "get_agent", {"agent_id": worker})
    check(profile["name"] == "Role Worker", f"the seeker reads the worker: {profile['name']}")

    # Seed 000's negotiation: the unregistered seeker proposes, the worker counters, the seeker
    # accepts; both sign the contract and get the same fields back.
    deadline = datetime.fromtimestamp(int(os.environ["FLOW_DEADLINE"]), timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")
    proposed = await ok(a["seeker"], "send_proposal", {
        "worker_id": worker, "task": "a landing page", "requirements": ["responsive"], "budget": "0.4 ETH",
        "deadline": deadline,
    })
    conversation = proposed["conversationId"]
    await ok(a["worker"], "respond_negotiation", {
        "conversation_id": conversation, "type": "counter", "message": {"price": "0.5 ETH"},
    })
    agreed = await ok(a["seeker"], "respond_negotiation", {
        "conversation_id": conversation, "type": "accept",
        "message": {"accepted_terms": {"price": "0.5 ETH", "deadline": deadline}},
    })
    check(agreed["status"] == "CONTRACTED", f"the terms are agreed: {agreed['status']}")
    signed = await ok(a["seeker"], "sign_contract", {
        "conversation_id": conversation, "arbitrator": os.environ["FLOW_ARBITRATOR"],
        "oracles": os.environ["FLOW_ORACLES"].split(","), "oracle_weights": [60, 40],
    })
    accepted = await ok(a["worker"], "sign_contract", {"conversation_id": conversation})
    check(set(signed) == SIGNED_FIELDS, f"the seeker's sign_contract answers every field: {sorted(signed)}")
    check(set(accepted) == set(signed), f"the worker's sign_contract answers the same fields: {sorted(accepted)}")
    check(
        accepted["pactId"] == signed["pactId"] == signed["contractId"] and accepted["hash"] == signed["hash"]
        and (signed["role"], accepted["role"], accepted["status"]) == ("BUYER", "SELLER", "FUNDED"),
        f"one contract, signed by both: {signed['pactId']} {signed['role']}, {accepted['pactId']} {accepted['role']}",
    )
    first = int(signed["pactId"])

    # Terms in stages (HIRE/1.0 `stages`): the worker reads them on the table, as the seeker sent
    # them, and declines.
    halfway = datetime.fromtimestamp(int(os.environ["FLOW_DEADLINE"]) - 6 * 3600, timezone.utc)
    staged = await ok(a["seeker"], "send_proposal", {
        "worker_id": worker, "task": "a landing page in two steps", "budget": "0.2 ETH",
        "stages": [{"title": "draft", "price": "0.05 ETH", "deadline": halfway.strftime("%Y-%m-%dT%H:%M:%SZ")},
                   {"title": "final", "price": "0.15 ETH", "deadline": deadline}],
    })
    listed = await ok(a["worker"], "get_conversations", {})
    table = next(c for c in listed["conversations"] if c["conversationId"] == staged["conversationId"])
    check([(s["title"], s["price"]) for s in table["stages"]] == [("draft", "0.05 ETH"), ("final", "0.15 ETH")]
          and table["deadline"] == int(os.environ["FLOW_DEADLINE"]) and table["price"] == "0.2 ETH",
          f"the worker reads the stages on the table, due by the last: {table}")
    await ok(a["worker"], "respond_negotiation", {
        "conversation_id": staged["conversationId"], "type": "reject", "message": {"reason": "one payment only"},
    })

    terms = {
        "role": "buyer", "specHash": "QmRoles", "deadline": int(os.environ["FLOW_DEADLINE"]),
        "oracles": os.environ["FLOW_ORACLES"].split(","), "oracleWeights": [60, 40], "threshold": 70,
        "paymentEth": "0.5", "arbitrator": os.environ["FLOW_ARBITRATOR"],
    }
    finalized = await deliver(a, first, [85, 90])
    check(finalized["status"] == "PENDING_APPROVAL" and finalized["score"] == 87, f"verified: {finalized}")
    await ok(a["seeker"], "approve-work", {"pactId": first})
    withdrawn = await ok(a["worker"], "withdraw", {})
    check(withdrawn["withdrawn"], f"the worker collected its pay: {withdrawn}")

    second = int((await ok(a["seeker"], "create-pact", terms))["pactId"])
    await ok(a["worker"], "accept-pact", {"pactId": second})
    await ok(a["worker"], "raise-dispute", {"pactId": second, "arbitrator": os.environ["FLOW_ARBITRATOR"]})
    ruled = await ok(a["arbitrator"], "resolve-dispute", {"pactId": second, "sellerWins": False})
    check(ruled["credited"] == "0.6", f"the arbitrator ruled for the seeker: {ruled}")

    # Escrow v3: the worker offers to settle at 70 % of the payment, the seeker accepts that offer.
    third = int((await ok(a["seeker"], "create-pact", terms))["pactId"])
    await ok(a["worker"], "accept-pact", {"pactId": third})
    offer = await ok(a["worker"], "propose-settlement", {"pactId": third, "sellerShare": 7000})
    check(offer["round"] == 1 and offer["sellerWouldGet"] == "0.4", f"the worker's offer: {offer}")
    settled = await ok(a["seeker"], "accept-settlement", {"pactId": third, "sellerShare": 7000})
    check(
        settled["status"] == "SPLIT" and settled["sellerCredited"] == "0.4" and settled["buyerCredited"] == "0.2",
        f"settled 70/30, each stake back: {settled}",
    )
    await ok(a["seeker"], "submit_feedback", {"contract_id": str(first), "rating": 5, "comment": "on time"})
    pact = await ok(a["arbitrator"], "get-pact", {"pactId": first})
    check(pact["status"] == "COMPLETED", f"every role reads the pact: {pact['status']}")


async def main():
    mode, transport, targets = sys.argv[1], sys.argv[2], sys.argv[3:]
    async with AsyncExitStack() as stack:
        agents = {}
        for index, role in enumerate(ROLES):
            params = server(transport, targets, index, role)
            agents[role] = await stack.enter_async_context(Client(params, mode=mode, read_timeout_seconds=60))
        await roles(agents, mode)
    print("roles complete", flush=True)


anyio.run(main)
