// SPDX-License-Identifier: MIT
pragma solidity 0.8.30;

import {ReentrancyGuard} from "./ReentrancyGuard.sol";

/// @dev Each side stakes 1/STAKE_PARTS of every stage's amount (`AgentPact.STAKE_DIVISOR`).
uint256 constant STAKE_PARTS = 10;
/// @dev Most stages a pact may have (`AgentPact.MAX_STAGES`).
uint256 constant STAGE_LIMIT = 8;

/// @title PactStorage
/// @notice What the escrow's three contracts share: its types, events and errors, every state
///         variable in one order, and the helpers more than one of them needs. The escrow is one
///         address and one storage: `AgentPact` (the core: money in and out) hands every call it
///         does not implement to `AgentPactLifecycle` (every act after creation), which hands what
///         it does not implement to `AgentPactViews` (the struct views), each by DELEGATECALL, so
///         the modules run on the core's storage and their events come from the core's address.
///         The core creates both modules in its constructor and keeps their addresses as
///         immutables: no proxy, no admin, no upgrade. None of the three declares a state variable
///         of its own (`contracts/build` fails the build when their storage layouts differ).
abstract contract PactStorage is ReentrancyGuard {
    /// @notice Pact status; the numbers are part of the public interface.
    enum Status {
        NEGOTIATING, // 0: open for the counterparty to accept
        FUNDED, // 1: both sides deposited
        IN_PROGRESS, // 2: seller started
        PENDING_VERIFY, // 3: work submitted, oracles scoring
        COMPLETED, // 4: seller paid
        DISPUTED, // 5: waiting for the arbitrator
        REFUNDED, // 6: buyer (or the creator of an unaccepted pact) refunded
        PENDING_APPROVAL, // 7: verification passed, buyer reviewing
        SPLIT // 8: the payment divided between the sides, by a settlement or a ruling
    }

    /// @notice How a pact ended, which its status alone does not say (a cancel and a lost dispute
    ///         both end REFUNDED); the numbers are part of the public interface. The status says
    ///         where the money went, the ending who decided it.
    enum Ending {
        LIVE, // 0: not ended
        COMPLETED, // 1: the buyer approved, or its review period lapsed
        REFUNDED_AFTER_FAILURE, // 2: the deadline passed with nothing delivered
        CANCELLED_BY_AGREEMENT, // 3: a settlement giving the seller none of the payment
        SPLIT, // 4: a settlement giving the seller some or all of the payment
        RULED, // 5: the arbitrator's ruling, at any share
        ARBITRATOR_SILENT, // 6: the dispute window lapsed without a ruling
        WITHDRAWN, // 7: the creator cancelled it before anyone accepted
        EXPIRED, // 8: nobody accepted it in time
        MIXED // 9: a pact whose stages ended in different ways (never a stage's ending)
    }

    /// @notice Which side created the pact.
    enum Initiator {
        BUYER,
        SELLER
    }

    /// @notice The terms a creator proposes; the accepter agrees to all of them.
    struct Terms {
        Initiator initiator;
        bytes32 specHash;
        string specUri;
        uint64 deadline;
        /// Last second the pact can be accepted; 0 means `deadline - MIN_WORK_WINDOW`.
        uint64 acceptBy;
        uint64 reviewPeriod;
        uint8 threshold;
        address arbitrator;
        /// The only address that may accept; zero lets anyone (but the conflicted) accept.
        address counterparty;
        /// The currency of payment and stakes: zero for native ETH, else an allowed token.
        address currency;
        /// In base units of `currency`.
        uint256 payment;
        address[] oracles;
        uint8[] weights;
    }

    /// @notice One stage of a pact's work, as the creator proposes it: its part of the payment and
    ///         the last second its work may be delivered.
    struct StageTerms {
        uint256 amount;
        uint64 deadline;
    }

    /// @notice A pact's full state as escrow v3 answered it; the lifecycle fields (`status` aside,
    ///         which is the pact's) are those of its current stage: its lowest live one, or its last
    ///         once none is live. A one-stage pact's are that stage's, exactly v3's.
    struct Pact {
        address buyer;
        address seller;
        address arbitrator;
        address counterparty;
        Initiator initiator;
        Status status;
        uint8 threshold;
        uint8 scoreCount;
        uint8 finalScore;
        uint64 deadline;
        uint64 acceptBy;
        uint64 reviewPeriod;
        uint64 submittedAt;
        uint64 verifiedAt;
        uint64 disputedAt;
        address currency;
        uint256 payment;
        uint256 buyerStake;
        uint256 sellerStake;
        bytes32 specHash;
        bytes32 proofHash;
        string specUri;
        address[] oracles;
        uint8[] weights;
    }

    /// @dev What the escrow keeps of a pact besides its stages.
    struct PactRecord {
        address buyer;
        address seller;
        address arbitrator;
        address counterparty;
        Initiator initiator;
        /// The status of its lowest live stage; once none is live, COMPLETED when every stage
        /// completed, REFUNDED when every stage was refunded, SPLIT otherwise.
        Status status;
        uint8 threshold;
        uint64 deadline;
        uint64 acceptBy;
        uint64 reviewPeriod;
        address currency;
        /// The sum of the stages' amounts.
        uint256 payment;
        /// The sum of the stages' stakes, per side (zero for the side that has not joined).
        uint256 buyerStake;
        uint256 sellerStake;
        bytes32 specHash;
        string specUri;
        address[] oracles;
        uint8[] weights;
    }

    /// @notice One stage of a pact: a v3 pact in miniature, with its own amount, deadline, status,
    ///         clocks, scores and ending. Each side's stake on it is `amount / STAKE_DIVISOR`.
    struct Stage {
        uint128 amount;
        uint64 deadline;
        uint64 submittedAt;
        uint64 verifiedAt;
        uint64 disputedAt;
        Status status;
        uint8 scoreCount;
        uint8 finalScore;
        /// How it ended (LIVE until it does).
        Ending ending;
        /// Who has used `voidOffers` on it (bit i: the pact's oracle i; bit 15: the arbitrator).
        uint16 voided;
        bytes32 proofHash;
    }

    /// @notice The standing offer to end a pact with the payment divided (at most one per pact).
    struct Settlement {
        /// The party that made it; zero when no offer stands (none made, withdrawn or accepted).
        address by;
        /// The pact's status when it was made: the offer lapses when the pact moves on.
        Status status;
        /// Basis points of the payment to the seller (the buyer gets the rest); stakes go back.
        uint16 sellerShare;
        /// Counts every offer made on the pact: an acceptance names the one it accepts.
        uint32 round;
        /// The last second it may be accepted (never after its status's window closes).
        uint64 expiresAt;
    }

    /// @notice A pact's stage count, what voids its offers, and how it ended. Every verdict on it
    ///         (an oracle's score, a `voidOffers`, and on a pact of several stages every change of a
    ///         stage's status) adds one to `epoch`; an offer records the epoch it was made at and can
    ///         be accepted only while that is still the epoch: it was priced on what was known then.
    ///         (A one-stage pact's status change already lapses its offer: `SettlementStale`.)
    struct Ledger {
        /// How many stages the pact has (1 to `MAX_STAGES`).
        uint8 stages;
        /// Verdicts given on the pact so far.
        uint32 epoch;
        /// The epoch the last offer was made at.
        uint32 offerEpoch;
        /// How the pact ended (LIVE until it does).
        Ending ending;
    }

    /// @notice One oracle's verdict on one pact.
    struct Verification {
        bool submitted;
        uint8 score;
        uint64 submittedAt;
        bytes32 proof;
    }

    /// @notice The money the escrow keeps account of, per currency (zero: native ETH).
    struct Book {
        /// Base units credited to each account and not yet withdrawn: `credits[currency][account]`.
        mapping(address => mapping(address => uint256)) credits;
        /// Base units the escrow owes: locked in pacts plus unwithdrawn credits.
        mapping(address => uint256) owed;
        /// The currencies pacts may be paid in, fixed at construction.
        mapping(address => bool) allowed;
    }

    // Each part of the escrow writes some of these and only reads others (the views module writes
    // none): seen one contract at a time they look never written (docs/contracts.md §Slither).
    // slither-disable-start uninitialized-state
    Book internal book;
    /// @dev Number of pacts created; ids run from 0 to `nextPactId - 1`.
    uint256 internal nextPactId;
    mapping(uint256 => PactRecord) internal pacts;
    /// @dev `stages[pactId][k]`: stage k of the pact.
    mapping(uint256 => mapping(uint256 => Stage)) internal stages;
    /// @dev Keyed by `stageKey(pactId, stage)`: stage 0's key is the pact id, as in v3.
    mapping(uint256 => mapping(address => Verification)) internal verifications;
    mapping(uint256 => Settlement) internal settlements;
    mapping(uint256 => Ledger) internal ledgers;
    // slither-disable-end uninitialized-state

    /// @notice A pact was proposed; carries every term. `deposit` is what the creator paid in.
    ///         `counterparty` is the only address that may accept (zero: anyone); `acceptBy` the last
    ///         second it may. Amounts are in base units of `currency`.
    event PactCreated(
        uint256 indexed pactId,
        address indexed creator,
        address indexed counterparty,
        Initiator initiator,
        address arbitrator,
        bytes32 specHash,
        string specUri,
        uint64 deadline,
        uint64 acceptBy,
        uint64 reviewPeriod,
        uint8 threshold,
        address currency,
        uint256 payment,
        uint256 stake,
        uint256 deposit,
        address[] oracles,
        uint8[] weights
    );
    /// @notice A pact of several stages was proposed: right after its `PactCreated`, each stage's
    ///         amount and deadline (a one-stage pact emits none).
    event PactStaged(uint256 indexed pactId, StageTerms[] stages);
    /// @notice The counterparty joined; status FUNDED.
    event PactAccepted(
        uint256 indexed pactId, address indexed accepter, address buyer, address seller, uint256 deposit
    );
    /// @notice The creator withdrew an unaccepted pact; status REFUNDED.
    event PactCancelled(uint256 indexed pactId, address indexed creator);
    /// @notice The seller started; status IN_PROGRESS.
    event WorkStarted(uint256 indexed pactId, address indexed seller);
    /// @notice The seller delivered; status PENDING_VERIFY.
    event WorkSubmitted(uint256 indexed pactId, address indexed seller, bytes32 proofHash);
    /// @notice An oracle scored the work.
    event VerificationSubmitted(uint256 indexed pactId, address indexed oracle, uint8 score, bytes32 proof);
    /// @notice Scores were combined; status PENDING_APPROVAL when `passed`, else DISPUTED.
    event VerificationFinalized(uint256 indexed pactId, uint8 score, bool passed, uint8 scoreCount);
    /// @notice The buyer approved (or, with `auto_`, the review period lapsed); status COMPLETED.
    event WorkApproved(uint256 indexed pactId, address indexed by, bool auto_);
    /// @notice The buyer rejected verified work; status DISPUTED.
    event WorkRejected(uint256 indexed pactId, address indexed buyer);
    /// @notice A party raised a dispute; status DISPUTED.
    event DisputeRaised(uint256 indexed pactId, address indexed by, address arbitrator);
    /// @notice The arbitrator ruled `sellerShare` basis points of the pot to the seller; status
    ///         COMPLETED when that is all of it, REFUNDED when it rounds to nothing, SPLIT between.
    event DisputeResolved(uint256 indexed pactId, address indexed arbitrator, uint16 sellerShare);
    /// @notice A party offered to end the pact with `sellerShare` basis points of the payment to the
    ///         seller, until `expiresAt` and while the pact stays in `status`; it replaces any offer
    ///         that stood.
    event SettlementProposed(
        uint256 indexed pactId, address indexed by, Status status, uint32 round, uint16 sellerShare, uint64 expiresAt
    );
    /// @notice The party that made offer `round` took it back.
    event SettlementWithdrawn(uint256 indexed pactId, address indexed by, uint32 round);
    /// @notice `by`, about to give its verdict (the arbitrator, or an oracle that has not scored),
    ///         voided every offer standing on the pact; `epoch` is the pact's verdict count now.
    event OffersVoided(uint256 indexed pactId, address indexed by, uint32 epoch);
    /// @notice The other party accepted offer `round`; status COMPLETED when the seller's part is
    ///         all of the payment, REFUNDED when it rounds to nothing, SPLIT between.
    event SettlementAccepted(uint256 indexed pactId, address indexed by, uint32 round, uint16 sellerShare);
    /// @notice A deadline or window lapsed and `caller` ended the pact; status REFUNDED.
    ///         `from` is the status the pact had.
    event TimeoutClaimed(uint256 indexed pactId, address indexed caller, Status from);
    /// @notice Stage `stage` of a pact of several stages: the seller delivered it (`WorkSubmitted`'s kin).
    event StageSubmitted(uint256 indexed pactId, uint8 indexed stage, address indexed seller, bytes32 proofHash);
    /// @notice An oracle scored the stage's work (`VerificationSubmitted`'s kin).
    event StageScored(uint256 indexed pactId, uint8 indexed stage, address indexed oracle, uint8 score, bytes32 proof);
    /// @notice The stage's scores were combined (`VerificationFinalized`'s kin).
    event StageFinalized(uint256 indexed pactId, uint8 indexed stage, uint8 score, bool passed, uint8 scoreCount);
    /// @notice The buyer approved the stage, or with `auto_` its review lapsed (`WorkApproved`'s kin).
    event StageApproved(uint256 indexed pactId, uint8 indexed stage, address indexed by, bool auto_);
    /// @notice The buyer rejected the stage's verified work (`WorkRejected`'s kin).
    event StageRejected(uint256 indexed pactId, uint8 indexed stage, address indexed buyer);
    /// @notice A party sent the stage to the arbitrator (`DisputeRaised`'s kin).
    event StageDisputed(uint256 indexed pactId, uint8 indexed stage, address indexed by, address arbitrator);
    /// @notice The arbitrator ruled on the stage (`DisputeResolved`'s kin).
    event StageResolved(uint256 indexed pactId, uint8 indexed stage, address indexed arbitrator, uint16 sellerShare);
    /// @notice A window of the stage lapsed and `caller` ended it (`TimeoutClaimed`'s kin).
    event StageTimedOut(uint256 indexed pactId, uint8 indexed stage, address indexed caller, Status from);
    /// @notice Stage `stage` of a pact of several stages ended, how and in which status, and what
    ///         of its amount and stakes went to each side; after its payouts.
    event StageEnded(
        uint256 indexed pactId, uint8 indexed stage, Ending ending, Status status, uint256 toSeller, uint256 toBuyer
    );
    /// @notice The pact ended, how (`ending`) and in which status; the last event of its last
    ///         transaction, after its payouts.
    event PactEnded(uint256 indexed pactId, Ending ending, Status status);
    /// @notice `amount` base units of `currency` from pact `pactId` were credited to `to`.
    event Payout(uint256 indexed pactId, address indexed to, address currency, uint256 amount);

    error PactNotFound(uint256 pactId);
    error WrongStatus(Status have, Status want);
    error NoTimeoutFrom(Status have);
    error NotDisputable(Status have);
    error NotBuyer();
    error NotSeller();
    error NotParty();
    error NotCreator();
    error NotArbitrator();
    error NotPactOracle();
    error PaymentTooSmall(uint256 payment, uint256 minimum);
    error PaymentTooLarge(uint256 payment, uint256 maximum);
    error DeadlineInPast(uint64 deadline, uint64 now_);
    error DeadlineOutOfRange(uint64 deadline, uint64 earliest, uint64 latest);
    error AcceptByOutOfRange(uint64 acceptBy, uint64 earliest, uint64 latest);
    error ReviewPeriodTooLong(uint64 reviewPeriod, uint64 maximum);
    error ReviewPeriodTooShort(uint64 reviewPeriod, uint64 minimum);
    error ThresholdTooLow(uint8 threshold, uint8 minimum);
    error ShareTooLarge(uint16 share, uint16 maximum);
    error NotSettleable(Status have);
    error SettlementExpiryOutOfRange(uint64 expiresAt, uint64 earliest, uint64 latest);
    error NoSettlement(uint256 pactId);
    error NotProposer();
    error OwnSettlement();
    error SettlementReplaced(uint32 round, uint16 sellerShare);
    error SettlementStale(Status offeredIn, Status have);
    error SettlementExpired(uint64 expiresAt);
    error OfferVoided(uint32 offeredAt, uint32 epoch);
    error NotVerdictGiver(address who, Status have);
    error AlreadyVoided(address who);
    error SpecUriTooLong(uint256 length, uint256 maximum);
    error DeadlinePassed(uint64 deadline);
    error DeadlineNotReached(uint64 deadline);
    error AcceptWindowClosed(uint64 acceptBy);
    error AcceptWindowOpen(uint64 acceptBy);
    error NotCounterparty(address counterparty);
    error ReviewPeriodOver(uint64 endedAt);
    error VerificationClosed(uint64 closedAt);
    error OracleCountOutOfRange(uint256 count, uint256 minimum, uint256 maximum);
    error LengthMismatch(uint256 oracles, uint256 weights);
    error WeightsSum(uint256 sum);
    error ZeroWeight(address oracle);
    error DuplicateOracle(address oracle);
    error OracleNotActive(address oracle);
    error ThresholdTooHigh(uint8 threshold);
    error InvalidArbitrator(address arbitrator);
    error ConflictOfInterest(address who);
    error ArbitratorMismatch(address given, address agreed);
    error ZeroHash();
    error ScoreTooHigh(uint8 score);
    error AlreadyScored(address oracle);
    error VerificationOpen(uint8 scored, uint256 total, uint64 closesAt);
    error ReviewPeriodActive(uint64 endsAt);
    error DisputePeriodActive(uint64 endsAt);
    error DisputePeriodOver(uint64 endedAt);
    error StageCountOutOfRange(uint256 count, uint256 minimum, uint256 maximum);
    error StageAmountsSum(uint256 sum, uint256 payment);
    error StageDeadlineOutOfOrder(uint256 stage, uint64 deadline, uint64 previous);
    error LastStageDeadline(uint64 deadline, uint64 pactDeadline);
    error NoSuchStage(uint256 pactId, uint256 stage, uint256 stages);
    error UseStage(uint256 pactId, uint256 stages);

    /// @dev Hands the current call to `module`, which runs it on this contract's storage, and
    ///      returns what it returned or reverts with what it reverted with, custom errors unchanged.
    ///      Never returns to the caller's code.
    function forward(address module) internal {
        assembly ("memory-safe") {
            let ptr := mload(0x40)
            calldatacopy(ptr, 0, calldatasize())
            let ok := delegatecall(gas(), module, ptr, calldatasize(), 0, 0)
            returndatacopy(ptr, 0, returndatasize())
            if iszero(ok) { revert(ptr, returndatasize()) }
            return(ptr, returndatasize())
        }
    }

    /// @dev Credits `amount` of the pact's currency to `to`, to be pulled with `withdraw`.
    function credit(uint256 pactId, address to, uint256 amount) internal {
        address currency = pacts[pactId].currency;
        book.credits[currency][to] += amount;
        emit Payout(pactId, to, currency, amount);
    }

    /// @dev Credits what a stage's end gives each side, the seller's part first.
    function pay(uint256 pactId, PactRecord storage p, uint256 toSeller, uint256 toBuyer) internal {
        if (toSeller > 0) credit(pactId, p.seller, toSeller);
        if (toBuyer > 0) credit(pactId, p.buyer, toBuyer);
    }

    /// @dev Records how stage `k` ended, after its payouts, and on a pact of several stages says so.
    ///      The caller then calls `restate`.
    function closeStage(
        uint256 pactId,
        uint256 k,
        Stage storage s,
        Status status,
        Ending ending,
        uint256 toSeller,
        uint256 toBuyer
    ) internal {
        s.status = status;
        s.ending = ending;
        if (ledgers[pactId].stages > 1) emit StageEnded(pactId, uint8(k), ending, status, toSeller, toBuyer);
    }

    /// @dev Ends an unaccepted pact: its creator gets its deposit back (one credit), every stage
    ///      ends REFUNDED with `ending` (WITHDRAWN or EXPIRED). The caller has set the pact's status.
    function endUnaccepted(uint256 pactId, PactRecord storage p, Ending ending) internal {
        bool byBuyer = p.initiator == Initiator.BUYER;
        credit(pactId, creatorOf(p), byBuyer ? p.payment + p.buyerStake : p.sellerStake);
        uint256 n = ledgers[pactId].stages;
        for (uint256 k = 0; k < n; k++) {
            Stage storage s = stages[pactId][k];
            uint256 stake = s.amount / STAKE_PARTS;
            closeStage(pactId, k, s, Status.REFUNDED, ending, byBuyer ? 0 : stake, byBuyer ? s.amount + stake : 0);
        }
        restate(pactId, p);
    }

    /// @dev After a stage of `p` changed status: the pact takes its lowest live stage's status, and
    ///      once no stage is live it ends (the status by its stages' statuses, the ending their
    ///      common one or MIXED, `PactEnded` last). On a pact of several stages each call is a
    ///      verdict that voids standing offers (one stage's change does not move the pact's status).
    function restate(uint256 pactId, PactRecord storage p) internal {
        Ledger storage l = ledgers[pactId];
        uint256 n = l.stages;
        if (n > 1) l.epoch += 1;
        bool completed = true;
        bool refunded = true;
        Ending common = stages[pactId][0].ending;
        for (uint256 k = 0; k < n; k++) {
            Stage storage s = stages[pactId][k];
            Status st = s.status;
            if (isLive(st)) {
                p.status = st;
                return;
            }
            completed = completed && st == Status.COMPLETED;
            refunded = refunded && st == Status.REFUNDED;
            if (s.ending != common) common = Ending.MIXED;
        }
        p.status = completed ? Status.COMPLETED : (refunded ? Status.REFUNDED : Status.SPLIT);
        l.ending = common;
        emit PactEnded(pactId, common, p.status);
    }

    /// @dev A status a stage (or pact) leaves again: every one but COMPLETED, REFUNDED and SPLIT.
    function isLive(Status s) internal pure returns (bool) {
        return s != Status.COMPLETED && s != Status.REFUNDED && s != Status.SPLIT;
    }

    /// @dev The key of a stage's verifications: the pact id for stage 0 (as in v3), the stage in
    ///      the high half for the others (pact ids stay below 2^128).
    function stageKey(uint256 pactId, uint256 k) internal pure returns (uint256) {
        return pactId | (k << 128);
    }

    function creatorOf(PactRecord storage p) internal view returns (address) {
        return p.initiator == Initiator.BUYER ? p.buyer : p.seller;
    }

    function isPactOracle(PactRecord storage p, address who) internal view returns (bool) {
        for (uint256 i = 0; i < p.oracles.length; i++) {
            if (p.oracles[i] == who) return true;
        }
        return false;
    }

    function pactExists(uint256 pactId) internal view returns (PactRecord storage p) {
        if (pactId >= nextPactId) revert PactNotFound(pactId);
        p = pacts[pactId];
    }

    function pactAt(uint256 pactId, Status want) internal view returns (PactRecord storage p) {
        p = pactExists(pactId);
        if (p.status != want) revert WrongStatus(p.status, want);
    }

    /// @dev Stage `k` of the pact, which must exist.
    function stageOf(uint256 pactId, uint256 k) internal view returns (PactRecord storage p, Stage storage s) {
        p = pactExists(pactId);
        uint256 n = ledgers[pactId].stages;
        if (k >= n) revert NoSuchStage(pactId, k, n);
        s = stages[pactId][k];
    }
}
