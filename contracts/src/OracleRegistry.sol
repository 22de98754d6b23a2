// SPDX-License-Identifier: MIT
pragma solidity 0.8.30;

import {ReentrancyGuard} from "./ReentrancyGuard.sol";

/// @title OracleRegistry
/// @notice Oracles stake ETH and list their capabilities here; AgentPact only lets a pact name oracles
///         that are active in this registry. Leaving takes two steps: `deregister` stops new pacts from
///         naming the oracle and starts a cooldown, after which `withdrawStake` returns the stake.
contract OracleRegistry is ReentrancyGuard {
    /// @notice One oracle's record. `unlockAt` is zero while the oracle is active.
    struct Oracle {
        uint256 stake;
        string[] capabilities;
        bool registered;
        bool active;
        uint64 registeredAt;
        uint64 unlockAt;
    }

    /// @notice Most capabilities one oracle may list.
    uint256 public constant MAX_CAPABILITIES = 16;
    /// @notice Longest capability, in bytes.
    uint256 public constant MAX_CAPABILITY = 64;

    /// @notice The least stake, in wei, that `register` accepts.
    uint256 public immutable minStake;
    /// @notice Seconds between `deregister` and the earliest `withdrawStake`.
    uint64 public immutable cooldown;

    mapping(address => Oracle) private oracles;

    /// @notice An oracle joined with `stake` wei and these capabilities.
    event OracleRegistered(address indexed oracle, uint256 stake, string[] capabilities);
    /// @notice An active oracle added `amount` wei; its stake is now `totalStake`.
    event StakeIncreased(address indexed oracle, uint256 amount, uint256 totalStake);
    /// @notice An active oracle replaced its capability list.
    event CapabilitiesUpdated(address indexed oracle, string[] capabilities);
    /// @notice An oracle left; its stake can be withdrawn from `unlockAt` on.
    event OracleDeregistered(address indexed oracle, uint64 unlockAt);
    /// @notice A deregistered oracle took back its stake; its record is gone.
    event StakeWithdrawn(address indexed oracle, uint256 amount);

    error StakeTooLow(uint256 sent, uint256 minimum);
    error NoCapabilities();
    error CapabilityCount(uint256 count, uint256 maximum);
    error CapabilityTooLong(uint256 index, uint256 length, uint256 maximum);
    error ZeroValue();
    error AlreadyRegistered();
    error NotRegistered();
    error NotActive();
    error StillActive();
    error CooldownActive(uint64 unlockAt);
    error TransferFailed();

    constructor(uint256 minStake_, uint64 cooldown_) {
        minStake = minStake_;
        cooldown = cooldown_;
    }

    /// @notice Join as an oracle, staking `msg.value` wei (at least `minStake`).
    function register(string[] calldata capabilities) external payable {
        Oracle storage o = oracles[msg.sender];
        if (o.registered) revert AlreadyRegistered();
        if (msg.value < minStake || msg.value == 0) revert StakeTooLow(msg.value, minStake);
        checkCapabilities(capabilities);
        o.stake = msg.value;
        o.capabilities = capabilities;
        o.registered = true;
        o.active = true;
        o.registeredAt = uint64(block.timestamp);
        emit OracleRegistered(msg.sender, msg.value, capabilities);
    }

    /// @notice Add `msg.value` wei to the caller's stake.
    function increaseStake() external payable {
        Oracle storage o = activeOracle(msg.sender);
        if (msg.value == 0) revert ZeroValue();
        o.stake += msg.value;
        emit StakeIncreased(msg.sender, msg.value, o.stake);
    }

    /// @notice Replace the caller's capability list.
    function updateCapabilities(string[] calldata capabilities) external {
        Oracle storage o = activeOracle(msg.sender);
        checkCapabilities(capabilities);
        o.capabilities = capabilities;
        emit CapabilitiesUpdated(msg.sender, capabilities);
    }

    /// @notice Stop being named by new pacts; the stake unlocks after `cooldown` seconds.
    function deregister() external {
        Oracle storage o = activeOracle(msg.sender);
        o.active = false;
        o.unlockAt = uint64(block.timestamp) + cooldown;
        emit OracleDeregistered(msg.sender, o.unlockAt);
    }

    /// @notice Send a deregistered oracle its stake once the cooldown has passed.
    function withdrawStake() external nonReentrant {
        Oracle storage o = oracles[msg.sender];
        if (!o.registered) revert NotRegistered();
        if (o.active) revert StillActive();
        if (block.timestamp < o.unlockAt) revert CooldownActive(o.unlockAt);
        uint256 amount = o.stake;
        delete oracles[msg.sender];
        emit StakeWithdrawn(msg.sender, amount);
        (bool ok,) = msg.sender.call{value: amount}("");
        if (!ok) revert TransferFailed();
    }

    /// @notice Whether `oracle` is registered and has not deregistered.
    function isActive(address oracle) external view returns (bool) {
        return oracles[oracle].active;
    }

    /// @notice The full record of `oracle` (all zero when unknown).
    function getOracle(address oracle) external view returns (Oracle memory) {
        return oracles[oracle];
    }

    /// @dev 1 to MAX_CAPABILITIES entries of at most MAX_CAPABILITY bytes: bounds storage and events.
    function checkCapabilities(string[] calldata capabilities) private pure {
        if (capabilities.length == 0) revert NoCapabilities();
        if (capabilities.length > MAX_CAPABILITIES) revert CapabilityCount(capabilities.length, MAX_CAPABILITIES);
        for (uint256 i = 0; i < capabilities.length; i++) {
            uint256 length = bytes(capabilities[i]).length;
            if (length > MAX_CAPABILITY) revert CapabilityTooLong(i, length, MAX_CAPABILITY);
        }
    }

    function activeOracle(address who) private view returns (Oracle storage o) {
        o = oracles[who];
        if (!o.registered) revert NotRegistered();
        if (!o.active) revert NotActive();
    }
}
