"""Drives `agentpact mcp` with the official Python MCP SDK's `Client`, as an agent's host would.

    mcp_flow.py <mode> stdio <agentpact binary>   the SDK spawns `agentpact mcp` with this process's
                                                  AGENTPACT_* / chain / database settings
    mcp_flow.py <mode> http <url>                 a running `agentpact mcp --http`, e.g. http://127.0.0.1:4000/mcp

<mode> is what `Client(mode=...)` gets:
    2026-07-28  no handshake; news about the pact arrives on a `subscriptions/listen` stream, and a
                confirmation comes back as an input_required result that the SDK answers through
                the elicitation callback and retries by itself
    legacy      `initialize` (2025-11-25); `resources/subscribe` and notifications; a confirmation
                is an `elicitation/create` request sent while the call waits

The flow: the protocol version and the resource capabilities; the tools (each with an outputSchema
the SDK checks answers against, and annotations), templates and a prompt; watch the pact about to
be created; create it above the confirmation threshold, declined once (nothing sent), in legacy mode
cancelled while the human is asked (a late yes sends nothing), and confirmed once (sent, with
progress reports); hear that the pact was updated and the list changed; read it through its
template, find it listed and complete its id.

A confirmation is a URL-mode elicitation: the "human" does what a person in a browser would, with
plain HTTP — opens the page the server links to and presses confirm or decline (a form POST).
The inputs come from FLOW_ORACLE, FLOW_ARBITRATOR, FLOW_DEADLINE; FLOW_TOOLS is how many tools a full agent
lists (the Rust test passes the catalog's count).
Prints one line per check; exits non-zero at the first that fails.
"""

import json
import os
import sys
import warnings

import anyio
import httpx2 as httpx  # the SDK's HTTP client (the `httpx` fork it ships with)
import mcp.types as types
from mcp.client.client import Client
from mcp.client.stdio import StdioServerParameters
from mcp.client.subscriptions import ResourcesListChanged, ResourceUpdated
from mcp.shared.exceptions import MCPDeprecationWarning

# Legacy mode uses resources/subscribe on purpose: that is what 2025-11-25 clients do.
warnings.simplefilter("ignore", MCPDeprecationWarning)

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
    """A person at a browser, answering the server's confirmations with the answers queued for them:
    "confirm" or "decline" (opens the page and presses that button), or "late" (opens the page and
    is too slow: the flow presses confirm for them once the call is gone)."""

    def __init__(self):
        self.answers = []
        self.modes = []  # the elicitation mode of each question
        self.questions = []  # what the client would show: params.message
        self.pages = []  # (HTTP status, HTML) of each confirmation page opened
        self.presses = []  # (decision, HTTP status) of each button pressed
        self.late_page = None  # the page the slow human is still reading

    async def __call__(self, context, params):
        self.modes.append(params.mode)
        if params.mode != "url":
            return types.ElicitResult(action="decline")
        self.questions.append(params.message)
        self.pages.append(await self.open(params.url))
        answer = self.answers.pop(0) if self.answers else "none queued"
        if answer == "late":
            self.late_page = params.url
            await anyio.sleep(1.5)
        elif answer in ("confirm", "decline"):
            await self.press(params.url, answer)
        else:
            return types.ElicitResult(action="cancel")
        # In URL mode "accept" only says the human went to the page; the page holds the decision.
        return types.ElicitResult(action="accept")

    async def open(self, url):
        try:
            async with httpx.AsyncClient(trust_env=False) as browser:
                page = await browser.get(url)
            return page.status_code, page.text
        except httpx.HTTPError as error:
            return None, f"{url}: {error!r}"

    async def press(self, url, decision):
        """POSTs the page's form (application/x-www-form-urlencoded); redirects are not followed."""
        try:
            async with httpx.AsyncClient(trust_env=False, follow_redirects=False) as browser:
                answer = await browser.post(url, data={"decision": decision})
            self.presses.append((decision, answer.status_code))
        except httpx.HTTPError as error:
            self.presses.append((decision, f"{url}: {error!r}"))


