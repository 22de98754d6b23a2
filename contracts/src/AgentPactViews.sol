// SPDX-License-Identifier: MIT
pragma solidity 0.8.30;

import {PactStorage} from "./PactStorage.sol";

/// @title AgentPactViews
/// @notice The escrow's struct views, apart because ABI-encoding a pact's 24 fields takes room.
///         Runs only by DELEGATECALL (the `AgentPact` core hands it every selector neither it nor
///         `AgentPactLifecycle` implements), on the escrow's storage. A selector it does not know
///         reverts with no data, as an unknown selector of any contract does.
contract AgentPactViews is PactStorage {
    /// @notice A pact's full state.
    function getPact(uint256 pactId) external view returns (Pact memory) {
        return pactExists(pactId);
    }

    /// @notice The last offer to settle `pactId` (`by` is zero when none stands).
    function getSettlement(uint256 pactId) external view returns (Settlement memory) {
        pactExists(pactId);
        return settlements[pactId];
    }

    /// @notice What `oracle` submitted for `pactId` (all zero when nothing).
    function getVerification(uint256 pactId, address oracle) external view returns (Verification memory) {
        pactExists(pactId);
        return verifications[pactId][oracle];
    }

    /// @notice How many verdicts `pactId` has had, the count its last offer was made at (the offer
    ///         is void when they differ), and who has used its `voidOffers`.
    function getLedger(uint256 pactId) external view returns (Ledger memory) {
        pactExists(pactId);
        return ledgers[pactId];
    }
}
