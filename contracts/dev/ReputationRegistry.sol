// SPDX-License-Identifier: MIT
pragma solidity 0.8.30;

/// @dev What the Reputation Registry asks of the Identity Registry.
interface IIdentityRegistryOwners {
    function ownerOf(uint256 agentId) external view returns (address);
    function getApproved(uint256 agentId) external view returns (address);
    function isApprovedForAll(address owner, address operator) external view returns (bool);
}

/// @title ReputationRegistry (dev and tests only)
/// @notice The ERC-8004 ("Trustless Agents") Reputation Registry, written here from the ERC's text
///         for anvil: `agentpact dev` and the test harness deploy one bound to their
///         IdentityRegistry, as stand-ins for the per-chain singletons. Never deployed by
///         `agentpact deploy`.
///
///         Any address (a client) may rate any registered agent except the agent's owner and the
///         addresses the owner approved for it: a signed fixed-point `value` with `valueDecimals`
///         (0-18) decimals, two optional tags, and optional endpoint, file URI and file hash (emitted,
///         not stored). Each client's feedback on an agent is numbered from 1; the client may revoke
///         it, and anyone may append a response to it.
contract ReputationRegistry {
    struct Feedback {
        int128 value;
        uint8 valueDecimals;
        bool isRevoked;
        string tag1;
        string tag2;
    }

    /// @notice The most decimals a value may have.
    uint8 public constant MAX_VALUE_DECIMALS = 18;
    /// @notice The largest magnitude of a value, whatever its decimals.
    int128 public constant MAX_ABS_VALUE = 1e38;

    address private immutable identityRegistry;

    mapping(uint256 => mapping(address => mapping(uint64 => Feedback))) private feedback;
    mapping(uint256 => mapping(address => uint64)) private lastIndex;
    mapping(uint256 => address[]) private clients;
    mapping(uint256 => mapping(address => mapping(uint64 => uint64))) private responseTotal;
    mapping(uint256 => mapping(address => mapping(uint64 => mapping(address => uint64)))) private responsesBy;

    /// @notice `clientAddress` rated agent `agentId` (its `feedbackIndex`-th feedback on it).
    event NewFeedback(
        uint256 indexed agentId,
        address indexed clientAddress,
        uint64 feedbackIndex,
        int128 value,
        uint8 valueDecimals,
        string indexed indexedTag1,
        string tag1,
        string tag2,
        string endpoint,
        string feedbackURI,
        bytes32 feedbackHash
    );
    /// @notice `clientAddress` revoked its feedback `feedbackIndex` on `agentId`.
    event FeedbackRevoked(uint256 indexed agentId, address indexed clientAddress, uint64 indexed feedbackIndex);
    /// @notice `responder` answered a feedback. As the ERC's text declares it (three indexed
    ///         parameters and `responseHash`); agent0-sdk 1.7.1's ABI lists four indexed parameters
    ///         and no hash, which no Solidity event can declare (an event has at most three indexed
    ///         parameters besides its signature).
    event ResponseAppended(
        uint256 indexed agentId,
        address indexed clientAddress,
        uint64 feedbackIndex,
        address indexed responder,
        string responseURI,
        bytes32 responseHash
    );

    /// @notice The identity registry is not a contract.
    error NotAContract(address identityRegistry);
    /// @notice No agent has id `agentId` in the identity registry.
    error AgentNotFound(uint256 agentId);
    /// @notice `client` owns agent `agentId` or is approved for it: an agent's side may not rate it.
    error SelfFeedback(uint256 agentId, address client);
    /// @notice `valueDecimals` is above `MAX_VALUE_DECIMALS` (18).
    error ValueDecimalsTooLarge(uint8 valueDecimals);
    /// @notice `value`'s magnitude is above `MAX_ABS_VALUE` (1e38).
    error ValueOutOfRange(int128 value);
    /// @notice `clientAddress` gave no feedback `feedbackIndex` on `agentId`.
    error FeedbackNotFound(uint256 agentId, address clientAddress, uint64 feedbackIndex);
    /// @notice The feedback was already revoked.
    error AlreadyRevoked(uint256 agentId, address clientAddress, uint64 feedbackIndex);
    /// @notice `getSummary` needs the clients whose feedback it sums (the ERC: without that filter
    ///         a summary is open to Sybil feedback).
    error ClientAddressesRequired();

    constructor(address identityRegistry_) {
        if (identityRegistry_.code.length == 0) revert NotAContract(identityRegistry_);
        identityRegistry = identityRegistry_;
    }

    /// @notice The Identity Registry whose agents are rated here.
    function getIdentityRegistry() external view returns (address) {
        return identityRegistry;
    }

    // ---------------------------------------------------------------- writes

    /// @notice The caller rates agent `agentId`. Refused to the agent's owner, to its operators and
    ///         to the address approved for it.
    function giveFeedback(
        uint256 agentId,
        int128 value,
        uint8 valueDecimals,
        string calldata tag1,
        string calldata tag2,
        string calldata endpoint,
        string calldata feedbackURI,
        bytes32 feedbackHash
    ) external {
        if (valueDecimals > MAX_VALUE_DECIMALS) revert ValueDecimalsTooLarge(valueDecimals);
        if (value > MAX_ABS_VALUE || value < -MAX_ABS_VALUE) revert ValueOutOfRange(value);
        IIdentityRegistryOwners identity = IIdentityRegistryOwners(identityRegistry);
        address owner;
        try identity.ownerOf(agentId) returns (address o) {
            owner = o;
        } catch {
            revert AgentNotFound(agentId);
        }
        if (
            msg.sender == owner || identity.isApprovedForAll(owner, msg.sender)
                || identity.getApproved(agentId) == msg.sender
        ) revert SelfFeedback(agentId, msg.sender);

        uint64 index = lastIndex[agentId][msg.sender] + 1;
        if (index == 1) clients[agentId].push(msg.sender);
        lastIndex[agentId][msg.sender] = index;
        feedback[agentId][msg.sender][index] = Feedback(value, valueDecimals, false, tag1, tag2);
        emit NewFeedback(
            agentId, msg.sender, index, value, valueDecimals, tag1, tag1, tag2, endpoint, feedbackURI, feedbackHash
        );
    }

    /// @notice The caller revokes its feedback `feedbackIndex` on `agentId`: it stays readable,
    ///         marked revoked, and leaves the summaries.
    function revokeFeedback(uint256 agentId, uint64 feedbackIndex) external {
        Feedback storage f = stored(agentId, msg.sender, feedbackIndex);
        if (f.isRevoked) revert AlreadyRevoked(agentId, msg.sender, feedbackIndex);
        f.isRevoked = true;
        emit FeedbackRevoked(agentId, msg.sender, feedbackIndex);
    }

    /// @notice Anyone answers a feedback (the agent showing a refund, a service tagging spam).
    function appendResponse(
        uint256 agentId,
        address clientAddress,
        uint64 feedbackIndex,
        string calldata responseURI,
        bytes32 responseHash
    ) external {
        stored(agentId, clientAddress, feedbackIndex);
        responseTotal[agentId][clientAddress][feedbackIndex] += 1;
        responsesBy[agentId][clientAddress][feedbackIndex][msg.sender] += 1;
        emit ResponseAppended(agentId, clientAddress, feedbackIndex, msg.sender, responseURI, responseHash);
    }

    // ---------------------------------------------------------------- reads

    /// @notice The number of feedbacks `clientAddress` gave `agentId` (its latest index; 0: none).
    function getLastIndex(uint256 agentId, address clientAddress) external view returns (uint64) {
        return lastIndex[agentId][clientAddress];
    }

    /// @notice Every address that rated `agentId`, in the order of their first feedback.
    function getClients(uint256 agentId) external view returns (address[] memory) {
        return clients[agentId];
    }

    /// @notice One feedback, revoked or not.
    function readFeedback(uint256 agentId, address clientAddress, uint64 feedbackIndex)
        external
        view
        returns (int128 value, uint8 valueDecimals, string memory tag1, string memory tag2, bool isRevoked)
    {
        Feedback storage f = stored(agentId, clientAddress, feedbackIndex);
        return (f.value, f.valueDecimals, f.tag1, f.tag2, f.isRevoked);
    }

    /// @notice The count and the average of the feedback `clientAddresses` (at least one) gave
    ///         `agentId` and did not revoke, filtered by `tag1` and `tag2` (empty: any). The average
    ///         is exact to 18 decimals, truncated toward zero, and written with as few decimals as
    ///         hold it (80 and 95 average to 875 with 1 decimal); (0, 0, 0) when nothing matches.
    function getSummary(uint256 agentId, address[] calldata clientAddresses, string calldata tag1, string calldata tag2)
        external
        view
        returns (uint64 count, int128 summaryValue, uint8 summaryValueDecimals)
    {
        if (clientAddresses.length == 0) revert ClientAddressesRequired();
        int256 sum;
        for (uint256 c = 0; c < clientAddresses.length; c++) {
            address client = clientAddresses[c];
            uint64 last = lastIndex[agentId][client];
            for (uint64 i = 1; i <= last; i++) {
                Feedback storage f = feedback[agentId][client][i];
                if (f.isRevoked || !tagged(f, tag1, tag2)) continue;
                sum += int256(f.value) * int256(10 ** (MAX_VALUE_DECIMALS - f.valueDecimals));
                count++;
            }
        }
        if (count == 0) return (0, 0, 0);
        int256 average = sum / int256(uint256(count));
        uint8 decimals = MAX_VALUE_DECIMALS;
        while (decimals > 0 && (average % 10 == 0 || average > type(int128).max || average < type(int128).min)) {
            average /= 10;
            decimals--;
        }
        return (count, int128(average), decimals);
    }

    /// @notice Every feedback on `agentId` by `clientAddresses` (empty: every client), filtered by
    ///         `tag1` and `tag2` (empty: any), revoked ones only when `includeRevoked`; by client,
    ///         then index.
    function readAllFeedback(
        uint256 agentId,
        address[] calldata clientAddresses,
        string calldata tag1,
        string calldata tag2,
        bool includeRevoked
    )
        external
        view
        returns (
            address[] memory clientList,
            uint64[] memory feedbackIndexes,
            int128[] memory values,
            uint8[] memory valueDecimals,
            string[] memory tag1s,
            string[] memory tag2s,
            bool[] memory revokedStatuses
        )
    {
        address[] memory from = clientAddresses;
        if (from.length == 0) from = clients[agentId];
        uint256 n;
        for (uint256 pass = 0; pass < 2; pass++) {
            if (pass == 1) {
                clientList = new address[](n);
                feedbackIndexes = new uint64[](n);
                values = new int128[](n);
                valueDecimals = new uint8[](n);
                tag1s = new string[](n);
                tag2s = new string[](n);
                revokedStatuses = new bool[](n);
                n = 0;
            }
            for (uint256 c = 0; c < from.length; c++) {
                uint64 last = lastIndex[agentId][from[c]];
                for (uint64 i = 1; i <= last; i++) {
                    Feedback storage f = feedback[agentId][from[c]][i];
                    if ((f.isRevoked && !includeRevoked) || !tagged(f, tag1, tag2)) continue;
                    if (pass == 1) {
                        clientList[n] = from[c];
                        feedbackIndexes[n] = i;
                        values[n] = f.value;
                        valueDecimals[n] = f.valueDecimals;
                        tag1s[n] = f.tag1;
                        tag2s[n] = f.tag2;
                        revokedStatuses[n] = f.isRevoked;
                    }
                    n++;
                }
            }
        }
    }

    /// @notice The responses appended to feedback on `agentId`: to `clientAddress`'s (zero: every
    ///         client's) feedback `feedbackIndex` (0: every index), by `responders` (empty: anyone).
    function getResponseCount(uint256 agentId, address clientAddress, uint64 feedbackIndex, address[] calldata responders)
        external
        view
        returns (uint64 count)
    {
        address[] memory whose;
        if (clientAddress == address(0)) {
            whose = clients[agentId];
        } else {
            whose = new address[](1);
            whose[0] = clientAddress;
        }
        for (uint256 c = 0; c < whose.length; c++) {
            uint64 first = feedbackIndex == 0 ? 1 : feedbackIndex;
            uint64 last = feedbackIndex == 0 ? lastIndex[agentId][whose[c]] : feedbackIndex;
            for (uint64 i = first; i <= last; i++) {
                if (responders.length == 0) {
                    count += responseTotal[agentId][whose[c]][i];
                } else {
                    for (uint256 r = 0; r < responders.length; r++) {
                        count += responsesBy[agentId][whose[c]][i][responders[r]];
                    }
                }
            }
        }
    }

    // ---------------------------------------------------------------- internals

    function stored(uint256 agentId, address clientAddress, uint64 feedbackIndex)
        private
        view
        returns (Feedback storage)
    {
        if (feedbackIndex == 0 || feedbackIndex > lastIndex[agentId][clientAddress]) {
            revert FeedbackNotFound(agentId, clientAddress, feedbackIndex);
        }
        return feedback[agentId][clientAddress][feedbackIndex];
    }

    function tagged(Feedback storage f, string calldata tag1, string calldata tag2) private view returns (bool) {
        return (bytes(tag1).length == 0 || keccak256(bytes(f.tag1)) == keccak256(bytes(tag1)))
            && (bytes(tag2).length == 0 || keccak256(bytes(f.tag2)) == keccak256(bytes(tag2)));
    }
}