def pressed(human, decision):
    """Whether the human's last press was `decision` and the page took it (2xx, or 303 to a result page)."""
    last = human.presses[-1] if human.presses else (None, None)
    return last[0] == decision and isinstance(last[1], int) and last[1] < 400


class News:
    """What the server said changed. In legacy mode it arrives as notifications (this is the
    client's message handler); in 2026-07-28 mode as the events of a listen stream (`follow`)."""

    def __init__(self, modern):
        self.modern = modern
        self.updated = []
        self.list_changed = 0

    async def __call__(self, message):
        if self.modern:
            return  # the listen stream's frames reach here too; they are counted from the stream
        if isinstance(message, types.ResourceUpdatedNotification):
            self.updated.append(str(message.params.uri))
        elif isinstance(message, types.ResourceListChangedNotification):
            self.list_changed += 1

    async def follow(self, stream):
        async for event in stream:
            if isinstance(event, ResourceUpdated):
                self.updated.append(event.uri)
            elif isinstance(event, ResourcesListChanged):
                self.list_changed += 1


async def until(condition, seconds):
    """Waits up to `seconds` for `condition()` to hold."""
    with anyio.move_on_after(seconds):
        while not condition():
            await anyio.sleep(0.05)


async def pact_count(client):
    return (await client.call_tool("get-pact-count", {})).structured_content["count"]


async def capabilities(client, modern):
    """The server's capabilities: from `initialize` in legacy mode; a 2026-07-28 client that took
    the version without asking sends `server/discover` for them."""
    if not modern:
        return client.server_capabilities
    discovered = await client.session.send_discover(client.protocol_version)
    return types.DiscoverResult.model_validate(discovered).capabilities


async def offer(client):
    """The tools, templates and a prompt."""
    tools = (await client.list_tools()).tools
    expected = int(os.environ["FLOW_TOOLS"])
    check(len(tools) == expected, f"{len(tools)} tools listed, {expected} expected")
    check(all(t.output_schema and t.output_schema.get("type") == "object" for t in tools), "every tool has an outputSchema")
    by_name = {t.name: t for t in tools}
    check(by_name["get-pact"].annotations.read_only_hint is True, "get-pact is read-only")
    check(by_name["withdraw"].annotations.destructive_hint is True, "withdraw is destructive")

    templates = [t.uri_template for t in (await client.list_resource_templates()).resource_templates]
    check("pact://pacts/{id}" in templates and "hire://agents/{address}" in templates, f"templates {templates}")
    prompt = await client.get_prompt("hire-agent", {"capability": "logo-design", "max_price": "10"})
    text = prompt.messages[0].content.text
    check("search_agents" in text and "logo-design" in text, "the hire-agent prompt names the tools in order")


async def create(client, modern, human, count):
    """create-pact above the confirmation threshold: declined, (legacy) cancelled while asking, confirmed."""
    terms = {
        "role": "buyer", "specHash": "QmPythonSdk", "deadline": int(os.environ["FLOW_DEADLINE"]),
        "oracles": [os.environ["FLOW_ORACLE"]], "oracleWeights": [100], "threshold": 50,
        "paymentEth": "0.5", "arbitrator": os.environ["FLOW_ARBITRATOR"],
    }

    human.answers.append("decline")
    declined = await client.call_tool("create-pact", terms)
    code = ((declined.structured_content or {}).get("error") or {}).get("code")
    check(declined.is_error and code == "NOT_CONFIRMED", f"declined: {declined.content[0].text}")
    check(human.modes == ["url"], f"the human was asked with a URL elicitation ({human.modes}): {human.questions}")
    status, page = human.pages[0]
    check(status == 200 and "0.55 ETH" in page and "anyone who accepts" in page,
          f"the confirmation page names the amount and the counterparty (HTTP {status}): {human.questions[0]}")
    check(pressed(human, "decline"), f"the page took the decline: {human.presses}")
    check(await pact_count(client) == count, "nothing was sent when the human declined")

    if not modern:
        # Cancelled while the human is being asked: a yes pressed afterwards sends nothing. The
        # cancel waits until the human has the page (a fixed 0.5 s could end before the question on a
        # loaded machine); the human takes 1.5 s to read it.
        human.answers.append("late")
        async with anyio.create_task_group() as asking:
            async def cancel_once_asked():
                await until(lambda: human.late_page is not None, 60)
                asking.cancel_scope.cancel()

            asking.start_soon(cancel_once_asked)
            await client.call_tool("create-pact", terms)
            asking.cancel_scope.cancel()  # answered without being cancelled: the check below says so
        check(human.late_page is not None, "the slow human opened the page before the call was cancelled")
        await human.press(human.late_page, "confirm")
        await anyio.sleep(2.5)
        check(len(human.questions) == 2 and await pact_count(client) == count,
              f"a call cancelled while asking sent nothing on a late yes (the press: {human.presses[-1]})")

    human.answers.append("confirm")
    steps = []

    async def progress(value, total, message):
        steps.append(message)

    created = await client.call_tool("create-pact", terms, progress_callback=progress)
    check(pressed(human, "confirm"), f"the page took the confirmation: {human.presses}")
    check(not created.is_error, f"created after the human confirmed: {created.content[0].text}")
    check(created.structured_content["pactId"] == count, "the pact is the one watched")
    check(any(s and s.startswith("sent: transaction 0x") for s in steps) and any(s and s.startswith("mined") for s in steps),
          f"progress during the write: {steps}")


