"""ERC-8004's own Python SDK (agent0-sdk, pinned by scripts/install-tools) against our registries
(contracts/dev), so their conformance is judged by a client nobody here wrote.

    erc8004_sdk.py abi     prints the SDK's ABI of the Identity and Reputation registries as JSON:
                           {"identity"|"reputation": [{"kind", "signature", "indexed",
                           "outputs", "stateMutability"}]} (tests/tests/erc8004_registries.rs
                           compares it with our bindings)
    erc8004_sdk.py flow    drives the registries at IDENTITY and REPUTATION on RPC_URL (chain
                           CHAIN_ID) with the keys OWNER_KEY, CLIENT_A_KEY, CLIENT_B_KEY, WALLET_KEY,
                           NEW_OWNER_KEY; the registration file lists MCP_URL
    erc8004_sdk.py grounded
                           reads the feedback an AgentPact buyer gave through `submit_feedback`
                           (tests/python/mcp_hire.py): HIRED is its JSON ({"pactId", "agentId",
                           "seeker", "designer"}); checks the value and tags, the summary, and the
                           feedback file's payment proof against the chain (AGENT_PACT_ADDRESS's
                           Payout to the agent's wallet); ends with "sdk grounded complete"

The flow uses only what the SDK reads from the chain itself (no subgraph, no IPFS): `getAgent`,
`searchAgents` and the summaries without a client list need a subgraph or, for
`getReputationSummary(agentId)`, a registry that accepts an empty client list, which the ERC forbids
(checked below as refused). Prints one line per check; exits non-zero at the first that fails; ends
with "sdk flow complete".
"""

import base64
import json
import os
import sys

from eth_account import Account
from web3 import Web3

from agent0_sdk import SDK
from agent0_sdk.core import contracts
from agent0_sdk.core.data_uri import decode_erc8004_json_data_uri, is_erc8004_json_data_uri


def check(condition, what):
    if not condition:
        print(f"FAILED: {what}", flush=True)
        raise SystemExit(1)
    print(f"ok: {what}", flush=True)


def selector(signature):
    """The 4-byte selector of a custom error, as lowercase hex without 0x."""
    return Web3.keccak(text=signature)[:4].hex().removeprefix("0x")


def refused(call, error, what):
    """`call` must raise, with our registry's custom error `error` in what the SDK says."""
    try:
        call()
    except Exception as e:  # the SDK wraps web3's ContractCustomError in a ValueError
        said = str(e).lower()
        check(selector(error) in said, f"{what}: refused with {error} (said {said[:160]!r})")
        return
    check(False, f"{what}: refused with {error} (it was not refused)")


def abi():
    def type_of(param):
        if param["type"].startswith("tuple"):
            return "(" + ",".join(type_of(c) for c in param["components"]) + ")" + param["type"][len("tuple"):]
        return param["type"]

    def entries(items):
        out = []
        for e in items:
            if e["type"] not in ("function", "event"):
                continue
            out.append({
                "kind": e["type"],
                "signature": f"{e['name']}({','.join(type_of(p) for p in e['inputs'])})",
                "indexed": [bool(p.get("indexed")) for p in e["inputs"]] if e["type"] == "event" else [],
                "outputs": [type_of(p) for p in e.get("outputs", [])],
                "stateMutability": e.get("stateMutability", ""),
            })
        return out

    print(json.dumps({
        "identity": entries(contracts.IDENTITY_REGISTRY_ABI),
        "reputation": entries(contracts.REPUTATION_REGISTRY_ABI),
    }))


def overrides():
    """The chain id, and the SDK's registry overrides for it (our registries on anvil)."""
    chain = int(os.environ["CHAIN_ID"])
    return chain, {chain: {
        "IDENTITY": Web3.to_checksum_address(os.environ["IDENTITY"]),
        "REPUTATION": Web3.to_checksum_address(os.environ["REPUTATION"]),
    }}


