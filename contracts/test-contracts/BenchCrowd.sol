// SPDX-License-Identifier: MIT
pragma solidity 0.8.30;

/// @title BenchParty (benchmarks only)
/// @notice One market participant that is a contract: the crowd that made it drives it, and every
///         call it makes reaches the real escrow, registry or token as an ordinary caller would.
contract BenchParty {
    error NotCrowd();

    address private immutable crowd;

    constructor() {
        crowd = msg.sender;
    }

    /// @notice Calls `target` with `data` and `value` as this party; a revert is passed on as it is.
    function act(address target, bytes calldata data) external payable {
        if (msg.sender != crowd) revert NotCrowd();
        (bool ok, bytes memory reason) = target.call{value: msg.value}(data);
        if (!ok) {
            assembly {
                revert(add(reason, 32), mload(reason))
            }
        }
    }

    /// @notice Takes withdrawn credit.
    receive() external payable {}
}

/// @title BenchCrowd (benchmarks only)
/// @notice Many parties driven by one owner: a market history generator sends hundreds of lifecycle
///         steps of many pacts in one transaction (`run`), so generating a million pacts is not
///         limited by one node transaction per step. Each step is made by one of the parties, so
///         the real contracts see many distinct buyers, sellers and oracles and emit every real
///         event. Never deployed outside the benchmarks.
contract BenchCrowd {
    error NotOwner();
    error UnknownParty(uint256 party, uint256 parties);

    /// @notice One call made by one party.
    struct Step {
        uint32 party;
        address target;
        uint256 value;
        bytes data;
    }

    address private immutable owner;
    /// @notice The parties, by index.
    BenchParty[] public parties;

    constructor() {
        owner = msg.sender;
    }

    /// @notice Adds `n` parties.
    function grow(uint256 n) external {
        if (msg.sender != owner) revert NotOwner();
        for (uint256 i = 0; i < n; i++) {
            parties.push(new BenchParty());
        }
    }

    /// @notice How many parties there are.
    function partyCount() external view returns (uint256) {
        return parties.length;
    }

    /// @notice Makes `steps` in order, paying their values from this contract's balance; the first
    ///         revert reverts them all.
    function run(Step[] calldata steps) external payable {
        if (msg.sender != owner) revert NotOwner();
        for (uint256 i = 0; i < steps.length; i++) {
            Step calldata s = steps[i];
            if (s.party >= parties.length) revert UnknownParty(s.party, parties.length);
            parties[s.party].act{value: s.value}(s.target, s.data);
        }
    }
}
