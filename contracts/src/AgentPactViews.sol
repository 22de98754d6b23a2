// SPDX-License-Identifier: MIT
pragma solidity 0.8.30;

import {PactStorage} from "./PactStorage.sol";

/// @title AgentPactViews
/// @notice The escrow's struct views, apart because ABI-encoding a pact's 24 fields takes room.
///         Runs only by DELEGATECALL (the `AgentPact` core hands it every selector neither it nor
///         `AgentPactLifecycle` implements), on the escrow's storage. A selector it does not know
///         reverts with no data, as an unknown selector of any contract does.
contract AgentPactViews is PactStorage {
    /// @notice A pact's full state, v3's struct: the lifecycle fields are its current stage's (its
    ///         lowest live one, or its last once none is live); `getStages` has every stage.
    function getPact(uint256 pactId) external view returns (Pact memory v) {
        PactRecord storage p = pactExists(pactId);
        Stage storage s = stages[pactId][currentStage(pactId)];
        v.buyer = p.buyer;
        v.seller = p.seller;
        v.arbitrator = p.arbitrator;
        v.counterparty = p.counterparty;
        v.initiator = p.initiator;
        v.status = p.status;
        v.threshold = p.threshold;
        v.scoreCount = s.scoreCount;
        v.finalScore = s.finalScore;
        v.deadline = p.deadline;
        v.acceptBy = p.acceptBy;
        v.reviewPeriod = p.reviewPeriod;
        v.submittedAt = s.submittedAt;
        v.verifiedAt = s.verifiedAt;
        v.disputedAt = s.disputedAt;
        v.currency = p.currency;
        v.payment = p.payment;
        v.buyerStake = p.buyerStake;
        v.sellerStake = p.sellerStake;
        v.specHash = p.specHash;
        v.proofHash = s.proofHash;
        v.specUri = p.specUri;
        v.oracles = p.oracles;
        v.weights = p.weights;
    }

    /// @notice Every stage of `pactId`, in order (one for a pact created with `createPact`).
    function getStages(uint256 pactId) external view returns (Stage[] memory all) {
        pactExists(pactId);
        all = new Stage[](ledgers[pactId].stages);
        for (uint256 k = 0; k < all.length; k++) {
            all[k] = stages[pactId][k];
        }
    }

    /// @notice Stage `stage` of `pactId`.
    function getStage(uint256 pactId, uint8 stage) external view returns (Stage memory) {
        (, Stage storage s) = stageOf(pactId, stage);
        return s;
    }

    /// @notice What `oracle` submitted for stage `stage` of `pactId` (all zero when nothing).
    function getStageVerification(uint256 pactId, uint8 stage, address oracle)
        external
        view
        returns (Verification memory)
    {
        stageOf(pactId, stage);
        return verifications[stageKey(pactId, stage)][oracle];
    }

    /// @notice The last offer to settle `pactId` (`by` is zero when none stands).
    function getSettlement(uint256 pactId) external view returns (Settlement memory) {
        pactExists(pactId);
        return settlements[pactId];
    }

    /// @notice What `oracle` submitted for `pactId`'s first stage (all zero when nothing).
    function getVerification(uint256 pactId, address oracle) external view returns (Verification memory) {
        pactExists(pactId);
        return verifications[pactId][oracle];
    }

    /// @notice How many stages `pactId` has, how many verdicts it has had, the count its last offer
    ///         was made at (the offer is void when they differ), and how it ended.
    function getLedger(uint256 pactId) external view returns (Ledger memory) {
        pactExists(pactId);
        return ledgers[pactId];
    }

    /// @dev The stage `getPact` shows: the lowest live one, or the last once none is live.
    function currentStage(uint256 pactId) private view returns (uint256 k) {
        uint256 last = ledgers[pactId].stages - 1;
        while (k < last && !isLive(stages[pactId][k].status)) k++;
    }
}