async def heard(news, pact):
    await until(lambda: pact in news.updated and news.list_changed > 0, 15)
    check(pact in news.updated and news.list_changed > 0,
          f"resources/updated for {pact} and resources/list_changed after the write "
          f"(updated: {news.updated}, list changes: {news.list_changed})")


async def read_back(client, pact, count):
    """The new pact through its template, in the listing, and its id completed."""
    read = await client.read_resource(pact)
    body = json.loads(read.contents[0].text)
    check(body["status"] == "NEGOTIATING" and body["payment"] == "0.5", f"{pact} read through its template")
    listed = [str(r.uri) for r in (await client.list_resources()).resources]
    check(pact in listed, "the new pact is among the listed resources")
    completion = await client.complete(
        types.ResourceTemplateReference(type="ref/resource", uri="pact://pacts/{id}"), {"name": "id", "value": count[0]}
    )
    check(count in completion.completion.values, f"completion offers {completion.completion.values}")


async def flow(client, modern, human, news):
    version = "2026-07-28" if modern else "2025-11-25"
    check(client.protocol_version == version, f"protocol {client.protocol_version}")
    resources = (await capabilities(client, modern)).resources
    check(resources and resources.subscribe and resources.list_changed, "resources: subscribe and listChanged")
    await offer(client)

    count = await pact_count(client)
    pact = f"pact://pacts/{count}"
    if modern:
        async with client.listen(resources_list_changed=True, resource_subscriptions=[pact]) as stream:
            honored = stream.honored
            check(pact in (honored.resource_subscriptions or []) and honored.resources_list_changed,
                  f"subscriptions/listen acknowledged {pact} and resource list changes")
            async with anyio.create_task_group() as background:
                background.start_soon(news.follow, stream)
                await create(client, modern, human, count)
                await heard(news, pact)
                background.cancel_scope.cancel()
    else:
        await client.subscribe_resource(pact)
        await create(client, modern, human, count)
        await heard(news, pact)
    await read_back(client, pact, count)


async def main():
    mode, transport, target = sys.argv[1], sys.argv[2], sys.argv[3]
    if transport == "stdio":
        env = {k: os.environ[k] for k in SERVER_SETTINGS if k in os.environ}
        server = StdioServerParameters(command=target, args=["mcp"], env=env)
    else:
        server = target
    modern = mode != "legacy"
    human, news = Human(), News(modern)
    async with Client(server, mode=mode, elicitation_callback=human, message_handler=news, read_timeout_seconds=60) as client:
        await flow(client, modern, human, news)
    print("flow complete", flush=True)


try:
    anyio.run(main)
except BaseExceptionGroup as group:
    # A failed check inside a task group arrives wrapped; its FAILED line is already printed.
    if group.subgroup(SystemExit) is None:
        raise
    sys.exit(1)