def flow():
    rpc = os.environ["RPC_URL"]
    chain, registries = overrides()
    keys = {name: os.environ[f"{name.upper()}_KEY"] for name in ["owner", "client_a", "client_b", "wallet", "new_owner"]}
    addr = {name: Account.from_key(key).address for name, key in keys.items()}

    def sdk(signer=None):
        return SDK(chainId=chain, rpcUrl=rpc, signer=signer, registryOverrides=registries)

    owner, reader = sdk(keys["owner"]), sdk()
    client_a, client_b = sdk(keys["client_a"]), sdk(keys["client_b"])
    mcp_url = os.environ["MCP_URL"]

    # Register with the whole registration file on chain, as a base64 data: URI.
    agent = owner.createAgent(name="DesignBot Pro", description="Logo design for agents, paid per job.")
    agent.setMCP(mcp_url, auto_fetch=False)
    registered = agent.registerOnChain().wait_mined(timeout=60).result
    agent_id = registered.agentId
    token = int(agent_id.split(":")[-1])
    check(agent_id == f"{chain}:{token}", f"registered as {agent_id}, the id read from the Transfer event")
    uri = owner.identity_registry.functions.tokenURI(token).call()
    check(uri.startswith("data:application/json;base64,"), "the agentURI on chain is the registration file as a data: URI")

    # Read it back from the chain alone.
    loaded = reader.loadAgent(agent_id)
    check(loaded.name == "DesignBot Pro", f"loadAgent: name {loaded.name!r}")
    check(loaded.mcpEndpoint == mcp_url, f"loadAgent: MCP endpoint {loaded.mcpEndpoint!r}")
    check([a.lower() for a in loaded.owners] == [addr["owner"].lower()], f"loadAgent: owners {loaded.owners}")
    check(loaded.walletAddress == addr["owner"], f"loadAgent: the wallet is the owner at registration ({loaded.walletAddress})")
    check(reader.getAgentOwner(agent_id).lower() == addr["owner"].lower(), "getAgentOwner")

    # A new registration file: the SDK updates the URI in place (setAgentURI).
    mine = owner.loadAgent(agent_id)
    mine.setMCP(mcp_url + "/v2", auto_fetch=False)
    mine.registerOnChain().wait_mined(timeout=60)
    check(reader.loadAgent(agent_id).mcpEndpoint == mcp_url + "/v2", "registerOnChain again moved the MCP endpoint")

    # The wallet: set with the new wallet's EIP-712 signature as the SDK builds it, then cleared.
    mine.setWallet(addr["wallet"], new_wallet_signer=keys["wallet"]).wait_mined(timeout=60)
    check(mine.getWallet() == addr["wallet"], f"setWallet with the wallet's signature: {mine.getWallet()}")
    check(reader.loadAgent(agent_id).walletAddress == addr["wallet"], "loadAgent sees the new wallet")
    stranger_signed = Account.from_key(keys["client_a"]).sign_typed_data(
        full_message=owner.web3_client.build_agent_wallet_set_typed_data(
            agent_id=token, new_wallet=addr["new_owner"], owner=addr["owner"],
            deadline=owner.web3_client.w3.eth.get_block("latest")["timestamp"] + 60,
            verifying_contract=registries[chain]["IDENTITY"], chain_id=chain,
        )
    ).signature
    refused(lambda: mine.setWallet(addr["new_owner"], signature=stranger_signed),
            "InvalidWalletSignature(uint256,address)", "setWallet signed by another key than the wallet's")
    check(mine.getWallet() == addr["wallet"], "the refused setWallet left the wallet as it was")
    mine.unsetWallet().wait_mined(timeout=60)
    check(mine.getWallet() is None, "unsetWallet cleared it")
    mine.setWallet(addr["wallet"], new_wallet_signer=keys["wallet"]).wait_mined(timeout=60)

    # Feedback from two clients, one tagged with a pact.
    a = client_a.giveFeedback(agent_id, 80, tag1="pact:7", tag2="quality", endpoint=mcp_url).wait_mined(timeout=60).result
    check(a.value == 80 and a.tags == ["pact:7", "quality"], f"client A rated 80 tagged pact:7 ({a.value}, {a.tags})")
    b = client_b.giveFeedback(agent_id, "95.5", tag1="starred").wait_mined(timeout=60).result
    check(b.value == 95.5, f"client B rated 95.5 ({b.value})")
    read_a = reader.getFeedback(agent_id, addr["client_a"], 1)
    check((read_a.value, read_a.tags, read_a.isRevoked) == (80, ["pact:7", "quality"], False),
          f"getFeedback reads A's first feedback back ({read_a.value}, {read_a.tags}, {read_a.isRevoked})")
    read_b = reader.getFeedback(agent_id, addr["client_b"], 1)
    check(read_b.value == 95.5, "getFeedback: B's feedback is its first (index 1 per client)")
    clients = reader.reputation_registry.functions.getClients(token).call()
    check(clients == [addr["client_a"], addr["client_b"]], f"getClients: {clients}")

    summary = reader.feedback_manager.getReputationSummary(agent_id, clientAddresses=clients)
    check((summary["count"], summary["averageValue"]) == (2, 87.75), f"summary of both: {summary['count']}, {summary['averageValue']}")
    tagged = reader.feedback_manager.getReputationSummary(agent_id, clientAddresses=clients, tag1="pact:7")
    check((tagged["count"], tagged["averageValue"]) == (1, 80), f"summary of pact:7: {tagged['count']}, {tagged['averageValue']}")
    refused(lambda: reader.getReputationSummary(agent_id), "ClientAddressesRequired()",
            "getReputationSummary without clients (the ERC makes clientAddresses mandatory)")
    found = reader.searchFeedback(agentId=agent_id)
    check(sorted(f.value for f in found) == [80, 95.5], f"searchFeedback (readAllFeedback): {[f.value for f in found]}")

    # Revoking one changes the summary; the revoked feedback stays readable.
    client_b.revokeFeedback(agent_id, 1).wait_mined(timeout=60)
    check(reader.getFeedback(agent_id, addr["client_b"], 1).isRevoked, "B's feedback reads back revoked")
    summary = reader.feedback_manager.getReputationSummary(agent_id, clientAddresses=clients)
    check((summary["count"], summary["averageValue"]) == (1, 80), f"summary after the revocation: {summary['count']}, {summary['averageValue']}")
    check(len(reader.searchFeedback(agentId=agent_id)) == 1, "searchFeedback leaves the revoked one out")
    check(len(reader.searchFeedback(agentId=agent_id, include_revoked=True)) == 2, "... and shows it when asked")
    refused(lambda: client_a.revokeFeedback(agent_id, 2), "FeedbackNotFound(uint256,address,uint64)",
            "A revoking a feedback it never gave")
    refused(lambda: client_b.revokeFeedback(agent_id, 1), "AlreadyRevoked(uint256,address,uint64)",
            "B revoking its feedback twice")

    # The agent's side may not rate it.
    refused(lambda: owner.giveFeedback(agent_id, 100), "SelfFeedback(uint256,address)", "the owner rating its own agent")
    # The SDK rounds every value to at most 18 decimals, so 19 goes through its web3 client directly.
    refused(lambda: client_a.web3_client.transact_contract(
        client_a.reputation_registry, "giveFeedback", token, 1, 19, "", "", "", "", b"\x00" * 32),
        "ValueDecimalsTooLarge(uint8)", "a value with 19 decimals")

    # A response, counted.
    owner.appendResponse(agent_id, addr["client_a"], 1, {"text": "thanks"}).wait_mined(timeout=60)
    responses = reader.reputation_registry.functions.getResponseCount(token, addr["client_a"], 1, []).call()
    check(responses == 1, f"appendResponse counted: {responses}")

    # A transfer clears the wallet; the new owner sees none.
    mine.transfer(addr["new_owner"]).wait_mined(timeout=60)
    moved = reader.loadAgent(agent_id)
    check([a.lower() for a in moved.owners] == [addr["new_owner"].lower()], f"transferred to {moved.owners}")
    check(moved.walletAddress is None and mine.getWallet() is None, "the transfer cleared the wallet")

    print("sdk flow complete", flush=True)


