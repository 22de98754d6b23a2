// SPDX-License-Identifier: MIT
pragma solidity 0.8.30;

import {AgentPactViews} from "./AgentPactViews.sol";
import {PactStorage} from "./PactStorage.sol";

/// @title AgentPactLifecycle
/// @notice Everything that happens to a pact after it is accepted: work, verification, the buyer's
///         review, disputes and rulings, settlements and timeouts (docs/contracts.md). Runs only by
///         DELEGATECALL from the `AgentPact` that created it, on that escrow's storage; it moves no
///         token and calls no other contract: it moves pacts through their statuses and credits
///         the book, which the core pays out. Called directly, it sees its own empty storage and
///         every pact is `PactNotFound`. What it does not implement it hands to `AgentPactViews`.
contract AgentPactLifecycle is PactStorage {
    /// @notice Seconds after submission that oracles have before anyone may finalize without them.
    uint64 public constant VERIFICATION_PERIOD = 3 days;
    /// @notice Seconds the arbitrator has before anyone may end a dispute with each side refunded.
    uint64 public constant DISPUTE_PERIOD = 7 days;
    /// @notice A share of the payment, in basis points, that gives one side all of it.
    uint16 public constant FULL_SHARE = 10_000;

    /// @notice Seconds before a window closes from which no offer stands: the latest expiry an offer
    ///         may have. A clock's verdict (a deadline passing, a window closing) cannot void an offer
    ///         the way a score does, so offers end an hour before it: at the deadline second a seller
    ///         that never delivered would otherwise take an offer instead of forfeiting its stake.
    ///         An hour is the least time the escrow already counts as enough to work.
    uint64 public constant VERDICT_MARGIN = 1 hours;
    /// @notice The arbitrator's bit in `Ledger.voided` (the oracles' are their indexes).
    uint16 private constant ARBITRATOR_VOID = 1 << 15;

    /// @notice The module that answers the struct views (`getPact`, `getSettlement`,
    ///         `getVerification`), created by the escrow with this one.
    AgentPactViews public immutable views;

    constructor(AgentPactViews views_) {
        views = views_;
    }

    /// @notice Every selector this module does not implement goes on to the views module.
    fallback() external {
        forward(address(views));
    }

    // ---------------------------------------------------------------- work

    /// @notice The seller signals that work has begun.
    function startWork(uint256 pactId) external nonReentrant {
        Pact storage p = pactAt(pactId, Status.FUNDED);
        if (msg.sender != p.seller) revert NotSeller();
        if (block.timestamp > p.deadline) revert DeadlinePassed(p.deadline);
        p.status = Status.IN_PROGRESS;
        emit WorkStarted(pactId, msg.sender);
    }

    /// @notice The seller delivers, naming the deliverable by hash; oracles may now score it.
    function submitWork(uint256 pactId, bytes32 proofHash) external nonReentrant {
        Pact storage p = pactAt(pactId, Status.IN_PROGRESS);
        if (msg.sender != p.seller) revert NotSeller();
        if (block.timestamp > p.deadline) revert DeadlinePassed(p.deadline);
        if (proofHash == bytes32(0)) revert ZeroHash();
        p.proofHash = proofHash;
        p.submittedAt = uint64(block.timestamp);
        p.status = Status.PENDING_VERIFY;
        emit WorkSubmitted(pactId, msg.sender, proofHash);
    }

    // ---------------------------------------------------------------- verification

    /// @notice A pact's oracle scores the delivered work, once, from 0 to 100, until the verification
    ///         window closes (from the next second anyone may finalize, the silent scoring 0).
    function submitVerification(uint256 pactId, uint8 score, bytes32 proof) external nonReentrant {
        Pact storage p = pactAt(pactId, Status.PENDING_VERIFY);
        if (!isPactOracle(p, msg.sender)) revert NotPactOracle();
        uint64 closesAt = p.submittedAt + VERIFICATION_PERIOD;
        if (block.timestamp > closesAt) revert VerificationClosed(closesAt);
        if (score > 100) revert ScoreTooHigh(score);
        if (proof == bytes32(0)) revert ZeroHash();
        Verification storage v = verifications[pactId][msg.sender];
        if (v.submitted) revert AlreadyScored(msg.sender);
        verifications[pactId][msg.sender] = Verification(true, score, uint64(block.timestamp), proof);
        p.scoreCount += 1;
        ledgers[pactId].epoch += 1;
        emit VerificationSubmitted(pactId, msg.sender, score, proof);
    }

    /// @notice Combine the oracle scores: sum(weight * score) / 100, a silent oracle scoring 0.
    ///         Callable by anyone once every oracle scored, or after the verification window.
    ///         A pass moves the pact to PENDING_APPROVAL, a fail to DISPUTED.
    function finalizeVerification(uint256 pactId) external nonReentrant {
        Pact storage p = pactAt(pactId, Status.PENDING_VERIFY);
        uint64 closesAt = p.submittedAt + VERIFICATION_PERIOD;
        if (p.scoreCount < p.oracles.length && block.timestamp <= closesAt) {
            revert VerificationOpen(p.scoreCount, p.oracles.length, closesAt);
        }
        uint256 weighted = 0;
        for (uint256 i = 0; i < p.oracles.length; i++) {
            weighted += uint256(p.weights[i]) * verifications[pactId][p.oracles[i]].score;
        }
        uint8 score = uint8(weighted / 100);
        bool passed = score >= p.threshold;
        p.finalScore = score;
        if (passed) {
            p.status = Status.PENDING_APPROVAL;
            p.verifiedAt = uint64(block.timestamp);
        } else {
            p.status = Status.DISPUTED;
            p.disputedAt = uint64(block.timestamp);
        }
        emit VerificationFinalized(pactId, score, passed, p.scoreCount);
    }

    // ---------------------------------------------------------------- buyer review

    /// @notice The buyer accepts verified work: seller gets payment + its stake, buyer its stake.
    function approveWork(uint256 pactId) external nonReentrant {
        Pact storage p = pactAt(pactId, Status.PENDING_APPROVAL);
        if (msg.sender != p.buyer) revert NotBuyer();
        complete(pactId, p, false);
    }

    /// @notice The buyer refuses verified work within the review period; the arbitrator decides.
    ///         The review period's last second is the last one a reject is taken; from the next,
    ///         only `autoApprove` ends the review.
    function rejectWork(uint256 pactId) external nonReentrant {
        Pact storage p = pactAt(pactId, Status.PENDING_APPROVAL);
        if (msg.sender != p.buyer) revert NotBuyer();
        uint64 endsAt = p.verifiedAt + p.reviewPeriod;
        if (block.timestamp > endsAt) revert ReviewPeriodOver(endsAt);
        p.status = Status.DISPUTED;
        p.disputedAt = uint64(block.timestamp);
        emit WorkRejected(pactId, msg.sender);
    }

    /// @notice Anyone completes a pact whose buyer stayed silent past the review period.
    function autoApprove(uint256 pactId) external nonReentrant {
        Pact storage p = pactAt(pactId, Status.PENDING_APPROVAL);
        uint64 endsAt = p.verifiedAt + p.reviewPeriod;
        if (block.timestamp <= endsAt) revert ReviewPeriodActive(endsAt);
        complete(pactId, p, true);
    }

    // ---------------------------------------------------------------- disputes

    /// @notice Buyer or seller sends a funded, started or submitted pact to the agreed arbitrator.
    ///         `arbitrator` must be the one fixed in the terms. A funded or started pact can be
    ///         disputed until the deadline (after it, the buyer's timeout claim is the exit); a
    ///         submitted one until the verification window closes (after it, finalization is).
    function raiseDispute(uint256 pactId, address arbitrator) external nonReentrant {
        Pact storage p = pactExists(pactId);
        if (p.status != Status.FUNDED && p.status != Status.IN_PROGRESS && p.status != Status.PENDING_VERIFY) {
            revert NotDisputable(p.status);
        }
        if (msg.sender != p.buyer && msg.sender != p.seller) revert NotParty();
        if (arbitrator != p.arbitrator) revert ArbitratorMismatch(arbitrator, p.arbitrator);
        openWindow(p);
        p.status = Status.DISPUTED;
        p.disputedAt = uint64(block.timestamp);
        emit DisputeRaised(pactId, msg.sender, arbitrator);
    }

    /// @notice The arbitrator rules for one side, until the dispute window closes (from the next second
    ///         anyone may end the dispute with each side refunded). The winner takes payment and both
    ///         stakes: `resolveDisputeShare` at 10000 or 0.
    function resolveDispute(uint256 pactId, bool sellerWins) external nonReentrant {
        rule(pactId, sellerWins ? FULL_SHARE : 0);
    }

    /// @notice The arbitrator rules `sellerShare` basis points to the seller, the rest to the buyer,
    ///         until the dispute window closes. The share divides the pot (payment and both stakes):
    ///         each side forfeits its stake in proportion to how far the ruling went against it.
    function resolveDisputeShare(uint256 pactId, uint16 sellerShare) external nonReentrant {
        if (sellerShare > FULL_SHARE) revert ShareTooLarge(sellerShare, FULL_SHARE);
        rule(pactId, sellerShare);
    }

    // ---------------------------------------------------------------- settlements

    /// @notice The pact's arbitrator while it is disputed, or one of its oracles that has not
    ///         scored while its work is being verified, voids every offer standing on it, once each,
    ///         while the window for its verdict is open. Sent just before the ruling or the score, it
    ///         reveals nothing of it, and no acceptance mined after it can take an offer priced
    ///         before the verdict. The escrow does not refuse a verdict while an offer stands: a
    ///         party could then keep the verdict away by offering anew every block.
    function voidOffers(uint256 pactId) external nonReentrant {
        Pact storage p = pactExists(pactId);
        uint16 bit = 0;
        if (p.status == Status.DISPUTED && msg.sender == p.arbitrator) {
            bit = ARBITRATOR_VOID;
        } else if (p.status == Status.PENDING_VERIFY && !verifications[pactId][msg.sender].submitted) {
            for (uint256 i = 0; i < p.oracles.length; i++) {
                if (p.oracles[i] == msg.sender) bit = uint16(1 << i);
            }
        }
        if (bit == 0) revert NotVerdictGiver(msg.sender, p.status);
        openWindow(p);
        Ledger storage l = ledgers[pactId];
        if (l.voided & bit != 0) revert AlreadyVoided(msg.sender);
        l.voided |= bit;
        l.epoch += 1;
        emit OffersVoided(pactId, msg.sender, l.epoch);
    }

    /// @notice A party of a funded, started, submitted or disputed pact offers to end it with
    ///         `sellerShare` basis points of the payment to the seller and the rest to the buyer, each
    ///         stake back to its owner. The offer stands until `expiresAt` (0: `VERDICT_MARGIN`
    ///         before the status's window closes, which is also the latest allowed), until it is
    ///         withdrawn, until either party makes another, until the pact moves on, or until a
    ///         verdict is given on it (an oracle's score, a `voidOffers`).
    /// @return round The offer's number, which an acceptance names.
    function proposeSettlement(uint256 pactId, uint16 sellerShare, uint64 expiresAt)
        external
        nonReentrant
        returns (uint32 round)
    {
        Pact storage p = pactExists(pactId);
        uint64 closesAt = openWindow(p);
        if (msg.sender != p.buyer && msg.sender != p.seller) revert NotParty();
        if (sellerShare > FULL_SHARE) revert ShareTooLarge(sellerShare, FULL_SHARE);
        uint64 latest = closesAt - VERDICT_MARGIN;
        uint64 expires = expiresAt == 0 ? latest : expiresAt;
        if (expires < block.timestamp || expires > latest) {
            revert SettlementExpiryOutOfRange(expiresAt, uint64(block.timestamp), latest);
        }
        ledgers[pactId].offerEpoch = ledgers[pactId].epoch;
        round = settlements[pactId].round + 1;
        settlements[pactId] = Settlement(msg.sender, p.status, sellerShare, round, expires);
        emit SettlementProposed(pactId, msg.sender, p.status, round, sellerShare, expires);
    }

    /// @notice The party that made the standing offer takes it back.
    function withdrawSettlement(uint256 pactId) external nonReentrant {
        pactExists(pactId);
        Settlement storage s = settlements[pactId];
        if (s.by == address(0)) revert NoSettlement(pactId);
        if (msg.sender != s.by) revert NotProposer();
        s.by = address(0);
        emit SettlementWithdrawn(pactId, msg.sender, s.round);
    }

    /// @notice The other party accepts the standing offer, naming its `round` and `sellerShare` (an
    ///         offer replaced in between is refused, never accepted in its new form), until it
    ///         expires, while the pact is in the status it was made in, and while no verdict was
    ///         given since it was made (`OfferVoided`). The pact ends.
    function acceptSettlement(uint256 pactId, uint32 round, uint16 sellerShare) external nonReentrant {
        Pact storage p = pactExists(pactId);
        Settlement memory s = settlements[pactId];
        if (s.by == address(0)) revert NoSettlement(pactId);
        if (msg.sender != p.buyer && msg.sender != p.seller) revert NotParty();
        if (msg.sender == s.by) revert OwnSettlement();
        if (round != s.round || sellerShare != s.sellerShare) revert SettlementReplaced(s.round, s.sellerShare);
        if (p.status != s.status) revert SettlementStale(s.status, p.status);
        Ledger memory l = ledgers[pactId];
        if (l.offerEpoch != l.epoch) revert OfferVoided(l.offerEpoch, l.epoch);
        if (block.timestamp > s.expiresAt) revert SettlementExpired(s.expiresAt);
        settlements[pactId].by = address(0);
        emit SettlementAccepted(pactId, msg.sender, round, sellerShare);
        divide(pactId, p, sellerShare, false);
    }

    // ---------------------------------------------------------------- timeouts

    /// @notice Anyone ends a pact whose clock ran out:
    ///         NEGOTIATING past `acceptBy` -> the creator gets its deposit back;
    ///         FUNDED or IN_PROGRESS past the deadline -> the buyer gets payment and both stakes;
    ///         DISPUTED past the dispute window -> each side gets back what it put in.
    function claimTimeout(uint256 pactId) external nonReentrant {
        Pact storage p = pactExists(pactId);
        Status from = p.status;
        if (from == Status.NEGOTIATING) {
            if (block.timestamp <= p.acceptBy) revert AcceptWindowOpen(p.acceptBy);
        } else if (from == Status.FUNDED || from == Status.IN_PROGRESS) {
            if (block.timestamp <= p.deadline) revert DeadlineNotReached(p.deadline);
        } else if (from == Status.DISPUTED) {
            uint64 endsAt = p.disputedAt + DISPUTE_PERIOD;
            if (block.timestamp <= endsAt) revert DisputePeriodActive(endsAt);
        } else {
            revert NoTimeoutFrom(from);
        }
        p.status = Status.REFUNDED;
        emit TimeoutClaimed(pactId, msg.sender, from);
        if (from == Status.NEGOTIATING) {
            refundCreator(pactId, p);
            end(pactId, p, Ending.EXPIRED);
        } else if (from == Status.DISPUTED) {
            credit(pactId, p.buyer, p.payment + p.buyerStake);
            credit(pactId, p.seller, p.sellerStake);
            end(pactId, p, Ending.ARBITRATOR_SILENT);
        } else {
            credit(pactId, p.buyer, p.payment + p.buyerStake + p.sellerStake);
            end(pactId, p, Ending.REFUNDED_AFTER_FAILURE);
        }
    }

    /// @dev The last second of the window `p`'s status gives its parties (to dispute, settle, rule);
    ///      from the next one the exit that ends the status opens. Reverts once it has closed, and for
    ///      a status without such a window.
    function openWindow(Pact storage p) private view returns (uint64 closesAt) {
        Status s = p.status;
        if (s == Status.FUNDED || s == Status.IN_PROGRESS) {
            closesAt = p.deadline;
            if (block.timestamp > closesAt) revert DeadlinePassed(closesAt);
        } else if (s == Status.PENDING_VERIFY) {
            closesAt = p.submittedAt + VERIFICATION_PERIOD;
            if (block.timestamp > closesAt) revert VerificationClosed(closesAt);
        } else if (s == Status.DISPUTED) {
            closesAt = p.disputedAt + DISPUTE_PERIOD;
            if (block.timestamp > closesAt) revert DisputePeriodOver(closesAt);
        } else {
            revert NotSettleable(s);
        }
    }

    /// @dev The arbitrator's ruling on a disputed pact, within the dispute window.
    function rule(uint256 pactId, uint16 sellerShare) private {
        Pact storage p = pactAt(pactId, Status.DISPUTED);
        if (msg.sender != p.arbitrator) revert NotArbitrator();
        openWindow(p);
        emit DisputeResolved(pactId, msg.sender, sellerShare);
        divide(pactId, p, sellerShare, true);
    }

    /// @dev Ends `p` with `sellerShare` basis points to the seller and the rest to the buyer: of the
    ///      pot (payment and both stakes) for a ruling, of the payment for a settlement (each stake
    ///      back to its owner). Rounding favours the buyer by at most one base unit. The status
    ///      follows the amounts, not the share: COMPLETED when the seller's part is all of what was
    ///      divided, REFUNDED when it is none (so a settlement whose share rounds to nothing is a
    ///      cancel by agreement, not a split), SPLIT between.
    function divide(uint256 pactId, Pact storage p, uint16 sellerShare, bool ruled) private {
        uint256 pot = p.payment + p.buyerStake + p.sellerStake;
        uint256 divided = ruled ? pot : p.payment;
        uint256 part = divided * sellerShare / FULL_SHARE;
        p.status = part == divided ? Status.COMPLETED : (part == 0 ? Status.REFUNDED : Status.SPLIT);
        uint256 toSeller = ruled ? part : part + p.sellerStake;
        if (toSeller > 0) credit(pactId, p.seller, toSeller);
        if (pot > toSeller) credit(pactId, p.buyer, pot - toSeller);
        end(pactId, p, ruled ? Ending.RULED : (part == 0 ? Ending.CANCELLED_BY_AGREEMENT : Ending.SPLIT));
    }

    function complete(uint256 pactId, Pact storage p, bool auto_) private {
        p.status = Status.COMPLETED;
        emit WorkApproved(pactId, msg.sender, auto_);
        credit(pactId, p.seller, p.payment + p.sellerStake);
        credit(pactId, p.buyer, p.buyerStake);
        end(pactId, p, Ending.COMPLETED);
    }
}
