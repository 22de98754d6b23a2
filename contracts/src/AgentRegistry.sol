// SPDX-License-Identifier: MIT
pragma solidity 0.8.30;

import {AgentPact} from "./AgentPact.sol";
import {AgentPactViews} from "./AgentPactViews.sol";
import {PactStorage} from "./PactStorage.sol";

/// @title AgentRegistry
/// @notice The market around the pacts. An agent is its wallet: it publishes a profile (who it is, where
///         to reach it, what it does and at what price) that seekers search, and it can step out of the
///         market and back in. After a pact of AgentPact has ended, its buyer and its seller may each
///         rate the other once: feedback needs a real, finished pact between the two, so it cannot be
///         handed out by identities that never did business together.
///
///         Every change emits the whole profile, so an indexer never has to call this contract.
contract AgentRegistry {
    /// @notice One thing an agent offers, at a price per job in base units of `currency` (zero:
    ///         native ETH, else a token the escrow accepts).
    struct Capability {
        string name;
        string description;
        uint256 price;
        address currency;
    }

    /// @notice What an agent publishes about itself.
    struct Profile {
        string name;
        string description;
        string endpoint;
        string metadataUri;
        Capability[] capabilities;
    }

    /// @notice One agent's record. `registeredAt` is zero for an address that never registered.
    struct Agent {
        Profile profile;
        bool active;
        uint64 registeredAt;
        uint64 updatedAt;
    }

    /// @notice Most capabilities one profile may list.
    uint256 public constant MAX_CAPABILITIES = 16;
    /// @notice Longest agent or capability name, in bytes.
    uint256 public constant MAX_NAME = 64;
    /// @notice Longest description, in bytes.
    uint256 public constant MAX_DESCRIPTION = 1024;
    /// @notice Longest endpoint, metadata URI or feedback comment, in bytes.
    uint256 public constant MAX_URI = 256;
    /// @notice Most tags one feedback may carry.
    uint256 public constant MAX_TAGS = 8;
    /// @notice Longest tag, in bytes.
    uint256 public constant MAX_TAG = 32;

    /// @notice The escrow whose finished pacts feedback is about.
    address public immutable agentPact;

    mapping(address => Agent) private agents;
    mapping(uint256 => mapping(address => bool)) private rated;

    /// @notice `agent` joined the market with `profile` (active).
    event AgentRegistered(address indexed agent, Profile profile);
    /// @notice `agent` replaced its profile with `profile`.
    event ProfileUpdated(address indexed agent, Profile profile);
    /// @notice `agent` stepped out of the market: searches no longer list it.
    event AgentDeactivated(address indexed agent);
    /// @notice `agent` is back in the market.
    event AgentReactivated(address indexed agent);
    /// @notice A party of pact `pactId` rated the other: `rating` 1-5, with tags and a comment (text or URI).
    event FeedbackGiven(
        uint256 indexed pactId, address indexed from, address indexed to, uint8 rating, string[] tags, string comment
    );

    error AgentAlreadyRegistered();
    error AgentNotRegistered();
    error AlreadyActive();
    error AlreadyInactive();
    error EmptyName();
    error TooLong(string field, uint256 length, uint256 maximum);
    error NoAgentCapabilities();
    error TooManyCapabilities(uint256 count, uint256 maximum);
    error EmptyCapabilityName(uint256 index);
    error DuplicateCapability(string name);
    error CurrencyNotAccepted(address currency);
    error RatingOutOfRange(uint8 rating);
    error TooManyTags(uint256 count, uint256 maximum);
    error PactNotFinished(uint256 pactId, uint8 status);
    error NotPactParty(uint256 pactId);
    error NoCounterparty(uint256 pactId);
    error AlreadyRated(uint256 pactId);

    /// @dev Deployed by `agentpact deploy` with the AgentPact it has just deployed; a zero address
    ///      would only make every `submitFeedback` revert (docs/contracts.md §Slither).
    // slither-disable-next-line missing-zero-check
    constructor(address agentPact_) {
        agentPact = agentPact_;
    }

    /// @notice Join the market with `profile`; the caller's address is the agent's id.
    function register(Profile calldata profile) external {
        Agent storage a = agents[msg.sender];
        if (a.registeredAt != 0) revert AgentAlreadyRegistered();
        store(a, profile);
        a.active = true;
        a.registeredAt = uint64(block.timestamp);
        emit AgentRegistered(msg.sender, profile);
    }

    /// @notice Replace the caller's whole profile (active or not).
    function updateProfile(Profile calldata profile) external {
        Agent storage a = registered(msg.sender);
        store(a, profile);
        emit ProfileUpdated(msg.sender, profile);
    }

    /// @notice Step out of the market; the profile stays and `reactivate` brings it back.
    function deactivate() external {
        Agent storage a = registered(msg.sender);
        if (!a.active) revert AlreadyInactive();
        a.active = false;
        a.updatedAt = uint64(block.timestamp);
        emit AgentDeactivated(msg.sender);
    }

    /// @notice Come back to the market with the profile as it was.
    function reactivate() external {
        Agent storage a = registered(msg.sender);
        if (a.active) revert AlreadyActive();
        a.active = true;
        a.updatedAt = uint64(block.timestamp);
        emit AgentReactivated(msg.sender);
    }

    /// @notice Rate the other party of pact `pactId`, which must have ended (completed or refunded)
    ///         with both a buyer and a seller. Each party rates once.
    function submitFeedback(uint256 pactId, uint8 rating, string[] calldata tags, string calldata comment)
        external
    {
        if (rating < 1 || rating > 5) revert RatingOutOfRange(rating);
        if (tags.length > MAX_TAGS) revert TooManyTags(tags.length, MAX_TAGS);
        for (uint256 i = 0; i < tags.length; i++) {
            bounded("tag", tags[i], MAX_TAG);
        }
        bounded("comment", comment, MAX_URI);
        // The escrow answers its views module's functions at its own address.
        PactStorage.Pact memory p = AgentPactViews(agentPact).getPact(pactId);
        if (
            p.status != PactStorage.Status.COMPLETED && p.status != PactStorage.Status.REFUNDED
                && p.status != PactStorage.Status.SPLIT
        ) {
            revert PactNotFinished(pactId, uint8(p.status));
        }
        address other = address(0);
        if (msg.sender == p.buyer) other = p.seller;
        else if (msg.sender == p.seller) other = p.buyer;
        else revert NotPactParty(pactId);
        if (other == address(0)) revert NoCounterparty(pactId);
        if (rated[pactId][msg.sender]) revert AlreadyRated(pactId);
        rated[pactId][msg.sender] = true;
        emit FeedbackGiven(pactId, msg.sender, other, rating, tags, comment);
    }

    /// @notice The record of `agent` (all zero when it never registered).
    function getAgent(address agent) external view returns (Agent memory) {
        return agents[agent];
    }

    /// @notice Whether `rater` has rated the other party of `pactId`.
    function hasRated(uint256 pactId, address rater) external view returns (bool) {
        return rated[pactId][rater];
    }

    function registered(address who) private view returns (Agent storage a) {
        a = agents[who];
        if (a.registeredAt == 0) revert AgentNotRegistered();
    }

    /// @dev Checks `profile` and writes it over `a`'s.
    function store(Agent storage a, Profile calldata profile) private {
        if (bytes(profile.name).length == 0) revert EmptyName();
        bounded("name", profile.name, MAX_NAME);
        bounded("description", profile.description, MAX_DESCRIPTION);
        bounded("endpoint", profile.endpoint, MAX_URI);
        bounded("metadataUri", profile.metadataUri, MAX_URI);
        Capability[] calldata caps = profile.capabilities;
        if (caps.length == 0) revert NoAgentCapabilities();
        if (caps.length > MAX_CAPABILITIES) revert TooManyCapabilities(caps.length, MAX_CAPABILITIES);
        delete a.profile.capabilities;
        for (uint256 i = 0; i < caps.length; i++) {
            if (bytes(caps[i].name).length == 0) revert EmptyCapabilityName(i);
            bounded("capability name", caps[i].name, MAX_NAME);
            bounded("capability description", caps[i].description, MAX_DESCRIPTION);
            for (uint256 j = 0; j < i; j++) {
                if (keccak256(bytes(caps[j].name)) == keccak256(bytes(caps[i].name))) {
                    revert DuplicateCapability(caps[i].name);
                }
            }
            // At most MAX_CAPABILITIES view calls into this deployment's own escrow (docs/contracts.md §Slither).
            // slither-disable-next-line calls-loop
            if (!AgentPact(agentPact).acceptsCurrency(caps[i].currency)) revert CurrencyNotAccepted(caps[i].currency);
            a.profile.capabilities.push(
                Capability(caps[i].name, caps[i].description, caps[i].price, caps[i].currency)
            );
        }
        a.profile.name = profile.name;
        a.profile.description = profile.description;
        a.profile.endpoint = profile.endpoint;
        a.profile.metadataUri = profile.metadataUri;
        a.updatedAt = uint64(block.timestamp);
    }

    function bounded(string memory field, string calldata value, uint256 maximum) private pure {
        if (bytes(value).length > maximum) revert TooLong(field, bytes(value).length, maximum);
    }
}