def grounded():
    chain, registries = overrides()
    reader = SDK(chainId=chain, rpcUrl=os.environ["RPC_URL"], registryOverrides=registries)
    hired = json.loads(os.environ["HIRED"])
    agent_id, token, pact = f"{chain}:{hired['agentId']}", int(hired["agentId"]), int(hired["pactId"])
    seeker, designer = Web3.to_checksum_address(hired["seeker"]), Web3.to_checksum_address(hired["designer"])

    agent = reader.loadAgent(agent_id)
    check((agent.name, agent.walletAddress) == ("DesignBot Pro", designer),
          f"loadAgent: {agent.name!r}, wallet {agent.walletAddress} (the designer's)")
    check(agent.mcpEndpoint == "https://designbot.example/mcp", f"its registration file lists its MCP endpoint {agent.mcpEndpoint}")

    feedback = reader.getFeedback(agent_id, seeker, 1)
    check((feedback.value, feedback.tags, feedback.isRevoked) == (100, [f"pact:{pact}", "agentpact"], False),
          f"getFeedback: the seeker's five stars as {feedback.value}, tagged {feedback.tags}")
    summary = reader.feedback_manager.getReputationSummary(agent_id, clientAddresses=[seeker])
    check((summary["count"], summary["averageValue"]) == (1, 100), f"summary: {summary['count']}, {summary['averageValue']}")
    tagged = reader.searchFeedback(agentId=agent_id)
    check([f.tags[0] for f in tagged] == [f"pact:{pact}"], f"searchFeedback: {[f.tags for f in tagged]}")

    # The feedback file, from the event the SDK's registry contract decodes.
    logs = reader.reputation_registry.events.NewFeedback.get_logs(from_block=0, argument_filters={"agentId": token})
    check(len(logs) == 1, f"one NewFeedback for agent #{token}")
    uri, digest = logs[0]["args"]["feedbackURI"], logs[0]["args"]["feedbackHash"]
    check(is_erc8004_json_data_uri(uri), "its feedbackURI is a JSON data: URI the SDK reads")
    file = decode_erc8004_json_data_uri(uri)
    raw = base64.b64decode(uri.split(",", 1)[1])
    check(Web3.keccak(raw) == digest, "feedbackHash is the keccak256 of the file")
    paid = file["proofOfPayment"]
    check((Web3.to_checksum_address(paid["fromAddress"]), Web3.to_checksum_address(paid["toAddress"]), paid["chainId"])
          == (seeker, designer, str(chain)), f"proofOfPayment: the seeker paid the designer on chain {paid['chainId']}")
    proof = file["agentPact"]
    check((proof["pactId"], proof["status"], Web3.to_checksum_address(proof["contract"]))
          == (str(pact), "COMPLETED", Web3.to_checksum_address(os.environ["AGENT_PACT_ADDRESS"])),
          f"agentPact: pact #{proof['pactId']} {proof['status']} at {proof['contract']}")

    # The proof holds on chain: the payout transaction's Payout credited the designer for the pact.
    w3 = reader.web3_client.w3
    receipt = w3.eth.get_transaction_receipt(paid["txHash"])
    payout = Web3.keccak(text="Payout(uint256,address,address,uint256)")
    releases = [log for log in receipt["logs"]
                if log["address"] == Web3.to_checksum_address(os.environ["AGENT_PACT_ADDRESS"])
                and log["topics"][0] == payout and int.from_bytes(log["topics"][1], "big") == pact
                and Web3.to_checksum_address(log["topics"][2][-20:]) == designer]
    check(len(releases) == 1 and int.from_bytes(releases[0]["data"][32:64], "big") > 0,
          f"transaction {paid['txHash']} released pact #{pact}'s payment to the designer")
    print("sdk grounded complete", flush=True)


if __name__ == "__main__":
    {"abi": abi, "flow": flow, "grounded": grounded}[sys.argv[1]]()
