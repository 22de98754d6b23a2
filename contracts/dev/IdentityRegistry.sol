// SPDX-License-Identifier: MIT
pragma solidity 0.8.30;

/// @dev ERC-721's hook on contracts that receive a token by `safeTransferFrom`.
interface IERC721Receiver {
    function onERC721Received(address operator, address from, uint256 tokenId, bytes calldata data)
        external
        returns (bytes4);
}

/// @title IdentityRegistry (dev and tests only)
/// @notice The ERC-8004 ("Trustless Agents") Identity Registry, written here from the ERC's text for
///         anvil: `agentpact dev` and the test harness deploy one beside a ReputationRegistry, as
///         stand-ins for the per-chain singletons their authors deploy (Base Sepolia's are listed in
///         `agentpact_contracts::erc8004`). Never deployed by `agentpact deploy`.
///
///         An agent is an ERC-721 token: its id (the agentId, assigned incrementally from 0) belongs
///         to its owner, who may approve one address for it or operators for all its agents, and
///         its URI (the agentURI) resolves to the agent's registration file (any scheme; a base64
///         `data:application/json` URI keeps the file on chain). Beside the URI an agent has
///         key/value metadata. The key "agentWallet" is reserved: the address paid for the agent,
///         set to the owner at registration, changed only with the new wallet's EIP-712 (or
///         ERC-1271) signature, and cleared by every transfer.
///
///         Every change of the wallet emits `MetadataSet(agentId, "agentWallet", "agentWallet",
///         value)` with `value` the 20 bytes of the new wallet, or empty when it is cleared: an
///         indexer follows the wallet from the events alone.
contract IdentityRegistry {
    /// @notice One entry of `register`'s metadata.
    struct MetadataEntry {
        string key;
        bytes value;
    }

    /// @notice The reserved metadata key of the address paid for an agent.
    string public constant AGENT_WALLET_KEY = "agentWallet";
    /// @notice The latest `deadline` a wallet signature may carry, in seconds after the block's time.
    uint256 public constant MAX_WALLET_DEADLINE_DELAY = 5 minutes;
    /// @notice The EIP-712 domain's name and version of wallet signatures.
    string public constant EIP712_NAME = "ERC8004IdentityRegistry";
    string public constant EIP712_VERSION = "1";
    /// @notice The EIP-712 type a new wallet signs to accept being an agent's wallet.
    bytes32 public constant AGENT_WALLET_SET_TYPEHASH =
        keccak256("AgentWalletSet(uint256 agentId,address newWallet,address owner,uint256 deadline)");
    bytes32 private constant DOMAIN_TYPEHASH =
        keccak256("EIP712Domain(string name,string version,uint256 chainId,address verifyingContract)");
    bytes32 private constant WALLET_KEY_HASH = keccak256("agentWallet");
    /// @dev secp256k1's order / 2: a larger `s` is the malleable twin of a valid signature.
    uint256 private constant HALF_ORDER = 0x7FFFFFFFFFFFFFFFFFFFFFFFFFFFFFFF5D576E7357A4501DDFE92F46681B20A0;

    /// @notice ERC-721 Metadata: the collection's name and symbol.
    string public constant name = "AgentIdentity";
    string public constant symbol = "AGENT";

    uint256 private nextId;
    mapping(uint256 => address) private owners;
    mapping(address => uint256) private balances;
    mapping(uint256 => address) private approvals;
    mapping(address => mapping(address => bool)) private operators;
    mapping(uint256 => string) private uris;
    mapping(uint256 => address) private wallets;
    mapping(uint256 => mapping(string => bytes)) private metadata;

    event Transfer(address indexed from, address indexed to, uint256 indexed tokenId);
    event Approval(address indexed owner, address indexed approved, uint256 indexed tokenId);
    event ApprovalForAll(address indexed owner, address indexed operator, bool approved);
    /// @notice Agent `agentId` was minted to `owner` with `agentURI` (empty: set later).
    event Registered(uint256 indexed agentId, string agentURI, address indexed owner);
    /// @notice `updatedBy` (the owner, the approved address or an operator) set the agent's URI.
    event URIUpdated(uint256 indexed agentId, string newURI, address indexed updatedBy);
    /// @notice The agent's metadata `key` is now `value` (for "agentWallet": 20 bytes, or empty
    ///         when cleared).
    event MetadataSet(uint256 indexed agentId, string indexed indexedKey, string key, bytes value);

    /// @notice No agent has id `agentId`.
    error AgentNotFound(uint256 agentId);
    /// @notice `caller` is neither the owner of `agentId`, nor approved for it, nor an operator of
    ///         its owner.
    error NotAuthorized(uint256 agentId, address caller);
    /// @notice Only the owner or one of its operators may approve an address for `agentId`.
    error NotOwnerNorOperator(uint256 agentId, address caller);
    /// @notice `from` does not own `agentId`; `owner` does.
    error NotTheOwner(uint256 agentId, address from, address owner);
    /// @notice Tokens cannot be sent to the zero address.
    error TransferToZeroAddress();
    /// @notice `to` is a contract that did not accept the token (`onERC721Received`).
    error UnsafeRecipient(address to);
    /// @notice The zero address owns nothing and its balance is not defined.
    error ZeroAddressQuery();
    /// @notice "agentWallet" is reserved: set it with `setAgentWallet`, clear it with
    ///         `unsetAgentWallet`.
    error ReservedMetadataKey(string key);
    /// @notice The zero address cannot be a wallet: clear the wallet with `unsetAgentWallet`.
    error ZeroWallet();
    /// @notice The wallet signature's `deadline` has passed (`nowTime` is the block's time).
    error WalletSignatureExpired(uint256 deadline, uint256 nowTime);
    /// @notice The wallet signature's `deadline` is later than `latest` (the block's time plus
    ///         `MAX_WALLET_DEADLINE_DELAY`).
    error WalletDeadlineTooFar(uint256 deadline, uint256 latest);
    /// @notice The signature is not `newWallet`'s (EIP-712 for an EOA, ERC-1271 for a contract) over
    ///         `AgentWalletSet(agentId, newWallet, owner, deadline)`.
    error InvalidWalletSignature(uint256 agentId, address newWallet);

    // ---------------------------------------------------------------- registration

    /// @notice Mints a new agent to the caller with no URI yet (set it with `setAgentURI`).
    function register() external returns (uint256 agentId) {
        return mint("", new MetadataEntry[](0));
    }

    /// @notice Mints a new agent to the caller whose registration file is at `agentURI`.
    function register(string calldata agentURI) external returns (uint256 agentId) {
        return mint(agentURI, new MetadataEntry[](0));
    }

    /// @notice Mints a new agent to the caller with `agentURI` and the metadata entries (never
    ///         "agentWallet").
    function register(string calldata agentURI, MetadataEntry[] calldata entries) external returns (uint256 agentId) {
        return mint(agentURI, entries);
    }

    /// @notice The agent's registration file URI (ERC-721 `tokenURI`).
    function tokenURI(uint256 agentId) external view returns (string memory) {
        ownerOf(agentId);
        return uris[agentId];
    }

    /// @notice Points the agent at a new registration file. By the owner, the approved address or
    ///         an operator.
    function setAgentURI(uint256 agentId, string calldata newURI) public {
        authorize(agentId);
        uris[agentId] = newURI;
        emit URIUpdated(agentId, newURI, msg.sender);
    }

    /// @notice `setAgentURI` under the ERC721URIStorage name that agent0-sdk's ABI lists.
    function setTokenURI(uint256 agentId, string calldata newURI) external {
        setAgentURI(agentId, newURI);
    }

    // ---------------------------------------------------------------- metadata

    /// @notice The agent's metadata under `key` (empty when never set; "agentWallet": the wallet's
    ///         20 bytes, empty when cleared).
    function getMetadata(uint256 agentId, string calldata key) external view returns (bytes memory) {
        ownerOf(agentId);
        if (keccak256(bytes(key)) == WALLET_KEY_HASH) {
            address wallet = wallets[agentId];
            return wallet == address(0) ? bytes("") : abi.encodePacked(wallet);
        }
        return metadata[agentId][key];
    }

    /// @notice Sets the agent's metadata `key` to `value`. By the owner, the approved address or an
    ///         operator; never "agentWallet".
    function setMetadata(uint256 agentId, string calldata key, bytes calldata value) external {
        authorize(agentId);
        setEntry(agentId, key, value);
    }

    // ---------------------------------------------------------------- agent wallet

    /// @notice The address paid for the agent (zero when cleared).
    function getAgentWallet(uint256 agentId) external view returns (address) {
        ownerOf(agentId);
        return wallets[agentId];
    }

    /// @notice Makes `newWallet` the agent's wallet. By the owner, the approved address or an
    ///         operator, with `newWallet`'s signature of `AgentWalletSet(agentId, newWallet, owner,
    ///         deadline)` under this contract's EIP-712 domain: an ECDSA signature by the key of
    ///         `newWallet`, or one its ERC-1271 `isValidSignature` accepts. `deadline` may be at most
    ///         `MAX_WALLET_DEADLINE_DELAY` ahead.
    function setAgentWallet(uint256 agentId, address newWallet, uint256 deadline, bytes calldata signature) external {
        address owner = authorize(agentId);
        if (newWallet == address(0)) revert ZeroWallet();
        if (block.timestamp > deadline) revert WalletSignatureExpired(deadline, block.timestamp);
        if (deadline > block.timestamp + MAX_WALLET_DEADLINE_DELAY) {
            revert WalletDeadlineTooFar(deadline, block.timestamp + MAX_WALLET_DEADLINE_DELAY);
        }
        bytes32 digest = keccak256(
            abi.encodePacked(
                "\x19\x01",
                DOMAIN_SEPARATOR(),
                keccak256(abi.encode(AGENT_WALLET_SET_TYPEHASH, agentId, newWallet, owner, deadline))
            )
        );
        if (!signedBy(newWallet, digest, signature)) revert InvalidWalletSignature(agentId, newWallet);
        wallets[agentId] = newWallet;
        emit MetadataSet(agentId, AGENT_WALLET_KEY, AGENT_WALLET_KEY, abi.encodePacked(newWallet));
    }

    /// @notice Clears the agent's wallet. By the owner, the approved address or an operator.
    function unsetAgentWallet(uint256 agentId) external {
        authorize(agentId);
        clearWallet(agentId);
    }

    /// @notice The EIP-712 domain separator of wallet signatures on this chain.
    function DOMAIN_SEPARATOR() public view returns (bytes32) {
        return keccak256(
            abi.encode(
                DOMAIN_TYPEHASH, keccak256(bytes(EIP712_NAME)), keccak256(bytes(EIP712_VERSION)), block.chainid, address(this)
            )
        );
    }

    /// @notice EIP-5267: the fields of the EIP-712 domain, for signers.
    function eip712Domain()
        external
        view
        returns (
            bytes1 fields,
            string memory name_,
            string memory version_,
            uint256 chainId,
            address verifyingContract,
            bytes32 salt,
            uint256[] memory extensions
        )
    {
        return (hex"0f", EIP712_NAME, EIP712_VERSION, block.chainid, address(this), bytes32(0), new uint256[](0));
    }

    // ---------------------------------------------------------------- ERC-721

    /// @notice ERC-165: ERC-165 itself, ERC-721 and ERC-721 Metadata.
    function supportsInterface(bytes4 interfaceId) external pure returns (bool) {
        return interfaceId == 0x01ffc9a7 || interfaceId == 0x80ac58cd || interfaceId == 0x5b5e139f;
    }

    function balanceOf(address owner) external view returns (uint256) {
        if (owner == address(0)) revert ZeroAddressQuery();
        return balances[owner];
    }

    function ownerOf(uint256 agentId) public view returns (address owner) {
        owner = owners[agentId];
        if (owner == address(0)) revert AgentNotFound(agentId);
    }

    function getApproved(uint256 agentId) external view returns (address) {
        ownerOf(agentId);
        return approvals[agentId];
    }

    function isApprovedForAll(address owner, address operator) external view returns (bool) {
        return operators[owner][operator];
    }

    /// @notice Approves `to` (zero: nobody) for `agentId`. By the owner or an operator of the owner.
    function approve(address to, uint256 agentId) public {
        address owner = ownerOf(agentId);
        if (msg.sender != owner && !operators[owner][msg.sender]) revert NotOwnerNorOperator(agentId, msg.sender);
        approvals[agentId] = to;
        emit Approval(owner, to, agentId);
    }

    /// @notice `approve` with its arguments in the order agent0-sdk's ABI lists them
    ///         (`approve(uint256,address)`), so a call through that ABI approves too.
    function approve(uint256 agentId, address to) external {
        approve(to, agentId);
    }

    function setApprovalForAll(address operator, bool approved) external {
        operators[msg.sender][operator] = approved;
        emit ApprovalForAll(msg.sender, operator, approved);
    }

    /// @notice Moves `agentId` from `from` to `to`, clearing its approval and its wallet (the new
    ///         owner sets a wallet again with `setAgentWallet`).
    function transferFrom(address from, address to, uint256 agentId) public {
        address owner = ownerOf(agentId);
        if (owner != from) revert NotTheOwner(agentId, from, owner);
        if (to == address(0)) revert TransferToZeroAddress();
        if (msg.sender != owner && !operators[owner][msg.sender] && approvals[agentId] != msg.sender) {
            revert NotAuthorized(agentId, msg.sender);
        }
        delete approvals[agentId];
        balances[from] -= 1;
        balances[to] += 1;
        owners[agentId] = to;
        emit Transfer(from, to, agentId);
        clearWallet(agentId);
    }

    function safeTransferFrom(address from, address to, uint256 agentId) external {
        safeTransferFrom(from, to, agentId, "");
    }

    /// @notice `transferFrom`, then, when `to` is a contract, its `onERC721Received` must accept.
    function safeTransferFrom(address from, address to, uint256 agentId, bytes memory data) public {
        transferFrom(from, to, agentId);
        if (to.code.length > 0) {
            try IERC721Receiver(to).onERC721Received(msg.sender, from, agentId, data) returns (bytes4 answer) {
                if (answer != IERC721Receiver.onERC721Received.selector) revert UnsafeRecipient(to);
            } catch {
                revert UnsafeRecipient(to);
            }
        }
    }

    // ---------------------------------------------------------------- internals

    function mint(string memory agentURI, MetadataEntry[] memory entries) private returns (uint256 agentId) {
        agentId = nextId++;
        owners[agentId] = msg.sender;
        balances[msg.sender] += 1;
        uris[agentId] = agentURI;
        wallets[agentId] = msg.sender;
        emit Transfer(address(0), msg.sender, agentId);
        emit MetadataSet(agentId, AGENT_WALLET_KEY, AGENT_WALLET_KEY, abi.encodePacked(msg.sender));
        for (uint256 i = 0; i < entries.length; i++) {
            setEntry(agentId, entries[i].key, entries[i].value);
        }
        emit Registered(agentId, agentURI, msg.sender);
    }

    function setEntry(uint256 agentId, string memory key, bytes memory value) private {
        if (keccak256(bytes(key)) == WALLET_KEY_HASH) revert ReservedMetadataKey(key);
        metadata[agentId][key] = value;
        emit MetadataSet(agentId, key, key, value);
    }

    function clearWallet(uint256 agentId) private {
        delete wallets[agentId];
        emit MetadataSet(agentId, AGENT_WALLET_KEY, AGENT_WALLET_KEY, "");
    }

    /// @dev Reverts unless the caller owns `agentId`, is approved for it or operates for its owner;
    ///      returns the owner.
    function authorize(uint256 agentId) private view returns (address owner) {
        owner = ownerOf(agentId);
        if (msg.sender != owner && !operators[owner][msg.sender] && approvals[agentId] != msg.sender) {
            revert NotAuthorized(agentId, msg.sender);
        }
    }

    /// @dev Whether `signature` is `signer`'s over `digest`: a 65-byte ECDSA signature (low `s`)
    ///      recovering to `signer`, or, for a contract, one its ERC-1271 `isValidSignature` accepts.
    function signedBy(address signer, bytes32 digest, bytes calldata signature) private view returns (bool) {
        if (signature.length == 65) {
            bytes32 r = bytes32(signature[0:32]);
            bytes32 s = bytes32(signature[32:64]);
            uint8 v = uint8(signature[64]);
            if (uint256(s) <= HALF_ORDER && (v == 27 || v == 28)) {
                address recovered = ecrecover(digest, v, r, s);
                if (recovered != address(0) && recovered == signer) return true;
            }
        }
        if (signer.code.length == 0) return false;
        (bool ok, bytes memory answer) =
            signer.staticcall(abi.encodeWithSelector(0x1626ba7e, digest, signature));
        return ok && answer.length == 32 && abi.decode(answer, (bytes32)) == bytes32(bytes4(0x1626ba7e));
    }
}
