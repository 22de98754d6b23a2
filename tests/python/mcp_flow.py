"""Drives `agentpact mcp` with the official Python MCP SDK (PyPI `mcp`), as an agent's host would.

    mcp_flow.py stdio <agentpact binary>   the SDK spawns `agentpact mcp` with this process's
                                           AGENTPACT_* / chain / database settings
    mcp_flow.py http <url>                 a running `agentpact mcp --http`, e.g. http://127.0.0.1:4000/mcp

The flow: list tools (each with an outputSchema the SDK checks answers against, and annotations),
templates and a prompt; subscribe to the pact about to be created; create it above the
confirmation threshold, declined once (nothing sent), cancelled while the human is asked (a
late yes sends nothing) and accepted once (sent, with progress reports); see `notifications/resources/updated` for it and the list change; read it through its
template and complete its id. The inputs come from FLOW_ORACLE, FLOW_ARBITRATOR, FLOW_DEADLINE.
Prints one line per check; exits non-zero at the first that fails.
"""

import json
import os
import sys

import anyio
import mcp.types as types
from mcp import ClientSession
from mcp.client.stdio import StdioServerParameters, stdio_client
from mcp.client.streamable_http import streamable_http_client

# What the stdio server gets from this process's environment.
SERVER_SETTINGS = [
    "PRIVATE_KEY", "RPC_URL", "CHAIN_ID", "AGENT_PACT_ADDRESS", "ORACLE_REGISTRY_ADDRESS",
    "AGENT_REGISTRY_ADDRESS", "DATABASE_URL", "CONFIRM_ABOVE_ETH", "INDEX_WAIT_MS", "RUST_LOG",
]


def check(condition, what):
    if not condition:
        print(f"FAILED: {what}", flush=True)
        raise SystemExit(1)
    print(f"ok: {what}", flush=True)


class Human:
    """Answers the server's confirmations with the answers queued for it, and keeps the questions."""

    def __init__(self):
        self.answers = []
        self.questions = []

    async def __call__(self, context, params):
        self.questions.append(params.message)
        answer = self.answers.pop(0)
        if answer == "late yes":
            await anyio.sleep(1.5)
        if answer in ("accept", "late yes"):
            return types.ElicitResult(action="accept", content={"confirm": True})
        return types.ElicitResult(action="decline")


class Inbox:
    """Every notification the server sent."""

    def __init__(self):
        self.updated = []
        self.list_changed = 0

    async def __call__(self, message):
        message = getattr(message, "root", message)
        if isinstance(message, types.ResourceUpdatedNotification):
            self.updated.append(message.params.uri)
        elif isinstance(message, types.ResourceListChangedNotification):
            self.list_changed += 1


async def flow(session, human, inbox):
    init = await session.initialize()
    check(init.protocol_version == "2025-11-25", f"protocol {init.protocol_version}")
    caps = init.capabilities
    check(caps.resources.subscribe and caps.resources.list_changed, "resources: subscribe and listChanged")

    tools = (await session.list_tools()).tools
    check(len(tools) == 31, f"{len(tools)} tools listed")
    check(all(t.output_schema and t.output_schema.get("type") == "object" for t in tools), "every tool has an outputSchema")
    by_name = {t.name: t for t in tools}
    check(by_name["get-pact"].annotations.read_only_hint is True, "get-pact is read-only")
    check(by_name["withdraw"].annotations.destructive_hint is True, "withdraw is destructive")

    templates = [t.uri_template for t in (await session.list_resource_templates()).resource_templates]
    check("pact://pacts/{id}" in templates and "hire://agents/{address}" in templates, f"templates {templates}")
    prompt = await session.get_prompt("hire-agent", {"capability": "logo-design", "max_price": "10"})
    text = prompt.messages[0].content.text
    check("search_agents" in text and "logo-design" in text, "the hire-agent prompt names the tools in order")

    count = (await session.call_tool("get-pact-count", {})).structured_content["count"]
    pact = f"pact://pacts/{count}"
    await session.subscribe_resource(pact)
    terms = {
        "role": "buyer", "specHash": "QmPythonSdk", "deadline": int(os.environ["FLOW_DEADLINE"]),
        "oracles": [os.environ["FLOW_ORACLE"]], "oracleWeights": [100], "threshold": 50,
        "paymentEth": "0.5", "arbitrator": os.environ["FLOW_ARBITRATOR"],
    }

    human.answers.append("decline")
    declined = await session.call_tool("create-pact", terms)
    check(declined.is_error and declined.structured_content["error"]["code"] == "NOT_CONFIRMED",
          f"declined: {declined.content[0].text}")
    check("0.55 ETH" in human.questions[0] and "Counterparty: anyone who accepts" in human.questions[0],
          f"the human was asked with the amount and the counterparty: {human.questions[0]}")
    after = (await session.call_tool("get-pact-count", {})).structured_content["count"]
    check(after == count, "nothing was sent when the human declined")

    # Cancelled while the human is being asked: a yes that arrives afterwards sends nothing.
    human.answers.append("late yes")
    with anyio.move_on_after(0.5):
        await session.call_tool("create-pact", terms)
    await anyio.sleep(2.5)
    after = (await session.call_tool("get-pact-count", {})).structured_content["count"]
    check(len(human.questions) == 2 and after == count, "a call cancelled while asking sent nothing on a late yes")

    human.answers.append("accept")
    steps = []

    async def progress(value, total, message):
        steps.append(message)

    created = await session.call_tool("create-pact", terms, progress_callback=progress)
    check(not created.is_error, f"created after the human confirmed: {created.content[0].text}")
    check(created.structured_content["pactId"] == count, "the pact is the one subscribed to")
    check(any(s.startswith("sent: transaction 0x") for s in steps) and any(s.startswith("mined") for s in steps),
          f"progress during the write: {steps}")

    with anyio.move_on_after(15):
        while pact not in inbox.updated or inbox.list_changed == 0:
            await anyio.sleep(0.05)
    check(pact in inbox.updated and inbox.list_changed > 0,
          f"resources/updated for {pact} and resources/list_changed after the write "
          f"(updated: {inbox.updated}, list changes: {inbox.list_changed})")

    read = await session.read_resource(pact)
    body = json.loads(read.contents[0].text)
    check(body["status"] == "NEGOTIATING" and body["payment"] == "0.5", f"{pact} read through its template")
    listed = [str(r.uri) for r in (await session.list_resources()).resources]
    check(pact in listed, "the new pact is among the listed resources")

    completion = await session.complete(
        types.ResourceTemplateReference(type="ref/resource", uri="pact://pacts/{id}"), {"name": "id", "value": count[0]}
    )
    check(count in completion.completion.values, f"completion offers {completion.completion.values}")


async def main():
    transport, target = sys.argv[1], sys.argv[2]
    human, inbox = Human(), Inbox()
    if transport == "stdio":
        env = {k: os.environ[k] for k in SERVER_SETTINGS if k in os.environ}
        streams = stdio_client(StdioServerParameters(command=target, args=["mcp"], env=env))
    else:
        streams = streamable_http_client(target)
    async with streams as (read, write):
        async with ClientSession(read, write, elicitation_callback=human, message_handler=inbox) as session:
            await flow(session, human, inbox)
    print("flow complete", flush=True)


anyio.run(main)
