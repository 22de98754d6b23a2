// SPDX-License-Identifier: MIT
pragma solidity 0.8.30;

import {AgentPactViews} from "./AgentPactViews.sol";
import {PactStorage, STAKE_PARTS} from "./PactStorage.sol";

/// @title AgentPactLifecycle
/// @notice Everything that happens to a pact after it is accepted: work, verification, the buyer's
///         review, disputes and rulings, settlements and timeouts (docs/contracts.md). Runs only by
///         DELEGATECALL from the `AgentPact` that created it, on that escrow's storage; it moves no
///         token and calls no other contract: it moves pacts through their statuses and credits
///         the book, which the core pays out. Called directly, it sees its own empty storage and
///         every pact is `PactNotFound`. What it does not implement it hands to `AgentPactViews`.
///
///         Every act after acceptance is an act on one stage (docs/contracts.md §Stages): the
///         `*Stage` functions name it; v3's functions act on stage 0 of a one-stage pact and refuse a
///         pact of several (`UseStage`). A one-stage pact emits v3's events, a pact of several the
///         `Stage*` ones; `startWork`, the settlements and `voidOffers` are pact-wide.
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
    /// @notice The arbitrator's bit in `Stage.voided` (the oracles' are their indexes).
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

    /// @notice The seller signals that work has begun, on every funded stage.
    function startWork(uint256 pactId) external nonReentrant {
        PactRecord storage p = pactAt(pactId, Status.FUNDED);
        if (msg.sender != p.seller) revert NotSeller();
        // The pact is FUNDED: its lowest live stage is, and that stage's deadline is the earliest
        // of any stage still funded (deadlines never decrease).
        uint256 n = ledgers[pactId].stages;
        for (uint256 k = 0; k < n; k++) {
            Stage storage s = stages[pactId][k];
            if (s.status != Status.FUNDED) continue;
            if (block.timestamp > s.deadline) revert DeadlinePassed(s.deadline);
            s.status = Status.IN_PROGRESS;
        }
        emit WorkStarted(pactId, msg.sender);
        restate(pactId, p);
    }

    /// @notice The seller delivers, naming the deliverable by hash; oracles may now score it.
    function submitWork(uint256 pactId, bytes32 proofHash) external nonReentrant {
        submit(single(pactId), 0, proofHash);
    }

    /// @notice `submitWork` for stage `stage`, until that stage's deadline.
    function submitStage(uint256 pactId, uint8 stage, bytes32 proofHash) external nonReentrant {
        submit(pactId, stage, proofHash);
    }

    // ---------------------------------------------------------------- verification

    /// @notice A pact's oracle scores the delivered work, once, from 0 to 100, until the verification
    ///         window closes (from the next second anyone may finalize, the silent scoring 0).
    function submitVerification(uint256 pactId, uint8 score, bytes32 proof) external nonReentrant {
        scoreWork(single(pactId), 0, score, proof);
    }

    /// @notice `submitVerification` for stage `stage`: each stage is scored on its own.
    function scoreStage(uint256 pactId, uint8 stage, uint8 score, bytes32 proof) external nonReentrant {
        scoreWork(pactId, stage, score, proof);
    }

    /// @notice Combine the oracle scores: sum(weight * score) / 100, a silent oracle scoring 0.
    ///         Callable by anyone once every oracle scored, or after the verification window.
    ///         A pass moves the pact to PENDING_APPROVAL, a fail to DISPUTED.
    function finalizeVerification(uint256 pactId) external nonReentrant {
        finalize(single(pactId), 0);
    }

    /// @notice `finalizeVerification` for stage `stage`.
    function finalizeStage(uint256 pactId, uint8 stage) external nonReentrant {
        finalize(pactId, stage);
    }

    // ---------------------------------------------------------------- buyer review

    /// @notice The buyer accepts verified work: seller gets payment + its stake, buyer its stake.
    function approveWork(uint256 pactId) external nonReentrant {
        approve(single(pactId), 0);
    }

    /// @notice `approveWork` for stage `stage`: its amount and stakes are released.
    function approveStage(uint256 pactId, uint8 stage) external nonReentrant {
        approve(pactId, stage);
    }

    /// @notice The buyer refuses verified work within the review period; the arbitrator decides.
    ///         The review period's last second is the last one a reject is taken; from the next,
    ///         only `autoApprove` ends the review.
    function rejectWork(uint256 pactId) external nonReentrant {
        reject(single(pactId), 0);
    }

    /// @notice `rejectWork` for stage `stage`: that stage alone goes to the arbitrator.
    function rejectStage(uint256 pactId, uint8 stage) external nonReentrant {
        reject(pactId, stage);
    }

    /// @notice Anyone completes a pact whose buyer stayed silent past the review period.
    function autoApprove(uint256 pactId) external nonReentrant {
        autoApproveAt(single(pactId), 0);
    }

    /// @notice `autoApprove` for stage `stage`.
    function autoApproveStage(uint256 pactId, uint8 stage) external nonReentrant {
        autoApproveAt(pactId, stage);
    }

    // ---------------------------------------------------------------- disputes

    /// @notice Buyer or seller sends a funded, started or submitted pact to the agreed arbitrator.
    ///         `arbitrator` must be the one fixed in the terms. A funded or started pact can be
    ///         disputed until the deadline (after it, the buyer's timeout claim is the exit); a
    ///         submitted one until the verification window closes (after it, finalization is).
    function raiseDispute(uint256 pactId, address arbitrator) external nonReentrant {
        dispute(single(pactId), 0, arbitrator);
    }

    /// @notice `raiseDispute` for stage `stage` alone, within that stage's windows.
    function disputeStage(uint256 pactId, uint8 stage, address arbitrator) external nonReentrant {
        dispute(pactId, stage, arbitrator);
    }

    /// @notice The arbitrator rules for one side, until the dispute window closes (from the next second
    ///         anyone may end the dispute with each side refunded). The winner takes payment and both
    ///         stakes: `resolveDisputeShare` at 10000 or 0.
    function resolveDispute(uint256 pactId, bool sellerWins) external nonReentrant {
        rule(single(pactId), 0, sellerWins ? FULL_SHARE : 0);
    }

    /// @notice The arbitrator rules `sellerShare` basis points to the seller, the rest to the buyer,
    ///         until the dispute window closes. The share divides the pot (payment and both stakes):
    ///         each side forfeits its stake in proportion to how far the ruling went against it.
    function resolveDisputeShare(uint256 pactId, uint16 sellerShare) external nonReentrant {
        if (sellerShare > FULL_SHARE) revert ShareTooLarge(sellerShare, FULL_SHARE);
        rule(single(pactId), 0, sellerShare);
    }

    /// @notice `resolveDisputeShare` for stage `stage`: its pot (amount and both stakes) divided.
    function resolveStage(uint256 pactId, uint8 stage, uint16 sellerShare) external nonReentrant {
        if (sellerShare > FULL_SHARE) revert ShareTooLarge(sellerShare, FULL_SHARE);
        rule(pactId, stage, sellerShare);
    }

    // ---------------------------------------------------------------- settlements

    /// @notice The pact's arbitrator while a stage is disputed, or one of its oracles that has not
    ///         scored a stage whose work is being verified, voids every offer standing on the pact,
    ///         once per stage each, while the window for its verdict is open. Sent just before the
    ///         ruling or the score, it reveals nothing of it, and no acceptance mined after it can
    ///         take an offer priced before the verdict. The escrow does not refuse a verdict while an
    ///         offer stands: a party could then keep the verdict away by offering anew every block.
    function voidOffers(uint256 pactId) external nonReentrant {
        PactRecord storage p = pactExists(pactId);
        bool giver = false;
        bool fresh = false;
        uint256 n = ledgers[pactId].stages;
        for (uint256 k = 0; k < n; k++) {
            Stage storage s = stages[pactId][k];
            uint16 bit = verdictBit(pactId, p, k, s);
            if (bit == 0) continue;
            giver = true;
            openWindow(s);
            if (s.voided & bit == 0) {
                s.voided |= bit;
                fresh = true;
            }
        }
        if (!giver) revert NotVerdictGiver(msg.sender, p.status);
        if (!fresh) revert AlreadyVoided(msg.sender);
        Ledger storage l = ledgers[pactId];
        l.epoch += 1;
        emit OffersVoided(pactId, msg.sender, l.epoch);
    }

    /// @notice A party of a pact whose live stages are all funded, started, submitted or disputed
    ///         offers to end it with `sellerShare` basis points of what they still hold (each live
    ///         stage's amount) to the seller and the rest to the buyer, each stake back to its owner;
    ///         released stages are not touched. The offer stands until `expiresAt` (0:
    ///         `VERDICT_MARGIN` before the earliest of the live stages' windows closes, which is also
    ///         the latest allowed), until it is withdrawn, until either party makes another, until
    ///         the pact moves on, or until a verdict is given on it (an oracle's score, a
    ///         `voidOffers`, a stage's change on a pact of several).
    /// @return round The offer's number, which an acceptance names.
    function proposeSettlement(uint256 pactId, uint16 sellerShare, uint64 expiresAt)
        external
        nonReentrant
        returns (uint32 round)
    {
        PactRecord storage p = pactExists(pactId);
        uint64 closesAt = settleWindow(pactId, p);
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
    ///         given since it was made (`OfferVoided`). Every live stage is divided; the pact ends.
    function acceptSettlement(uint256 pactId, uint32 round, uint16 sellerShare) external nonReentrant {
        PactRecord storage p = pactExists(pactId);
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
        for (uint256 k = 0; k < l.stages; k++) {
            Stage storage st = stages[pactId][k];
            if (isLive(st.status)) divide(pactId, p, k, st, sellerShare, false);
        }
        restate(pactId, p);
    }

    // ---------------------------------------------------------------- timeouts

    /// @notice Anyone ends a pact whose clock ran out:
    ///         NEGOTIATING past `acceptBy` -> the creator gets its deposit back;
    ///         FUNDED or IN_PROGRESS past the deadline -> the buyer gets payment and both stakes;
    ///         DISPUTED past the dispute window -> each side gets back what it put in.
    ///         On a pact of several stages, only the first (`claimStageTimeout` for the others).
    function claimTimeout(uint256 pactId) external nonReentrant {
        PactRecord storage p = pactExists(pactId);
        if (p.status != Status.NEGOTIATING) {
            timeout(single(pactId), 0);
        } else {
            if (block.timestamp <= p.acceptBy) revert AcceptWindowOpen(p.acceptBy);
            p.status = Status.REFUNDED;
            emit TimeoutClaimed(pactId, msg.sender, Status.NEGOTIATING);
            endUnaccepted(pactId, p, Ending.EXPIRED);
        }
    }

    /// @notice `claimTimeout` for stage `stage` of an accepted pact: past its deadline while funded
    ///         or started (the buyer gets its amount and both stakes), or past its dispute window.
    function claimStageTimeout(uint256 pactId, uint8 stage) external nonReentrant {
        timeout(pactId, stage);
    }

    // ---------------------------------------------------------------- one stage's acts

    /// @dev `pactId` when the pact has one stage; v3's functions refuse a pact of several.
    function single(uint256 pactId) private view returns (uint256) {
        pactExists(pactId);
        uint256 n = ledgers[pactId].stages;
        if (n != 1) revert UseStage(pactId, n);
        return pactId;
    }

    /// @dev Stage `k` of the pact, which must be in status `want`.
    function stageAt(uint256 pactId, uint256 k, Status want)
        private
        view
        returns (PactRecord storage p, Stage storage s)
    {
        (p, s) = stageOf(pactId, k);
        if (s.status != want) revert WrongStatus(s.status, want);
    }

    function submit(uint256 pactId, uint256 k, bytes32 proofHash) private {
        (PactRecord storage p, Stage storage s) = stageAt(pactId, k, Status.IN_PROGRESS);
        if (msg.sender != p.seller) revert NotSeller();
        if (block.timestamp > s.deadline) revert DeadlinePassed(s.deadline);
        if (proofHash == bytes32(0)) revert ZeroHash();
        s.proofHash = proofHash;
        s.submittedAt = uint64(block.timestamp);
        s.status = Status.PENDING_VERIFY;
        if (ledgers[pactId].stages == 1) emit WorkSubmitted(pactId, msg.sender, proofHash);
        else emit StageSubmitted(pactId, uint8(k), msg.sender, proofHash);
        restate(pactId, p);
    }

    function scoreWork(uint256 pactId, uint256 k, uint8 score, bytes32 proof) private {
        (PactRecord storage p, Stage storage s) = stageAt(pactId, k, Status.PENDING_VERIFY);
        if (!isPactOracle(p, msg.sender)) revert NotPactOracle();
        uint64 closesAt = s.submittedAt + VERIFICATION_PERIOD;
        if (block.timestamp > closesAt) revert VerificationClosed(closesAt);
        if (score > 100) revert ScoreTooHigh(score);
        if (proof == bytes32(0)) revert ZeroHash();
        uint256 key = stageKey(pactId, k);
        if (verifications[key][msg.sender].submitted) revert AlreadyScored(msg.sender);
        verifications[key][msg.sender] = Verification(true, score, uint64(block.timestamp), proof);
        s.scoreCount += 1;
        ledgers[pactId].epoch += 1;
        if (ledgers[pactId].stages == 1) emit VerificationSubmitted(pactId, msg.sender, score, proof);
        else emit StageScored(pactId, uint8(k), msg.sender, score, proof);
    }

    function finalize(uint256 pactId, uint256 k) private {
        (PactRecord storage p, Stage storage s) = stageAt(pactId, k, Status.PENDING_VERIFY);
        uint64 closesAt = s.submittedAt + VERIFICATION_PERIOD;
        if (s.scoreCount < p.oracles.length && block.timestamp <= closesAt) {
            revert VerificationOpen(s.scoreCount, p.oracles.length, closesAt);
        }
        uint256 key = stageKey(pactId, k);
        uint256 weighted = 0;
        for (uint256 i = 0; i < p.oracles.length; i++) {
            weighted += uint256(p.weights[i]) * verifications[key][p.oracles[i]].score;
        }
        uint8 score = uint8(weighted / 100);
        bool passed = score >= p.threshold;
        s.finalScore = score;
        if (passed) {
            s.status = Status.PENDING_APPROVAL;
            s.verifiedAt = uint64(block.timestamp);
        } else {
            s.status = Status.DISPUTED;
            s.disputedAt = uint64(block.timestamp);
        }
        if (ledgers[pactId].stages == 1) emit VerificationFinalized(pactId, score, passed, s.scoreCount);
        else emit StageFinalized(pactId, uint8(k), score, passed, s.scoreCount);
        restate(pactId, p);
    }

    function approve(uint256 pactId, uint256 k) private {
        (PactRecord storage p, Stage storage s) = stageAt(pactId, k, Status.PENDING_APPROVAL);
        if (msg.sender != p.buyer) revert NotBuyer();
        complete(pactId, p, k, s, false);
    }

    function reject(uint256 pactId, uint256 k) private {
        (PactRecord storage p, Stage storage s) = stageAt(pactId, k, Status.PENDING_APPROVAL);
        if (msg.sender != p.buyer) revert NotBuyer();
        uint64 endsAt = s.verifiedAt + p.reviewPeriod;
        if (block.timestamp > endsAt) revert ReviewPeriodOver(endsAt);
        s.status = Status.DISPUTED;
        s.disputedAt = uint64(block.timestamp);
        if (ledgers[pactId].stages == 1) emit WorkRejected(pactId, msg.sender);
        else emit StageRejected(pactId, uint8(k), msg.sender);
        restate(pactId, p);
    }

    function autoApproveAt(uint256 pactId, uint256 k) private {
        (PactRecord storage p, Stage storage s) = stageAt(pactId, k, Status.PENDING_APPROVAL);
        uint64 endsAt = s.verifiedAt + p.reviewPeriod;
        if (block.timestamp <= endsAt) revert ReviewPeriodActive(endsAt);
        complete(pactId, p, k, s, true);
    }

    function dispute(uint256 pactId, uint256 k, address arbitrator) private {
        (PactRecord storage p, Stage storage s) = stageOf(pactId, k);
        if (s.status != Status.FUNDED && s.status != Status.IN_PROGRESS && s.status != Status.PENDING_VERIFY) {
            revert NotDisputable(s.status);
        }
        if (msg.sender != p.buyer && msg.sender != p.seller) revert NotParty();
        if (arbitrator != p.arbitrator) revert ArbitratorMismatch(arbitrator, p.arbitrator);
        openWindow(s);
        s.status = Status.DISPUTED;
        s.disputedAt = uint64(block.timestamp);
        if (ledgers[pactId].stages == 1) emit DisputeRaised(pactId, msg.sender, arbitrator);
        else emit StageDisputed(pactId, uint8(k), msg.sender, arbitrator);
        restate(pactId, p);
    }

    /// @dev The arbitrator's ruling on a disputed stage, within its dispute window.
    function rule(uint256 pactId, uint256 k, uint16 sellerShare) private {
        (PactRecord storage p, Stage storage s) = stageAt(pactId, k, Status.DISPUTED);
        if (msg.sender != p.arbitrator) revert NotArbitrator();
        openWindow(s);
        if (ledgers[pactId].stages == 1) emit DisputeResolved(pactId, msg.sender, sellerShare);
        else emit StageResolved(pactId, uint8(k), msg.sender, sellerShare);
        divide(pactId, p, k, s, sellerShare, true);
        restate(pactId, p);
    }

    function timeout(uint256 pactId, uint256 k) private {
        (PactRecord storage p, Stage storage s) = stageOf(pactId, k);
        Status from = s.status;
        if (from == Status.FUNDED || from == Status.IN_PROGRESS) {
            if (block.timestamp <= s.deadline) revert DeadlineNotReached(s.deadline);
        } else if (from == Status.DISPUTED) {
            uint64 endsAt = s.disputedAt + DISPUTE_PERIOD;
            if (block.timestamp <= endsAt) revert DisputePeriodActive(endsAt);
        } else {
            revert NoTimeoutFrom(from);
        }
        if (ledgers[pactId].stages == 1) emit TimeoutClaimed(pactId, msg.sender, from);
        else emit StageTimedOut(pactId, uint8(k), msg.sender, from);
        uint256 stake = s.amount / STAKE_PARTS;
        if (from == Status.DISPUTED) {
            pay(pactId, p, stake, s.amount + stake);
            closeStage(pactId, k, s, Status.REFUNDED, Ending.ARBITRATOR_SILENT, stake, s.amount + stake);
        } else {
            pay(pactId, p, 0, s.amount + stake + stake);
            closeStage(pactId, k, s, Status.REFUNDED, Ending.REFUNDED_AFTER_FAILURE, 0, s.amount + stake + stake);
        }
        restate(pactId, p);
    }

    // ---------------------------------------------------------------- internals

    /// @dev The bit `msg.sender` voids offers with on stage `k`: the arbitrator's while it is
    ///      disputed, an oracle's that has not scored it while it is being verified; else 0.
    function verdictBit(uint256 pactId, PactRecord storage p, uint256 k, Stage storage s)
        private
        view
        returns (uint16 bit)
    {
        if (s.status == Status.DISPUTED && msg.sender == p.arbitrator) return ARBITRATOR_VOID;
        if (s.status != Status.PENDING_VERIFY || verifications[stageKey(pactId, k)][msg.sender].submitted) return 0;
        for (uint256 i = 0; i < p.oracles.length; i++) {
            if (p.oracles[i] == msg.sender) bit = uint16(1 << i);
        }
    }

    /// @dev The earliest close among the windows of the pact's live stages, each of which must be
    ///      open (`openWindow`); reverts `NotSettleable` when none is live.
    function settleWindow(uint256 pactId, PactRecord storage p) private view returns (uint64 closesAt) {
        uint256 n = ledgers[pactId].stages;
        for (uint256 k = 0; k < n; k++) {
            Stage storage s = stages[pactId][k];
            if (!isLive(s.status)) continue;
            uint64 c = openWindow(s);
            if (closesAt == 0 || c < closesAt) closesAt = c;
        }
        if (closesAt == 0) revert NotSettleable(p.status);
    }

    /// @dev The last second of the window `s`'s status gives the pact's parties (to dispute, settle,
    ///      rule); from the next one the exit that ends the status opens. Reverts once it has
    ///      closed, and for a status without such a window.
    function openWindow(Stage storage s) private view returns (uint64 closesAt) {
        Status st = s.status;
        if (st == Status.FUNDED || st == Status.IN_PROGRESS) {
            closesAt = s.deadline;
            if (block.timestamp > closesAt) revert DeadlinePassed(closesAt);
        } else if (st == Status.PENDING_VERIFY) {
            closesAt = s.submittedAt + VERIFICATION_PERIOD;
            if (block.timestamp > closesAt) revert VerificationClosed(closesAt);
        } else if (st == Status.DISPUTED) {
            closesAt = s.disputedAt + DISPUTE_PERIOD;
            if (block.timestamp > closesAt) revert DisputePeriodOver(closesAt);
        } else {
            revert NotSettleable(st);
        }
    }

    /// @dev Ends stage `k` with `sellerShare` basis points to the seller and the rest to the buyer:
    ///      of its pot (amount and both stakes) for a ruling, of its amount for a settlement (each
    ///      stake back to its owner). Rounding favours the buyer by at most one base unit. The
    ///      status follows the amounts, not the share: COMPLETED when the seller's part is all of
    ///      what was divided, REFUNDED when it is none (so a settlement whose share rounds to nothing
    ///      is a cancel by agreement, not a split), SPLIT between.
    function divide(uint256 pactId, PactRecord storage p, uint256 k, Stage storage s, uint16 sellerShare, bool ruled)
        private
    {
        uint256 stake = s.amount / STAKE_PARTS;
        uint256 pot = s.amount + stake + stake;
        uint256 divided = ruled ? pot : s.amount;
        uint256 part = divided * sellerShare / FULL_SHARE;
        Status status = part == divided ? Status.COMPLETED : (part == 0 ? Status.REFUNDED : Status.SPLIT);
        uint256 toSeller = ruled ? part : part + stake;
        pay(pactId, p, toSeller, pot - toSeller);
        Ending ending = ruled ? Ending.RULED : (part == 0 ? Ending.CANCELLED_BY_AGREEMENT : Ending.SPLIT);
        closeStage(pactId, k, s, status, ending, toSeller, pot - toSeller);
    }

    function complete(uint256 pactId, PactRecord storage p, uint256 k, Stage storage s, bool auto_) private {
        if (ledgers[pactId].stages == 1) emit WorkApproved(pactId, msg.sender, auto_);
        else emit StageApproved(pactId, uint8(k), msg.sender, auto_);
        uint256 stake = s.amount / STAKE_PARTS;
        pay(pactId, p, s.amount + stake, stake);
        closeStage(pactId, k, s, Status.COMPLETED, Ending.COMPLETED, s.amount + stake, stake);
        restate(pactId, p);
    }
}
